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
  /** New decisions this replica may make (≤ the headroom it asked for). */
  granted: number;
  /** This replica's decisions whose event was counted since its last claim (on whichever replica). */
  landed: number;
  /** The goal's count when the claim was made. */
  counted: number;
  /** Replicas holding part of the goal, this one included. */
  holders: number;
}

export interface DeliveryStore {
  /**
   * Sets this replica's hold on a goal: its decisions still in flight (`inflight`, less those counted
   * since its last claim), always, plus up to `headroom` new decisions, within what the limit leaves
   * after the count and the other replicas' live holds. Undefined when the counter is not seeded yet.
   */
  claim(key: string, replica: string, inflight: number, headroom: number, limit: number, holdTtlMs: number, countTtlMs: number): Promise<ClaimAnswer | undefined>;
  /** Creates the counter with reporting's count, unless it exists (a racing replica seeded it). */
  seed(key: string, count: number, countTtlMs: number): Promise<void>;
  /**
   * Counts one event toward the seeded counters among `keys`, and notes it for `replica` (the one that
   * decided), whose next claim learns that this share is no longer in flight. False when the event was
   * counted before.
   */
  count(keys: string[], eventId: string, replica: string): Promise<boolean>;
}

/**
 * How long a counted event's id is remembered: a replayed impression or click URL counts once toward
 * a goal within it (reports dedupe every event for good). Each remembered id costs Redis about 100
 * bytes, for goal placements' events only: 15 minutes of them.
 */
export const SEEN_TTL_MS = 15 * 60_000;

const CLAIM = `
local counted = redis.call('GET', KEYS[1])
if not counted then return {-1, 0, 0, 0} end
counted = tonumber(counted)
-- The replica's decisions counted since its last claim: already in the count, no longer in flight.
local landed = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if landed > 0 then redis.call('HDEL', KEYS[3], ARGV[1]) end
local inflight = math.max(0, tonumber(ARGV[2]) - landed)
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
-- Decisions in flight are held whatever the limit leaves: they exist. New ones only within it.
local free = tonumber(ARGV[4]) - counted - others - inflight
local granted = math.max(0, math.min(tonumber(ARGV[3]), free))
redis.call('HSET', KEYS[2], ARGV[1], (inflight + granted) .. ':' .. (now + tonumber(ARGV[5])))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[5]) * 4)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]))
return {granted, counted, holders, landed}
`;

const COUNT = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('INCR', KEYS[i])
    if ARGV[2] ~= '' then
      redis.call('HINCRBY', KEYS[i] .. ':landed', ARGV[2], 1)
      redis.call('PEXPIRE', KEYS[i] .. ':landed', ARGV[1])
    end
  end
end
return 1
`;

type DeliveryRedis = Redis & {
  deliveryClaim(count: string, holds: string, landed: string, replica: string, inflight: number, headroom: number, limit: number, holdTtl: number, countTtl: number): Promise<[number, number, number, number]>;
  deliveryCount(...args: (string | number)[]): Promise<number>;
};

export class RedisDeliveryStore implements DeliveryStore {
  private readonly redis: DeliveryRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('deliveryClaim', { numberOfKeys: 3, lua: CLAIM });
    redis.defineCommand('deliveryCount', { lua: COUNT });
    this.redis = redis as DeliveryRedis;
  }

  async claim(key: string, replica: string, inflight: number, headroom: number, limit: number, holdTtlMs: number, countTtlMs: number): Promise<ClaimAnswer | undefined> {
    const k = `${this.prefix}${key}`;
    const [granted, counted, holders, landed] = await this.redis.deliveryClaim(k, `${k}:holds`, `${k}:landed`, replica, inflight, headroom, limit, holdTtlMs, countTtlMs);
    return granted < 0 ? undefined : { granted, counted, holders, landed };
  }

  async seed(key: string, count: number, countTtlMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}${key}`, count, 'PX', countTtlMs, 'NX');
  }

  async count(keys: string[], eventId: string, replica: string): Promise<boolean> {
    const all = [`${this.prefix}counted:${eventId}`, ...keys.map((k) => `${this.prefix}${k}`)];
    return (await this.redis.deliveryCount(all.length, ...all, SEEN_TTL_MS, replica)) === 1;
  }
}

/** One replica's counters (the embedded default): the same rules in memory. */
export class MemoryDeliveryStore implements DeliveryStore {
  private readonly counts = new Map<string, { n: number; expires: number }>();
  private readonly holds = new Map<string, Map<string, { n: number; expires: number }>>();
  private readonly seen = new Map<string, number>();
  private readonly landed = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  async claim(key: string, replica: string, inflight: number, headroom: number, limit: number, holdTtlMs: number, countTtlMs: number): Promise<ClaimAnswer | undefined> {
    const now = this.now();
    const c = this.counts.get(key);
    if (!c || c.expires < now) return undefined;
    c.expires = now + countTtlMs;
    const landed = this.landed.get(key)?.get(replica) ?? 0;
    this.landed.get(key)?.delete(replica);
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
    const held = Math.max(0, inflight - landed);
    const granted = Math.max(0, Math.min(headroom, limit - c.n - others - held));
    holds.set(replica, { n: held + granted, expires: now + holdTtlMs });
    return { granted, counted: c.n, holders, landed };
  }

  async seed(key: string, count: number, countTtlMs: number): Promise<void> {
    const c = this.counts.get(key);
    if (c && c.expires >= this.now()) return;
    this.counts.set(key, { n: count, expires: this.now() + countTtlMs });
  }

  async count(keys: string[], eventId: string, replica: string): Promise<boolean> {
    const now = this.now();
    if ((this.seen.get(eventId) ?? 0) > now) return false;
    this.seen.set(eventId, now + SEEN_TTL_MS);
    // Bounded: the oldest ids go first (insertion order is time order).
    if (this.seen.size > 1_000_000) for (const k of [...this.seen.keys()].slice(0, 100_000)) this.seen.delete(k);
    for (const k of keys) {
      const c = this.counts.get(k);
      if (!c || c.expires < now) continue;
      c.n++;
      if (!replica) continue;
      let byReplica = this.landed.get(k);
      if (!byReplica) this.landed.set(k, (byReplica = new Map()));
      byReplica.set(replica, (byReplica.get(replica) ?? 0) + 1);
    }
    return true;
  }
}
