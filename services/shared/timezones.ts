/**
 * Calendar arithmetic in IANA time zones with the platform's own Intl (ICU tz data, updated with
 * Node): a zone's offset at an instant, local wall time to the instant, and the day, week and month
 * boundaries of a zone, DST included (a local day can last 23 or 25 hours).
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Whether `zone` names an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  if (!zone || zone.length > 64) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

export interface LocalTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localTime(zone: string, utcMs: number): LocalTime {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(utcMs))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** The zone's offset from UTC at an instant, in minutes (e.g. -300 for New York in winter). */
export function offsetMinutes(zone: string, utcMs: number): number {
  const l = localTime(zone, utcMs);
  const asUtc = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second);
  return Math.round((asUtc - Math.floor(utcMs / 1000) * 1000) / 60_000);
}

/**
 * The instant a local wall time names in the zone. A time skipped by a DST change resolves to the
 * same distance after the change (02:30 on a spring-forward night is 03:30); a repeated time to its
 * first occurrence.
 */
export function zonedToUtc(zone: string, year: number, month: number, day: number, hour = 0, minute = 0): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  const first = wall - offsetMinutes(zone, wall) * 60_000;
  const second = wall - offsetMinutes(zone, first) * 60_000;
  if (first === second) return first;
  // Between two offsets: prefer the earlier instant that maps back to this wall time.
  const candidates = [Math.min(first, second), Math.max(first, second)];
  for (const c of candidates) {
    const l = localTime(zone, c);
    if (Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute) === wall) return c;
  }
  return Math.max(first, second);
}

/** The instant of a `YYYY-MM-DD HH:MM:SS` UTC timestamp (the API's form); NaN when empty or malformed. */
export function parseTimestamp(text: string | null | undefined): number {
  return text ? Date.parse(`${text.replace(' ', 'T')}Z`) : NaN;
}

/** `2026-03-08T00:00:00-05:00`: the instant in the zone's local time with its offset. */
export function formatInZone(zone: string, utcMs: number): string {
  const l = localTime(zone, utcMs);
  const off = offsetMinutes(zone, utcMs);
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${l.year}-${p2(l.month)}-${p2(l.day)}T${p2(l.hour)}:${p2(l.minute)}:${p2(l.second)}${sign}${p2(Math.floor(abs / 60))}:${p2(abs % 60)}`;
}

export type Period = 'day' | 'week' | 'month' | 'year';

/** A calendar date (no time) with day arithmetic that never touches a zone. */
export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

export function addDays(d: CalendarDate, days: number): CalendarDate {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

/** Adds calendar months, clamping the day to the target month's length (Jan 31 + 1 month = Feb 28). */
export function addMonths(d: CalendarDate, months: number): CalendarDate {
  const first = new Date(Date.UTC(d.year, d.month - 1 + months, 1));
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  return { year: first.getUTCFullYear(), month: first.getUTCMonth() + 1, day: Math.min(d.day, last) };
}

/** Weeks start on Monday (ISO 8601). */
export function startOfPeriod(d: CalendarDate, period: Period): CalendarDate {
  switch (period) {
    case 'day':
      return d;
    case 'week': {
      const weekday = new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay(); // 0 = Sunday
      return addDays(d, -((weekday + 6) % 7));
    }
    case 'month':
      return { year: d.year, month: d.month, day: 1 };
    case 'year':
      return { year: d.year, month: 1, day: 1 };
  }
}

export function nextPeriod(d: CalendarDate, period: Period): CalendarDate {
  switch (period) {
    case 'day':
      return addDays(d, 1);
    case 'week':
      return addDays(d, 7);
    case 'month':
      return addMonths(d, 1);
    case 'year':
      return { year: d.year + 1, month: d.month, day: d.day };
  }
}

export function midnight(zone: string, d: CalendarDate): number {
  return zonedToUtc(zone, d.year, d.month, d.day);
}

export function dateIn(zone: string, utcMs: number): CalendarDate {
  const l = localTime(zone, utcMs);
  return { year: l.year, month: l.month, day: l.day };
}

/**
 * The start instants of the periods covering [from, to) in the zone: `from` itself, then every local
 * period boundary after it and before `to`.
 */
export function periodStarts(zone: string, period: Period, from: number, to: number): number[] {
  const starts = [from];
  let d = startOfPeriod(dateIn(zone, from), period);
  for (let guard = 0; guard < 1000; guard++) {
    d = nextPeriod(d, period);
    const t = midnight(zone, d);
    if (t >= to) break;
    if (t > from) starts.push(t);
  }
  return starts;
}
