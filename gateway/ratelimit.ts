import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import client from 'prom-client';
import { envInt } from '../services/shared/config';
import { registry } from '../services/shared/metrics';
import { ctxOf } from './context';
import { ApiError } from './errors';
import type { SharedState } from './redis-state';

export type Bucket = 'general' | 'reporting';

/**
 * Spec section 8: these paths share the reporting budget; every other endpoint the general one. Besides
 * the contract's four groups, the reference's other names for reports (`/v2/vast/reports`, the event
 * logs) are reports too and spend the same budget.
 */
export const REPORTING_PATHS = ['/v2/reports', '/v2/custom-reports', '/v2/vast-reports', '/v2/vast-custom-reports', '/v2/vast/reports', '/v2/event-logs'];

export const WINDOW_MS = 60_000;
export const DEFAULT_LIMITS: Record<Bucket, number> = {
  general: envInt('RATE_LIMIT_GENERAL', 600),
  reporting: envInt('RATE_LIMIT_REPORTING', 60),
};

const rejections = new client.Counter({
  name: 'ratelimit_rejections_total',
  help: 'Requests refused with 429, by budget (general or reporting).',
  labelNames: ['bucket'] as const,
  registers: [registry],
});

export function bucketOf(path: string): Bucket {
  return REPORTING_PATHS.some((p) => path === p || path.startsWith(`${p}/`)) ? 'reporting' : 'general';
}

export interface Decision {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Epoch ms when the oldest counted request leaves the window (a slot frees). */
  resetAt: number;
  now: number;
}

/**
 * A sliding log in one sorted set per budget: drop entries older than the window, count, and add this
 * request only if it fits, all in one script so concurrent gateways can never both take the last slot.
 * Redis' own clock timestamps every entry, so replicas with skewed clocks still agree.
 */
const SLIDING_WINDOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  allowed = 1
end
local reset = now + window
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] then reset = tonumber(oldest[2]) + window end
return {allowed, count, reset, now}
`;

/**
 * One key's admitted requests, oldest first. Expired entries are skipped by moving `head`, and the
 * array is compacted once most of it is skipped: dropping one entry per request with `splice` would
 * move the whole log each time (60,000 entries at 1,000 requests a second).
 */
class TimestampLog {
  private times: number[] = [];
  private head = 0;
  /** The longest window this log is read with: a sweep keeps it for that long. */
  windowMs = WINDOW_MS;

  get size(): number {
    return this.times.length - this.head;
  }

  get oldest(): number | undefined {
    return this.times[this.head];
  }

  get newest(): number | undefined {
    return this.size ? this.times[this.times.length - 1] : undefined;
  }

  push(t: number): void {
    this.times.push(t);
  }

  /** Forgets the entries at or before `cutoff`. */
  expire(cutoff: number): void {
    while (this.head < this.times.length && this.times[this.head] <= cutoff) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    } else if (this.head === this.times.length) {
      this.times = [];
      this.head = 0;
    }
  }

  countAfter(cutoff: number): number {
    let n = 0;
    for (let i = this.head; i < this.times.length; i++) if (this.times[i] > cutoff) n++;
    return n;
  }
}

/** The same sliding log in process: the store without REDIS_URL, and the fallback while Redis is down. */
export class MemoryWindow {
  private readonly logs = new Map<string, TimestampLog>();
  private lastSweep = Date.now();

  private logOf(key: string, windowMs = WINDOW_MS): TimestampLog {
    let log = this.logs.get(key);
    if (!log) this.logs.set(key, (log = new TimestampLog()));
    if (windowMs > log.windowMs) log.windowMs = windowMs;
    return log;
  }

  /**
   * Notes a request admitted elsewhere (by Redis), so that a fallback to this window starts from it.
   * Entries older than the window are dropped here too: while Redis answers, nothing else would.
   */
  record(key: string, windowMs = WINDOW_MS, now = Date.now()): void {
    const log = this.logOf(key, windowMs);
    log.expire(now - windowMs);
    log.push(now);
    this.sweep(now, windowMs);
  }

  hit(key: string, limit: number, windowMs = WINDOW_MS, now = Date.now()): Decision {
    const log = this.logOf(key, windowMs);
    log.expire(now - windowMs);
    const allowed = log.size < limit;
    if (allowed) log.push(now);
    this.sweep(now, windowMs);
    return { allowed, limit, remaining: Math.max(0, limit - log.size), resetAt: (log.oldest ?? now) + windowMs, now };
  }

  count(key: string, windowMs = WINDOW_MS, now = Date.now()): number {
    return this.logs.get(key)?.countAfter(now - windowMs) ?? 0;
  }

  /** Entries held for a key (expired ones included until the key's next request): for tests. */
  held(key: string): number {
    return this.logs.get(key)?.size ?? 0;
  }

  /** Forgets budgets idle for a whole window, so memory follows the active accounts. */
  private sweep(now: number, windowMs: number): void {
    if (now - this.lastSweep < windowMs) return;
    this.lastSweep = now;
    for (const [k, log] of this.logs) if ((log.newest ?? -Infinity) <= now - Math.max(windowMs, log.windowMs)) this.logs.delete(k);
  }
}

/** Budgets other than an account's requests: sign-in attempts and failed authentications. */
export type LimitedBucket = 'signin-email' | 'signin-address' | 'signin-pair' | 'auth-failure';

/**
 * Budgets live in Redis, shared by every gateway. While Redis is unreachable each gateway falls back to
 * its in-process window, seeded with the requests it admitted itself during the last window: an
 * account's budget is never restarted by an outage, but gateways do not see each other's requests, so
 * with N gateways an account can get up to N times its budget during an outage (and what was admitted
 * in the fallback is not written back to Redis). See the README's limits section.
 */
export class RateLimiter {
  private readonly memory = new MemoryWindow();
  /** Sorted-set members must be unique across replicas: this process's random tag and a counter. */
  private readonly instance = crypto.randomBytes(6).toString('hex');
  private seq = 0;

  constructor(private readonly state: SharedState) {
    state.redis?.defineCommand('adserverSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
  }

  /**
   * Takes a slot of `bucket` for `id` (an account; a sign-in email, address or pair; a client address's
   * failed authentications) if one is free in the last `windowMs`.
   */
  async hit(bucket: Bucket | LimitedBucket, id: number | string, limit: number, windowMs = WINDOW_MS): Promise<Decision> {
    const key = `${this.state.prefix}ratelimit:${bucket}:${id}`;
    const redis = this.state.client;
    if (redis) {
      try {
        const run = (redis as unknown as { adserverSlidingWindow(k: string, w: number, l: number, id: string): Promise<number[]> }).adserverSlidingWindow;
        const [allowed, count, resetAt, now] = (await run.call(redis, key, windowMs, limit, `${this.instance}:${(this.seq = (this.seq + 1) % 1e15)}`)).map(Number);
        // What this gateway admitted stays counted here too: during a Redis outage the in-process
        // window carries on from it instead of starting every budget afresh.
        if (allowed === 1) this.memory.record(key, windowMs);
        return { allowed: allowed === 1, limit, remaining: Math.max(0, limit - count), resetAt, now };
      } catch (err) {
        this.state.commandFailed(err);
      }
    }
    return this.memory.hit(key, limit, windowMs);
  }

  /** How many slots of a budget the last window counted, as `hit` sees them (nothing is taken). */
  async used(bucket: Bucket | LimitedBucket, id: number | string, windowMs = WINDOW_MS): Promise<number> {
    const key = `${this.state.prefix}ratelimit:${bucket}:${id}`;
    const redis = this.state.client;
    if (redis) {
      try {
        const [sec, micro] = (await redis.time()).map(Number);
        return await redis.zcount(key, `(${sec * 1000 + Math.floor(micro / 1000) - windowMs}`, '+inf');
      } catch (err) {
        this.state.commandFailed(err);
      }
    }
    return this.memory.count(key, windowMs);
  }
}

/**
 * Per-account budgets (both modes together), checked after authentication. Every authenticated
 * response carries X-RateLimit-Limit, -Remaining and -Reset (epoch seconds when a slot frees); a
 * refused request gets 429 with Retry-After and does not use up budget.
 */
export function rateLimit(limiter: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = ctxOf(res);
    if (!ctx) return next();
    const bucket = bucketOf(req.path);
    const limit = (bucket === 'general' ? ctx.limits?.general : ctx.limits?.reporting) || DEFAULT_LIMITS[bucket];
    let d: Decision;
    try {
      d = await limiter.hit(bucket, ctx.tenant.accountId, limit);
    } catch (err) {
      return next(err);
    }
    res.setHeader('X-RateLimit-Limit', String(d.limit));
    res.setHeader('X-RateLimit-Remaining', String(d.remaining));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(d.resetAt / 1000)));
    if (d.allowed) return next();
    rejections.inc({ bucket });
    const retryAfter = Math.max(1, Math.ceil((d.resetAt - d.now) / 1000));
    const what = bucket === 'reporting' ? 'reporting requests' : 'requests';
    next(
      new ApiError(
        429,
        'rate_limit_error',
        `Too many ${what}: this account may make ${d.limit} ${what} per 60 seconds. Retry after ${retryAfter} s.`,
        undefined,
        { 'Retry-After': String(retryAfter) },
      ),
    );
  };
}
