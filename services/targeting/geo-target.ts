import type { ResourceKind } from '../shared/catalog/types';
import type { GeoLocation } from '../serving/targeting/geo';
import { countryCode, inclusive, name } from './fields';
import { list, obj, registerRule, str } from './rule';

/** Geo targets: continents, countries, regions and cities a placement serves in (or, not inclusive, not in). */

export const CONTINENTS = ['Africa', 'Antarctica', 'Asia', 'Europe', 'North America', 'Oceania', 'South America'] as const;

export const geoTargetKind: ResourceKind = {
  kind: 'geo_target',
  service: 'inventory',
  title: 'geo target',
  fields: {
    name,
    areas: {
      type: 'array',
      required: true,
      minLength: 1,
      maxLength: 500,
      maxBytes: 65536,
      items: {
        type: 'object',
        closed: true,
        properties: {
          continent: { type: 'string', enum: CONTINENTS },
          country: countryCode,
          region: { type: 'string', maxLength: 255 },
          city: { type: 'string', maxLength: 255 },
        },
      },
    },
    // Extra distance around a targeted city (reference: only meaningful with a city).
    range: { type: 'integer', min: 0, max: 1000, default: 0 },
    unit: { type: 'string', enum: ['miles', 'kilometers'], default: 'kilometers' },
    inclusive,
  },
  views: { v2: { object: 'geo_target', path: '/v2/geo-targets' } },
};

export interface GeoArea {
  continent?: string;
  country?: string;
  region?: string;
  city?: string;
}

export interface GeoTarget {
  areas: GeoArea[];
  inclusive: boolean;
}

registerRule<GeoTarget>({
  name: 'geo_target',
  kinds: [geoTargetKind],
  project: {
    geo_target: (a) => ({
      geoTarget: {
        areas: list(a.areas).map((x) => ({ continent: str(obj(x).continent), country: str(obj(x).country), region: str(obj(x).region), city: str(obj(x).city) })),
        inclusive: a.inclusive !== false,
      },
    }),
  },
  needsGeo: (e) => !!e.geoTarget,
  // A target that names something no longer there (deleted meanwhile) is lifted, as inventory does.
  resolve: (p) => {
    // VAST placements have no geo target of their own: their schedule's applies.
    const id = p.placement.geoTarget || p.schedule?.geoTarget || 0;
    const geo = id ? p.get('geo_target', id)?.geoTarget : undefined;
    return geo ? { areas: geo.areas, inclusive: geo.inclusive } : undefined;
  },
  evaluate: (t, r) => {
    if (geoTargetAdmits(t, r.geo)) return { ok: true, preferred: false };
    return { ok: false, rule: 'geo_target', detail: r.geo ? `request located in ${[r.geo.city, r.geo.region, r.geo.country].filter(Boolean).join(', ')}` : 'request location unknown' };
  },
});

/** Whether a location is where a geo target serves (in its areas, or outside them when not inclusive). */
export function geoTargetAdmits(t: GeoTarget, geo: GeoLocation | undefined): boolean {
  const inArea = !!geo && t.areas.some((a) => areaContains(a, geo));
  return inArea === t.inclusive;
}

function areaContains(a: GeoArea, g: GeoLocation): boolean {
  if (a.continent && continentOf(g) !== a.continent) return false;
  if (a.country && a.country !== g.country) return false;
  if (a.region && a.region.toLowerCase() !== g.region.toLowerCase()) return false;
  if (a.city && a.city.toLowerCase() !== g.city.toLowerCase()) return false;
  return !!(a.continent || a.country);
}

// South American zones under America/; every other America/ zone is North America (the Caribbean and
// Central America included, as in the usual seven-continent model).
const SOUTH_AMERICA = /^America\/(Argentina|Sao_Paulo|Bogota|Lima|Santiago|Caracas|La_Paz|Asuncion|Montevideo|Guayaquil|Cayenne|Paramaribo|Guyana|Belem|Fortaleza|Recife|Manaus|Porto_Velho|Boa_Vista|Rio_Branco|Cuiaba|Campo_Grande|Araguaina|Maceio|Santarem|Noronha|Punta_Arenas|Eirunepe|Bahia)/;

/** The continent of a location, from its time zone (the city database carries no continent). */
export function continentOf(g: GeoLocation): string | undefined {
  const tz = g.timezone;
  if (tz.startsWith('America/')) return SOUTH_AMERICA.test(tz) ? 'South America' : 'North America';
  const area = tz.split('/')[0];
  return (
    { Europe: 'Europe', Asia: 'Asia', Africa: 'Africa', Australia: 'Oceania', Pacific: 'Oceania', Antarctica: 'Antarctica', Atlantic: undefined, Indian: undefined } as Record<string, string | undefined>
  )[area];
}
