import type { ParameterError } from '../shared/catalog/types';
import { fail } from '../shared/errors';
import { MAX_IDS } from '../shared/query-values';
import {
  addDays, addMonths, dateIn, isTimeZone, midnight, nextPeriod, startOfPeriod, type CalendarDate, type Period,
} from '../shared/timezones';

/**
 * The report parameters of the reference API, checked here (not in the gateway) so that the API and
 * saved report configurations share one reading, and every refusal names its parameter.
 */

export const REPORT_TYPES = ['overview', 'publisher', 'advertiser', 'zone', 'campaign', 'ad-item', 'textad', 'popup', 'geo-target', 'channel'] as const;
export const VAST_REPORT_TYPES = ['overview', 'publisher', 'advertiser', 'zone', 'campaign', 'ad-item'] as const;
export const PERIODS: Period[] = ['day', 'week', 'month', 'year'];
export const PRESETS = [
  'today', 'last-24-hours', 'yesterday', 'this-week', 'last-week', 'this-month', 'last-month', 'year-to-date', 'last-year',
  'last-7-days', 'last-14-days', 'last-30-days', 'last-3-months', 'last-6-months', 'last-12-months',
] as const;
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** The platform default until accounts carry a timezone setting of their own. */
export const DEFAULT_TIMEZONE = 'UTC';

export class ParamErrors {
  readonly list: ParameterError[] = [];
  add(field: string, message: string, type: ParameterError['type'] = 'invalid_value'): void {
    if (!this.list.some((p) => p.field === field)) this.list.push({ field, type, message });
  }
  throwIfAny(): void {
    if (this.list.length) throw fail.invalid(this.list);
  }
}

/** Ids of a typed filter, checked as any caller's (the gateway reads them from the query first). */
export function checkedIds(ids: readonly number[], name: string, errors: ParamErrors): number[] {
  if (ids.length > MAX_IDS || ids.some((id) => !Number.isSafeInteger(id) || id < 1)) {
    errors.add(name, `'${name}' must be a list of up to ${MAX_IDS} positive integer ids.`);
    return [];
  }
  return [...ids];
}

export function parseEnum<T extends string>(raw: string, name: string, allowed: readonly T[], errors: ParamErrors, required: boolean): T | undefined {
  if (raw === '') {
    if (required) errors.add(name, `'${name}' is required: one of ${allowed.join(', ')}.`, 'missing_field');
    return undefined;
  }
  if (!(allowed as readonly string[]).includes(raw)) {
    errors.add(name, `'${name}' must be one of ${allowed.join(', ')}; got '${raw.slice(0, 40)}'.`);
    return undefined;
  }
  return raw as T;
}

export interface TimeRange {
  from: number;
  to: number;
  zone: string;
}

/** The years a report date may name: reports cover the platform's own events, none before 2000. */
export const REPORT_YEARS = { min: 2000, max: 2100 } as const;

function parseInstant(raw: string, name: string, errors: ParamErrors): { ms: number; offset: number } | undefined {
  const m = ISO.exec(raw);
  if (!m) {
    errors.add(name, `'${name}' must be an ISO 8601 date and time with an offset, e.g. 2026-01-01T00:00:00+00:00.`);
    return undefined;
  }
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  if (year < REPORT_YEARS.min || year > REPORT_YEARS.max) {
    errors.add(name, `'${name}' must be a date from ${REPORT_YEARS.min} to ${REPORT_YEARS.max}; ${m[1]} is outside that range.`);
    return undefined;
  }
  // Date.UTC rolls 2026-02-30 over into March: a date that does not come back whole does not exist.
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (month < 1 || month > 12 || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    errors.add(name, `'${name}' names a date or time that does not exist (${raw.slice(0, 40)}).`);
    return undefined;
  }
  const sign = m[7] === 'Z' ? 1 : m[7][0] === '-' ? -1 : 1;
  const [offHours, offMinutes] = m[7] === 'Z' ? [0, 0] : [Number(m[7].slice(1, 3)), Number(m[7].slice(-2))];
  if (offHours > 14 || offMinutes > 59) {
    errors.add(name, `'${name}' has an offset beyond ±14:00 (${m[7]}).`);
    return undefined;
  }
  const offset = sign * (offHours * 60 + offMinutes);
  const ms = Date.parse(raw.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return { ms, offset };
}

/**
 * `preset`, or `from`/`to` (ISO 8601 with the same offset, `to` exclusive, at most one year apart),
 * with `timezone` (IANA) for the presets' and periods' calendar. Presets are read in that zone at `now`;
 * the "last N days/months" presets end with today.
 */
export function parseRange(q: { preset: string; from: string; to: string; timezone: string }, errors: ParamErrors, now = Date.now()): TimeRange | undefined {
  const zone = q.timezone || DEFAULT_TIMEZONE;
  if (!isTimeZone(zone)) {
    errors.add('timezone', `'timezone' must be an IANA time zone such as America/New_York; '${zone.slice(0, 64)}' is not one.`);
    return undefined;
  }
  if (q.preset !== '') {
    if (q.from !== '' || q.to !== '') {
      errors.add('preset', "Give either 'preset' or 'from' and 'to', not both.");
      return undefined;
    }
    const preset = parseEnum(q.preset, 'preset', PRESETS, errors, true);
    return preset ? { ...presetRange(preset, zone, now), zone } : undefined;
  }
  if (q.from === '' && q.to === '') {
    errors.add('preset', "Give either a 'preset' or both 'from' and 'to'.", 'missing_field');
    return undefined;
  }
  if (q.from === '') errors.add('from', "'from' is required with 'to'.", 'missing_field');
  if (q.to === '') errors.add('to', "'to' is required with 'from'.", 'missing_field');
  const from = q.from ? parseInstant(q.from, 'from', errors) : undefined;
  const to = q.to ? parseInstant(q.to, 'to', errors) : undefined;
  if (!from || !to) return undefined;
  if (from.offset !== to.offset) {
    errors.add('to', "'from' and 'to' must carry the same offset.");
    return undefined;
  }
  if (to.ms <= from.ms) {
    errors.add('to', "'to' must be after 'from' (it is exclusive).");
    return undefined;
  }
  // One year on the calendar of the given offset: 2025-03-01 → 2026-03-01 is allowed, a second more is not.
  const local = new Date(from.ms + from.offset * 60_000);
  const yearLater = Date.UTC(local.getUTCFullYear() + 1, local.getUTCMonth(), local.getUTCDate(), local.getUTCHours(), local.getUTCMinutes(), local.getUTCSeconds(), local.getUTCMilliseconds()) - from.offset * 60_000;
  if (to.ms > yearLater) {
    errors.add('to', 'A report may cover at most one year: move \'to\' closer to \'from\'.');
    return undefined;
  }
  return { from: from.ms, to: to.ms, zone };
}

function presetRange(preset: (typeof PRESETS)[number], zone: string, now: number): { from: number; to: number } {
  const today = dateIn(zone, now);
  const tomorrow = addDays(today, 1);
  const at = (d: CalendarDate) => midnight(zone, d);
  const toTomorrow = (from: CalendarDate) => ({ from: at(from), to: at(tomorrow) });
  switch (preset) {
    case 'today':
      return toTomorrow(today);
    case 'last-24-hours':
      return { from: now - 86_400_000, to: now };
    case 'yesterday':
      return { from: at(addDays(today, -1)), to: at(today) };
    case 'this-week': {
      const s = startOfPeriod(today, 'week');
      return { from: at(s), to: at(nextPeriod(s, 'week')) };
    }
    case 'last-week': {
      const s = startOfPeriod(today, 'week');
      return { from: at(addDays(s, -7)), to: at(s) };
    }
    case 'this-month': {
      const s = startOfPeriod(today, 'month');
      return { from: at(s), to: at(nextPeriod(s, 'month')) };
    }
    case 'last-month': {
      const s = startOfPeriod(today, 'month');
      return { from: at(addMonths(s, -1)), to: at(s) };
    }
    case 'year-to-date':
      return toTomorrow(startOfPeriod(today, 'year'));
    case 'last-year': {
      const s = startOfPeriod(today, 'year');
      return { from: at({ year: s.year - 1, month: 1, day: 1 }), to: at(s) };
    }
    case 'last-7-days':
      return toTomorrow(addDays(today, -6));
    case 'last-14-days':
      return toTomorrow(addDays(today, -13));
    case 'last-30-days':
      return toTomorrow(addDays(today, -29));
    case 'last-3-months':
      return toTomorrow(addDays(addMonths(today, -3), 1));
    case 'last-6-months':
      return toTomorrow(addDays(addMonths(today, -6), 1));
    case 'last-12-months':
      return toTomorrow(addDays(addMonths(today, -12), 1));
  }
}
