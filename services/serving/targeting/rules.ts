/**
 * The targeting verdict for one candidate ad and one request: every rule that the candidate's
 * placement names (geo, day-parting, platform, keywords, postal codes, list and data-key targets,
 * frequency cap) either lets the request through or excludes the candidate, naming the rule, which is
 * what the decision-debug answer shows a publisher. Keyword "preferred" matches raise the candidate's
 * priority instead of filtering.
 */
import { dataKeyLogicMatches, dayPartingAllows, type DataKeyLogic } from '../../shared/targeting-rules';
import { capAllows, type FreqEntry } from './frequency';
import type { GeoLocation } from './geo';
import { matchKeywords, type KeywordRule } from './keywords';
import { platformAllows, type Platform, type PlatformTarget } from './platform';

export interface GeoArea {
  continent?: string;
  country?: string;
  region?: string;
  city?: string;
}

export interface Targets {
  placement: number;
  geo?: { areas: GeoArea[]; inclusive: boolean } | null;
  dayParting?: { ranges: Record<string, string[] | undefined>; use_member_timezone: boolean; timezone: string | null } | null;
  platform?: PlatformTarget | null;
  keywords?: KeywordRule;
  keywordsMatch?: 'required' | 'preferred' | 'filtered';
  postal?: { inclusive: boolean; locations: { country: string; postal_codes: string[] }[] } | null;
  list?: { inclusive: boolean; key: string; values: ReadonlySet<string> } | null;
  dataKey?: DataKeyLogic | null;
  frequencyLimit?: number | null;
}

export interface RequestFacts {
  now: Date;
  geo?: GeoLocation;
  platform: Platform;
  screenWidth?: number;
  keywords: readonly string[];
  /** `_abdk` / `_abdk_json` key-value pairs. */
  data: Readonly<Record<string, string>>;
  frequency: Map<number, FreqEntry>;
  /** The account's time zone, for day-parting that uses it. */
  accountTimezone: string;
}

export type Verdict = { ok: true; preferred: boolean } | { ok: false; rule: string; detail: string };

/** Which targets need a GeoIP lookup (the database is only opened when some candidate does). */
export function needsGeo(t: Targets): boolean {
  return !!t.geo || !!t.postal || (!!t.dayParting && !t.dayParting.use_member_timezone);
}

export function judge(t: Targets, r: RequestFacts): Verdict {
  if (t.geo) {
    const inArea = !!r.geo && t.geo.areas.some((a) => areaContains(a, r.geo!));
    if (inArea !== t.geo.inclusive) return { ok: false, rule: 'geo_target', detail: r.geo ? `request located in ${[r.geo.city, r.geo.region, r.geo.country].filter(Boolean).join(', ')}` : 'request location unknown' };
  }
  if (t.dayParting) {
    const zone = t.dayParting.use_member_timezone ? t.dayParting.timezone || r.accountTimezone : r.geo?.timezone || t.dayParting.timezone || r.accountTimezone;
    if (!dayPartingAllows(t.dayParting.ranges, r.now, zone)) return { ok: false, rule: 'day_parting', detail: `outside the allowed hours in ${zone}` };
  }
  if (t.platform && !platformAllows(t.platform, r.platform, r.screenWidth)) {
    return { ok: false, rule: 'platform_target', detail: `${r.platform.formFactor}, ${r.platform.os}, ${r.platform.browser}` };
  }
  let preferred = false;
  if (t.keywords) {
    const { matched, excluded } = matchKeywords(t.keywords, r.keywords);
    if (excluded) return { ok: false, rule: 'keywords', detail: 'a negative keyword was given' };
    const method = t.keywordsMatch ?? 'preferred';
    if (!matched && t.keywords.include.length && method !== 'preferred') return { ok: false, rule: 'keywords', detail: `no keyword matched (match method ${method})` };
    preferred = matched && method === 'preferred';
  }
  if (t.postal) {
    const code = normalisePostal(r.data.postal_code ?? r.data.zip ?? r.geo?.postcode ?? '');
    const country = (r.data.country ?? r.geo?.country ?? '').toUpperCase();
    const listed = !!code && t.postal.locations.some((l) => (!country || l.country === country) && l.postal_codes.some((p) => normalisePostal(p) === code));
    if (listed !== t.postal.inclusive) return { ok: false, rule: 'postal_code_target', detail: code ? `postal code ${code}` : 'postal code unknown' };
  }
  if (t.list) {
    const value = r.data[t.list.key];
    const listed = value !== undefined && t.list.values.has(value);
    if (listed !== t.list.inclusive) return { ok: false, rule: 'list_target', detail: value === undefined ? `no '${t.list.key}' data key given` : `'${t.list.key}' ${listed ? 'is' : 'is not'} on the list` };
  }
  if (t.dataKey && !dataKeyLogicMatches(t.dataKey, r.data)) return { ok: false, rule: 'data_key_target', detail: 'the data keys given do not satisfy the target' };
  if (!capAllows(r.frequency, t.placement, t.frequencyLimit)) return { ok: false, rule: 'frequency_cap', detail: `already shown ${r.frequency.get(t.placement)?.views} times in this window` };
  return { ok: true, preferred };
}

function areaContains(a: GeoArea, g: GeoLocation): boolean {
  if (a.continent && continentOf(g) !== a.continent) return false;
  if (a.country && a.country !== g.country) return false;
  if (a.region && a.region.toLowerCase() !== g.region.toLowerCase()) return false;
  if (a.city && a.city.toLowerCase() !== g.city.toLowerCase()) return false;
  return !!(a.continent || a.country);
}

function normalisePostal(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
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
