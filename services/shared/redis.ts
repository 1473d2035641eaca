import Redis, { type RedisOptions } from 'ioredis';
import { envStr } from './config';
import { errorFields, log } from './log';

/**
 * The one way a process connects to Redis (REDIS_URL), and the names of what the platform keeps there.
 * Every key starts with REDIS_KEY_PREFIX, so several deployments can share one Redis.
 */

export function redisUrl(): string | undefined {
  return envStr('REDIS_URL');
}

/** The prefix of every key this platform writes. */
export function redisKeyPrefix(): string {
  return envStr('REDIS_KEY_PREFIX', 'adserver:')!;
}

/** The stream serving appends its event batches to and reporting reads through its consumer group. */
export function eventsStreamKey(): string {
  return `${redisKeyPrefix()}serving-events`;
}

const reconnect = (times: number) => Math.min(100 * times, 2000);

/**
 * How each use waits for Redis:
 * - `stream`: the event stream's reader and writer in reporting: commands wait through an outage.
 * - `state`: the gateway's shared state (rate limits, sessions, idempotency): fail fast, and the caller
 *   falls back to its in-process store.
 * - `events`: serving's event batches: one retry, queued while connecting; a failed batch stays buffered.
 * - `cache`: serving's page memory: one retry, connected on first use; a miss serves without it.
 * The per-request ones (`state`, `cache`) pipeline automatically: the commands of the requests handled in
 * one event-loop turn go out in one socket write (a write per command was 6 % of the gateway's CPU).
 */
const PURPOSES = {
  stream: { maxRetriesPerRequest: null, retryStrategy: reconnect },
  state: { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 1000, connectTimeout: 2000, retryStrategy: reconnect, enableAutoPipelining: true },
  events: { maxRetriesPerRequest: 1, enableOfflineQueue: true },
  cache: { maxRetriesPerRequest: 1, lazyConnect: true, enableAutoPipelining: true },
} satisfies Record<string, RedisOptions>;

export type RedisPurpose = keyof typeof PURPOSES;

/**
 * A client for `purpose`. With `label` its connection errors are logged under it; without, the caller
 * listens for them itself. Either way they never crash the process.
 */
export function createRedis(url: string, purpose: RedisPurpose, label?: string): Redis {
  const client = new Redis(url, PURPOSES[purpose]);
  if (label) client.on('error', (err: Error) => log.warn(`${label}: Redis error`, errorFields(err)));
  return client;
}
