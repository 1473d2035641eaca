import type Redis from 'ioredis';

/**
 * Where delivery counters live: in Redis when serving replicas share one, else in this process.
 * Both keep the same three things per goal:
 * - its count (views or clicks counted once per decision), seeded from reporting's totals when the
 *   counter is first needed, so a restart or a lost Redis never forgets past delivery;
 * - each replica's hold: how many more views or clicks that replica's decisions may still cause
 *   (its decisions in flight plus what it may still decide), granted so that the count plus every
 *   live hold never passes the limit;
 * - which events were counted already, so a replayed impression URL counts once.
 */

export interface ClaimAnswer {
  /** The hold granted to this replica (≤ what it asked). */
  granted: number;
  /** The goal's count when the claim was made. */
  counted: number;
  /** Replicas holding part of the goal, this one included. */
  holders: number;
}

export interface DeliveryStore {
  /**
   * Sets this replica's hold on a goal to at most `want`, within what the limit leaves after the count
   * and the other replicas' live holds. Undefined when the goal's counter is not seeded yet.
   */
  claim(key: string, replica: string, want: number, limit: number, holdTtlMs: number, countTtlMs: number): Promise<ClaimAnswer | undefined>;
  /** Creates the counter with reporting's count, unless it exists (a racing replica seeded it). */
  seed(key: string, count: number, countTtlMs: number): Promise<void>;
  /** Counts one event toward the seeded counters among `keys`; false when the event was counted before. */
  count(keys: string[], eventId: string): Promise<boolean>;
}

/**
 * How long a counted event's id is remembered: a replayed impression or click URL counts once toward
 * a goal within it (reports dedupe every event for good). Each remembered id costs Redis about 100
 * bytes, for goal placements' events only: 15 minutes of them.
 */
export const SEEN_TTL_MS = 15 * 60_000;

const CLAIM = `
local counted = redis.call('GET', KEYS[1])
if not counted then return {-1, 0, 0} end
counted = tonumber(counted)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local holds = redis.call('HGETALL', KEYS[2])
local others, holders = 0, 1
for i = 1, #holds, 2 do
  if holds[i] ~= ARGV[1] then
    local n, exp = string.match(holds[i + 1], '^(%d+):(%d+)$')
    if not exp or tonumber(exp) < now then
      redis.call('HDEL', KEYS[2], holds[i])
    else
      others = others + tonumber(n)
      holders = holders + 1
    end
  end
end
local free = tonumber(ARGV[3]) - counted - others
local granted = math.max(0, math.min(tonumber(ARGV[2]), free))
redis.call('HSET', KEYS[2], ARGV[1], granted .. ':' .. (now + tonumber(ARGV[4])))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[4]) * 4)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
return {granted, counted, holders}
`;

const COUNT = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCR', KEYS[i]) end
end
return 1
`;

type DeliveryRedis = Redis & {
  deliveryClaim(count: string, holds: string, replica: string, want: number, limit: number, holdTtl: number, countTtl: number): Promise<[number, number, number]>;
  deliveryCount(...args: (string | number)[]): Promise<number>;
};

export class RedisDeliveryStore implements DeliveryStore {
  private readonly redis: DeliveryRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('deliveryClaim', { numberOfKeys: 2, lua: CLAIM });
    redis.defineCommand('deliveryCount', { lua: COUNT });
    this.redis = redis as DeliveryRedis;
  }

  async claim(key: string, replica: string, want: number, limit: number, holdTtlMs: number, countTtlMs: number): Promise<ClaimAnswer | undefined> {
    const [granted, counted, holders] = await this.redis.deliveryClaim(`${this.prefix}${key}`, `${this.prefix}${key}:holds`, replica, want, limit, holdTtlMs, countTtlMs);
    return granted < 0 ? undefined : { granted, counted, holders };
  }

  async seed(key: string, count: number, countTtlMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}${key}`, count, 'PX', countTtlMs, 'NX');
  }

  async count(keys: string[], eventId: string): Promise<boolean> {
    const all = [`${this.prefix}counted:${eventId}`, ...keys.map((k) => `${this.prefix}${k}`)];
    return (await this.redis.deliveryCount(all.length, ...all, SEEN_TTL_MS)) === 1;
  }
}

/** One replica's counters (the embedded default): the same rules in memory. */
export class MemoryDeliveryStore implements DeliveryStore {
  private readonly counts = new Map<string, { n: number; expires: number }>();
  private readonly holds = new Map<string, Map<string, { n: number; expires: number }>>();
  private readonly seen = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async claim(key: string, replica: string, want: number, limit: number, holdTtlMs: number, countTtlMs: number): Promise<ClaimAnswer | undefined> {
    const now = this.now();
    const c = this.counts.get(key);
    if (!c || c.expires < now) return undefined;
    c.expires = now + countTtlMs;
    let holds = this.holds.get(key);
    if (!holds) this.holds.set(key, (holds = new Map()));
    let others = 0;
    let holders = 1;
    for (const [r, h] of holds) {
      if (r === replica) continue;
      if (h.expires < now) holds.delete(r);
      else {
        others += h.n;
        holders++;
      }
    }
    const granted = Math.max(0, Math.min(want, limit - c.n - others));
    holds.set(replica, { n: granted, expires: now + holdTtlMs });
    return { granted, counted: c.n, holders };
  }

  async seed(key: string, count: number, countTtlMs: number): Promise<void> {
    const c = this.counts.get(key);
    if (c && c.expires >= this.now()) return;
    this.counts.set(key, { n: count, expires: this.now() + countTtlMs });
  }

  async count(keys: string[], eventId: string): Promise<boolean> {
    const now = this.now();
    if ((this.seen.get(eventId) ?? 0) > now) return false;
    this.seen.set(eventId, now + SEEN_TTL_MS);
    // Bounded: the oldest ids go first (insertion order is time order).
    if (this.seen.size > 1_000_000) for (const k of [...this.seen.keys()].slice(0, 100_000)) this.seen.delete(k);
    for (const k of keys) {
      const c = this.counts.get(k);
      if (c && c.expires >= now) c.n++;
    }
    return true;
  }
}
