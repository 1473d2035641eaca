import type { ResourceKind } from '../shared/catalog/types';
import { inclusive, name } from './fields';
import { int, list, registerRule, str } from './rule';

/** List targets: a data list of values (user ids, say) the request's `_abdk` value of the list's key must (not) be on. */

export const dataListKind: ResourceKind = {
  kind: 'data_list',
  service: 'inventory',
  title: 'data list',
  fields: {
    label: name,
    // The values a list target matches against the request's `_abdk` value of `key` (e.g. user ids).
    key: { type: 'string', minLength: 1, maxLength: 32, default: 'list' },
    values: { type: 'array', default: [], maxLength: 50000, maxBytes: 900000, items: { type: 'string', minLength: 1, maxLength: 255 } },
  },
  views: { v2: { object: 'data_list', path: '/v2/data-lists' } },
};

export const listTargetKind: ResourceKind = {
  kind: 'list_target',
  service: 'inventory',
  title: 'list target',
  fields: {
    label: name,
    inclusive,
    data_list: { type: 'ref', ref: 'data_list', nullable: true, default: null, onRefDelete: 'nullify' },
  },
  views: { v2: { object: 'list_target', path: '/v2/list-targets' } },
};

export interface ListTarget {
  inclusive: boolean;
  key: string;
  values: ReadonlySet<string>;
}

registerRule<ListTarget>({
  name: 'list_target',
  kinds: [dataListKind, listTargetKind],
  project: {
    list_target: (a) => ({ listTarget: { dataList: int(a.data_list), inclusive: a.inclusive !== false } }),
    data_list: (a) => ({ dataList: { key: str(a.key) || 'list', values: list(a.values).map(str) } }),
  },
  resolve: (p) => {
    const lt = p.placement.listTarget ? p.get('list_target', p.placement.listTarget)?.listTarget : undefined;
    const listEntity = lt?.dataList ? p.get('data_list', lt.dataList) : undefined;
    if (!lt || !listEntity?.dataList) return undefined;
    const values = p.parsed(listEntity, () => new Set(listEntity.dataList!.values) as ReadonlySet<string>);
    return { inclusive: lt.inclusive, key: listEntity.dataList.key, values };
  },
  evaluate: (t, r) => {
    const value = r.data[t.key];
    const listed = value !== undefined && t.values.has(value);
    if (listed === t.inclusive) return { ok: true, preferred: false };
    return { ok: false, rule: 'list_target', detail: value === undefined ? `no '${t.key}' data key given` : `'${t.key}' ${listed ? 'is' : 'is not'} on the list` };
  },
});
