import type Redis from 'ioredis';
import client from 'prom-client';
import { envStr } from '../services/shared/config';
import { createRedis, redisKeyPrefix } from '../services/shared/redis';
import { log } from '../services/shared/log';
import { registry } from '../services/shared/metrics';

const fallbackGauge = new client.Gauge({
  name: 'ratelimit_fallback_active',
  help: '1 while this gateway keeps rate-limit and idempotency state in process because Redis is unreachable (or not configured).',
  registers: [registry],
});

/**
 * The gateway's shared state connection (REDIS_URL). Commands fail fast instead of queueing while
 * Redis is away, so callers fall back to their in-process stores; the client keeps reconnecting and
 * callers return to Redis on their own once it is ready again. Unset REDIS_URL: always in process.
 */
export class SharedState {
  readonly redis?: Redis;
  /** Every key this gateway writes starts with this (REDIS_KEY_PREFIX), so deployments can share a Redis. */
  readonly prefix = redisKeyPrefix();
  /** 'starting' until the first connection attempt succeeds or fails. */
  private state: 'starting' | 'redis' | 'fallback' = 'starting';
  private since?: Date;

  constructor(url = envStr('REDIS_URL')) {
    if (!url) {
      fallbackGauge.set(1);
      return;
    }
    this.redis = createRedis(url, 'state');
    this.redis.on('ready', () => this.setFallback(false));
    this.redis.on('close', () => this.setFallback(true, 'connection closed'));
    this.redis.on('error', (err: Error) => this.setFallback(true, err.message));
    fallbackGauge.set(1);
  }

  /** Redis when it is configured and connected; otherwise undefined (use the in-process store). */
  get client(): Redis | undefined {
    return this.redis && this.redis.status === 'ready' ? this.redis : undefined;
  }

  /** A Redis command failed although the connection looked ready: fall back until it is ready again. */
  commandFailed(err: unknown): void {
    this.setFallback(true, (err as Error)?.message ?? String(err));
  }

  details(): Record<string, unknown> {
    if (!this.redis) return { shared_state: { store: 'in-process', redis: 'not configured' } };
    return {
      shared_state: this.state !== 'redis'
        ? { store: 'in-process', redis: 'unavailable', since: this.since?.toISOString() }
        : { store: 'redis', redis: 'ok' },
    };
  }

  private setFallback(on: boolean, reason?: string): void {
    if (!this.redis) return;
    const next = on ? 'fallback' : 'redis';
    if (next === this.state) return;
    const previous = this.state;
    this.state = next;
    fallbackGauge.set(on ? 1 : 0);
    // Logged once per change of store, not per failed command or reconnect attempt.
    if (on) {
      this.since = new Date();
      log.warn('redis unreachable; rate limits and idempotency keys are kept per gateway until it is back', { reason });
    } else {
      this.since = undefined;
      if (previous === 'fallback') log.warn('redis reachable again; rate limits and idempotency keys are shared again');
      else log.info('shared state in redis');
    }
  }

  async close(): Promise<void> {
    if (this.redis) this.redis.disconnect();
  }
}
