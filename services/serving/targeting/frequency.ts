/**
 * Frequency caps without server state: how often each placement was shown to a visitor travels with the
 * visitor, in the reference's `user_freq` form ({placement_id, start, expiry, views}, times in epoch
 * seconds). A server-side caller passes it in the request; a browser keeps it in a first-party cookie of
 * the serving host, signed so a visitor cannot reset or forge it. Any serving replica can therefore
 * answer any request of the visitor.
 */
import crypto from 'node:crypto';

export interface FreqEntry {
  placement_id: number;
  start: number;
  expiry: number;
  views: number;
}

export const FREQUENCY_COOKIE = 'ab_freq';
/** Entries kept per visitor: the newest ones win when a visitor has seen more placements. */
const MAX_ENTRIES = 64;

/** Entries still running at `now`, by placement. Malformed entries are ignored. */
export function liveEntries(list: unknown, now: number): Map<number, FreqEntry> {
  const out = new Map<number, FreqEntry>();
  if (!Array.isArray(list)) return out;
  for (const e of list.slice(0, MAX_ENTRIES)) {
    if (!e || typeof e !== 'object') continue;
    const { placement_id, start, expiry, views } = e as Record<string, unknown>;
    if (![placement_id, start, expiry, views].every((v) => Number.isSafeInteger(v))) continue;
    if ((expiry as number) <= now) continue;
    out.set(placement_id as number, { placement_id: placement_id as number, start: start as number, expiry: expiry as number, views: views as number });
  }
  return out;
}

/** Whether one more view of `placement` stays within `limit` views per window. No limit: always. */
export function capAllows(entries: Map<number, FreqEntry>, placement: number, limit: number | null | undefined): boolean {
  if (!limit) return true;
  return (entries.get(placement)?.views ?? 0) < limit;
}

/** Counts a view; a placement's window starts at its first view and lasts `windowSeconds`. */
export function countView(entries: Map<number, FreqEntry>, placement: number, windowSeconds: number, now: number): Map<number, FreqEntry> {
  const next = new Map(entries);
  const e = next.get(placement);
  next.set(placement, e ? { ...e, views: e.views + 1 } : { placement_id: placement, start: now, expiry: now + windowSeconds, views: 1 });
  return next;
}

/** The cookie value: entries as base64url JSON, then an HMAC of it. */
export function encodeFrequencyCookie(entries: Map<number, FreqEntry>, secret: string): string {
  const list = [...entries.values()].sort((a, b) => b.start - a.start).slice(0, MAX_ENTRIES);
  const body = Buffer.from(JSON.stringify(list)).toString('base64url');
  return `${body}.${sign(body, secret)}`;
}

/** The entries of a cookie value; a value that is malformed or not signed by `secret` counts as none. */
export function decodeFrequencyCookie(value: string | undefined, secret: string, now: number): Map<number, FreqEntry> {
  if (!value) return new Map();
  const dot = value.lastIndexOf('.');
  if (dot < 1) return new Map();
  const body = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(sign(body, secret));
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return new Map();
  try {
    return liveEntries(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')), now);
  } catch {
    return new Map();
  }
}

function sign(body: string, secret: string): string {
  return crypto.createHmac('sha256', secret).update(`freq:${body}`).digest('base64url').slice(0, 22);
}
