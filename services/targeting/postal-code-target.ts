import type { ResourceKind } from '../shared/catalog/types';
import { countryCode, inclusive, name } from './fields';
import { list, obj, registerRule, str } from './rule';

/** Postal code targets: the postal codes (per country) a placement serves in, from `_abdk` data or the request's place. */

export const postalCodeTargetKind: ResourceKind = {
  kind: 'postal_code_target',
  service: 'inventory',
  title: 'postal code target',
  fields: {
    label: name,
    inclusive,
    locations: {
      type: 'array',
      required: true,
      minLength: 1,
      maxLength: 250,
      maxBytes: 262144,
      items: {
        type: 'object',
        closed: true,
        properties: {
          country: { ...countryCode, required: true },
          postal_codes: { type: 'array', required: true, minLength: 1, maxLength: 10000, items: { type: 'string', minLength: 1, maxLength: 16 } },
        },
      },
    },
  },
  views: { v2: { object: 'postal_code_target', path: '/v2/postal-code-targets' } },
};

export interface PostalTarget {
  inclusive: boolean;
  locations: { country: string; postal_codes: string[] }[];
}

const normalise = (code: string) => code.replace(/[\s-]/g, '').toUpperCase();

registerRule<PostalTarget>({
  name: 'postal_code_target',
  kinds: [postalCodeTargetKind],
  project: {
    postal_code_target: (a) => ({
      postalCodeTarget: {
        locations: list(a.locations).map((l) => ({ country: str(obj(l).country), postalCodes: list(obj(l).postal_codes).map(str) })),
        inclusive: a.inclusive !== false,
      },
    }),
  },
  needsGeo: (e) => !!e.postalCodeTarget,
  resolve: (p) => {
    const postal = p.placement.postalCodeTarget ? p.get('postal_code_target', p.placement.postalCodeTarget)?.postalCodeTarget : undefined;
    return postal ? { inclusive: postal.inclusive, locations: postal.locations.map((l) => ({ country: l.country, postal_codes: l.postalCodes })) } : undefined;
  },
  evaluate: (t, r) => {
    const code = normalise(r.data.postal_code ?? r.data.zip ?? r.geo?.postcode ?? '');
    const country = (r.data.country ?? r.geo?.country ?? '').toUpperCase();
    const listed = !!code && t.locations.some((l) => (!country || l.country === country) && l.postal_codes.some((p) => normalise(p) === code));
    return listed === t.inclusive ? { ok: true, preferred: false } : { ok: false, rule: 'postal_code_target', detail: code ? `postal code ${code}` : 'postal code unknown' };
  },
});
