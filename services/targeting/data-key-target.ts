import type { ResourceKind } from '../shared/catalog/types';
import { dataKeyLogicMatches, parseDataKeyLogic, type DataKeyLogic } from '../shared/targeting-rules';
import { name } from './fields';
import { registerRule, str } from './rule';

/** Data-key targets: logic over the request's `_abdk` data keys, which the account declares first. */

export const DATA_KEY_TYPES = ['STRING', 'NUMBER', 'DATE', 'DATETIME', 'TIME'] as const;

export const dataKeyKind: ResourceKind = {
  kind: 'data_key',
  service: 'inventory',
  title: 'data key',
  fields: {
    name: { type: 'string', required: true, minLength: 1, maxLength: 32, pattern: '^[A-Za-z_][A-Za-z0-9_]*$', patternHint: 'letters, digits and underscores, not starting with a digit' },
    type: { type: 'string', required: true, enum: DATA_KEY_TYPES },
  },
  views: { v2: { object: 'data_key', path: '/v2/data-keys' } },
};

export const dataKeyTargetKind: ResourceKind = {
  kind: 'data_key_target',
  service: 'inventory',
  title: 'data key target',
  fields: {
    name,
    // JSON logic over data keys, e.g. ["OR", {"age": {">=": "18"}}, {"plan": {"=": "gold"}}].
    target: { type: 'string', required: true, minLength: 2, maxLength: 16384 },
  },
  views: { v2: { object: 'data_key_target', path: '/v2/data-key-targets' } },
};

/** Logic that no longer parses matches nothing rather than everything. */
const MATCHES_NOTHING: DataKeyLogic = { all: true, terms: [{ key: '\u0000', op: '=', value: '' }] };

registerRule<DataKeyLogic>({
  name: 'data_key_target',
  kinds: [dataKeyKind, dataKeyTargetKind],
  project: {
    data_key_target: (a) => ({ dataKeyTarget: { target: str(a.target) } }),
  },
  resolve: (p) => {
    const e = p.placement.dataKeyTarget ? p.get('data_key_target', p.placement.dataKeyTarget) : undefined;
    if (!e?.dataKeyTarget) return undefined;
    const logic = p.parsed(e, () => {
      const parsed = parseDataKeyLogic(e.dataKeyTarget!.target);
      return 'error' in parsed ? null : parsed.logic;
    });
    return logic ?? MATCHES_NOTHING;
  },
  evaluate: (t, r) => (dataKeyLogicMatches(t, r.data) ? { ok: true, preferred: false } : { ok: false, rule: 'data_key_target', detail: 'the data keys given do not satisfy the target' }),
});
