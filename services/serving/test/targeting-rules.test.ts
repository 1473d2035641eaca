/**
 * The targeting rules serving applies, on real inputs: the shipped GeoLite2 database, real browser
 * user agents, time zones with DST, signed frequency cookies.
 */
import { localClock, parseDataKeyLogic } from '../../shared/targeting-rules';
import { countView, decodeFrequencyCookie, encodeFrequencyCookie } from '../targeting/frequency';
import { GeoDatabase } from '../targeting/geo';
import { parseKeywords } from '../targeting/keywords';
import { platformOf } from '../targeting/platform';
import { getKind } from '../../shared/catalog';
import { continentOf, judge, targetingProjection, targetingRules, type RequestFacts, type Targets } from '../../targeting';
import type { KeywordTarget } from '../../targeting/keywords';

const UA = {
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.0 Mobile/15E148 Safari/604.1',
  windowsChrome: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  ubuntuFirefox: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
};

const geo = new GeoDatabase();
beforeAll(() => geo.load(), 30_000);

function facts(over: Partial<RequestFacts> = {}): RequestFacts {
  return { now: new Date('2026-11-23T15:00:00Z'), platform: platformOf(UA.windowsChrome), keywords: [], data: {}, frequency: new Map(), accountTimezone: 'UTC', ...over };
}

test('GeoIP: addresses of two countries, and nothing for private or malformed ones', () => {
  const gb = geo.lookup('81.2.69.142');
  expect(gb).toMatchObject({ country: 'GB', timezone: 'Europe/London' });
  expect(continentOf(gb!)).toBe('Europe');
  const us = geo.lookup('8.8.8.8');
  expect(us?.country).toBe('US');
  expect(continentOf(us!)).toBe('North America');
  expect(geo.lookup('::ffff:81.2.69.142')?.country).toBe('GB');
  expect(geo.lookup('10.1.2.3')).toBeUndefined();
  expect(geo.lookup('not an ip')).toBeUndefined();
});

test('geo targets include or exclude by country, region and continent', () => {
  const t: Targets = { placement: 1, geo_target: { areas: [{ country: 'GB' }], inclusive: true } };
  expect(judge(t, facts({ geo: geo.lookup('81.2.69.142') })).ok).toBe(true);
  expect(judge(t, facts({ geo: geo.lookup('8.8.8.8') }))).toMatchObject({ ok: false, rule: 'geo_target' });
  expect(judge(t, facts())).toMatchObject({ ok: false, rule: 'geo_target' });
  const notEurope: Targets = { placement: 1, geo_target: { areas: [{ continent: 'Europe' }], inclusive: false } };
  expect(judge(notEurope, facts({ geo: geo.lookup('81.2.69.142') })).ok).toBe(false);
  expect(judge(notEurope, facts({ geo: geo.lookup('8.8.8.8') })).ok).toBe(true);
});

test('day-parting follows the target time zone across the DST change', () => {
  // 09:00-17:00 on Sundays in New York. 2026-03-08 is the spring-forward Sunday: 13:30 UTC is 09:30 EDT
  // (it would be 08:30 under EST), and 21:30 UTC is 17:30 EDT, after hours.
  const t: Targets = { placement: 1, day_parting: { ranges: { sunday: ['09:00:00-17:00:00'] }, use_member_timezone: true, timezone: 'America/New_York' } };
  expect(judge(t, facts({ now: new Date('2026-03-08T13:30:00Z') })).ok).toBe(true);
  expect(judge(t, facts({ now: new Date('2026-03-08T21:30:00Z') }))).toMatchObject({ ok: false, rule: 'day_parting' });
  // The Sunday before, under EST, 13:30 UTC is 08:30: not yet.
  expect(judge(t, facts({ now: new Date('2026-03-01T13:30:00Z') })).ok).toBe(false);
  // In the viewer's zone: the same instant is evening in London.
  const viewer: Targets = { placement: 1, day_parting: { ranges: { sunday: ['09:00:00-17:00:00'] }, use_member_timezone: false, timezone: null } };
  expect(judge(viewer, facts({ now: new Date('2026-03-08T18:30:00Z'), geo: geo.lookup('81.2.69.142') })).ok).toBe(false);
  expect(judge(viewer, facts({ now: new Date('2026-03-08T18:30:00Z'), geo: geo.lookup('8.8.8.8') })).ok).toBe(true);
});

test("the local clock, cached per zone and minute, reads what the zone's calendar says at every second, across DST changes both ways", () => {
  const direct = (at: Date, zone: string) => {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'long', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(at).map((p) => [p.type, p.value]),
    );
    return { day: parts.weekday.toLowerCase(), seconds: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second) };
  };
  // Around New York's spring-forward and fall-back, Lord Howe's 30-minute change and India's half-hour offset.
  const cases: [string, string][] = [['America/New_York', '2026-03-08T06:58:00Z'], ['America/New_York', '2026-11-01T05:58:00Z'], ['Australia/Lord_Howe', '2026-04-04T14:58:00Z'], ['Asia/Kolkata', '2026-11-23T18:28:00Z']];
  for (const [zone, from] of cases) {
    const start = Date.parse(from);
    // Every 7 s for 5 minutes, then back in time: the cache follows the clock either way.
    for (const at of [...Array.from({ length: 43 }, (_, i) => start + i * 7_000 + 123), start - 3_600_000, start + 59_999]) {
      expect([zone, new Date(at).toISOString(), localClock(new Date(at), zone)]).toEqual([zone, new Date(at).toISOString(), direct(new Date(at), zone)]);
    }
  }
});

test('platform targets by form factor, browser and OS', () => {
  expect(platformOf(UA.iphone)).toEqual({ formFactor: 'mobile', browser: 'safari', os: 'ios' });
  expect(platformOf(UA.ipad).formFactor).toBe('tablet');
  expect(platformOf(UA.ubuntuFirefox)).toEqual({ formFactor: 'desktop', browser: 'firefox', os: 'ubuntu' });
  const mobile: Targets = { placement: 1, platform_target: { platform: 'mobile', browser_targets: null, os_targets: null, min_screen_width: null, max_screen_width: null } };
  expect(judge(mobile, facts({ platform: platformOf(UA.iphone) })).ok).toBe(true);
  expect(judge(mobile, facts({ platform: platformOf(UA.windowsChrome) }))).toMatchObject({ ok: false, rule: 'platform_target' });
  const firefoxOnly: Targets = {
    placement: 1,
    platform_target: { platform: 'specific', browser_targets: { desktop: { firefox: true } }, os_targets: null, min_screen_width: 1024, max_screen_width: null },
  };
  expect(judge(firefoxOnly, facts({ platform: platformOf(UA.ubuntuFirefox), screenWidth: 1920 })).ok).toBe(true);
  expect(judge(firefoxOnly, facts({ platform: platformOf(UA.ubuntuFirefox), screenWidth: 800 })).ok).toBe(false);
  expect(judge(firefoxOnly, facts({ platform: platformOf(UA.windowsChrome) })).ok).toBe(false);
});

test('keywords: wildcards, exclusions and the three match methods', () => {
  const rule = parseKeywords('paint*, -cheap')!;
  const k = (match: KeywordTarget['match']): Targets => ({ placement: 1, keywords: { rule, match } });
  expect(judge(k('required'), facts({ keywords: ['Painting'] }))).toEqual({ ok: true, preferred: false });
  expect(judge(k('required'), facts({ keywords: ['garden'] }))).toMatchObject({ ok: false, rule: 'keywords' });
  expect(judge(k('filtered'), facts({ keywords: [] })).ok).toBe(false);
  expect(judge(k('preferred'), facts({ keywords: ['paints'] }))).toEqual({ ok: true, preferred: true });
  expect(judge(k('preferred'), facts({ keywords: ['garden'] }))).toEqual({ ok: true, preferred: false });
  expect(judge(k('preferred'), facts({ keywords: ['paint', 'cheap'] }))).toMatchObject({ ok: false, rule: 'keywords' });
});

test('postal codes, list targets and data keys read the request data', () => {
  const postal: Targets = { placement: 1, postal_code_target: { inclusive: true, locations: [{ country: 'JP', postal_codes: ['770-0806'] }] } };
  expect(judge(postal, facts({ data: { postal_code: '7700806', country: 'jp' } })).ok).toBe(true);
  expect(judge(postal, facts({ data: { postal_code: '770-0003', country: 'JP' } }))).toMatchObject({ ok: false, rule: 'postal_code_target' });
  const list: Targets = { placement: 1, list_target: { inclusive: true, key: 'user', values: new Set(['u1', 'u2']) } };
  expect(judge(list, facts({ data: { user: 'u2' } })).ok).toBe(true);
  expect(judge(list, facts({ data: { user: 'u9' } })).ok).toBe(false);
  expect(judge({ placement: 1, list_target: { ...(list.list_target as object), inclusive: false } }, facts({ data: { user: 'u9' } })).ok).toBe(true);
  const parsed = parseDataKeyLogic('["AND", {"age": {">=": "18"}}, ["OR", {"plan": {"=": "gold"}}, {"plan": {"=": "silver"}}]]');
  if ('error' in parsed) throw new Error(parsed.error);
  const dk: Targets = { placement: 1, data_key_target: parsed.logic };
  expect(judge(dk, facts({ data: { age: '21', plan: 'silver' } })).ok).toBe(true);
  expect(judge(dk, facts({ data: { age: '9', plan: 'gold' } }))).toMatchObject({ ok: false, rule: 'data_key_target' });
  expect(judge(dk, facts({ data: { plan: 'gold' } })).ok).toBe(false);
});

test('frequency caps travel in a signed cookie that cannot be forged or reset by editing', () => {
  const now = 1_800_000_000;
  let entries = new Map();
  const t: Targets = { placement: 7, frequency_cap: { limit: 2, windowSeconds: 3600 } };
  for (let i = 0; i < 2; i++) {
    expect(judge(t, facts({ frequency: entries })).ok).toBe(true);
    entries = countView(entries, 7, 3600, now);
  }
  const cookie = encodeFrequencyCookie(entries, 'secret');
  const read = decodeFrequencyCookie(cookie, 'secret', now + 60);
  expect(judge(t, facts({ frequency: read }))).toMatchObject({ ok: false, rule: 'frequency_cap' });
  // An hour later the window is over.
  expect(judge(t, facts({ frequency: decodeFrequencyCookie(cookie, 'secret', now + 3600) })).ok).toBe(true);
  // A cookie edited by the visitor, or signed with another secret, counts as none.
  const [body, sig] = cookie.split('.');
  const edited = Buffer.from(JSON.stringify([{ placement_id: 7, start: now, expiry: now + 3600, views: 0 }])).toString('base64url');
  expect(decodeFrequencyCookie(`${edited}.${sig}`, 'secret', now).size).toBe(0);
  expect(decodeFrequencyCookie(`${body}.${sig}`, 'other', now).size).toBe(0);
});

test('each targeting rule is one registered module: its catalog kinds, their projection and its evaluator', () => {
  const rules = targetingRules();
  expect(rules.map((r) => r.name)).toEqual(['geo_target', 'day_parting', 'platform_target', 'keywords', 'postal_code_target', 'list_target', 'data_key_target', 'frequency_cap']);
  for (const rule of rules) {
    for (const kind of rule.kinds ?? []) {
      // The catalog serves the rule's kinds, and inventory projects each one serving reads.
      expect(getKind(kind.kind)).toBe(kind);
      if (kind.kind !== 'data_key') expect(targetingProjection(kind.kind)).toBe(rule.project?.[kind.kind]);
    }
  }
});
