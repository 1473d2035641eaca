import http from 'node:http';
import type Redis from 'ioredis';
import { bindHost, envInt, envStr } from '../shared/config';
import type { Running } from '../shared/lifecycle';
import { log } from '../shared/log';
import { startMetricsServer } from '../shared/metrics';
import { createRedis, redisKeyPrefix } from '../shared/redis';
import { DecisionData, DecisionFeed } from './decision-store';
import { DeliveryLedger } from './delivery-ledger';
import { MemoryDeliveryStore, RedisDeliveryStore } from './delivery-store';
import { reports } from '../shared/grpc/clients';
import { EventSink } from './events';
import { GeoDatabase } from './targeting/geo';
import { LocalPageMemory, RedisPageMemory, type PageMemory } from './targeting/unique-delivery';
import { createServeHandler } from './serve-app';
import { DemandClient } from './demand/demand-client';
import { localOnce, Programmatic } from './demand/programmatic';
import { SpendLimits } from './demand/spend-limits';
import { ensureServingSecret, REPLICA_TAG, TokenSigner } from './tracking';

/**
 * The serving process: the public ad paths on SERVING_PORT (default 8090, on SERVING_HOST, else BIND_HOST, else loopback), decision
 * data kept in memory from inventory's DecisionData stream, events to reporting. On SIGTERM/SIGINT it
 * stops accepting requests, lets those in flight finish and flushes every buffered event.
 */
export async function runServing(): Promise<Running> {
  const data = { current: new DecisionData() };
  const feed = new DecisionFeed(data);
  feed.start();
  // Test keys' /v2/adserve decides from every account's test data, kept in memory the same way.
  const testData = { current: new DecisionData() };
  const testFeed = new DecisionFeed(testData, 'test');
  testFeed.start();
  const events = new EventSink();
  const secret = ensureServingSecret();
  const signer = new TokenSigner(secret);
  // Unique delivery remembers what a page was shown: in Redis when replicas share one, else in process.
  const redisUrl = envStr('REDIS_URL');
  let pagesRedis: Redis | undefined;
  let pages: PageMemory = new LocalPageMemory();
  if (redisUrl) {
    pagesRedis = createRedis(redisUrl, 'cache', 'serving page memory');
    pages = new RedisPageMemory(pagesRedis, redisKeyPrefix());
  }
  // Delivery goals: counters shared through Redis when replicas share one, else in this process;
  // either way seeded from reporting's counts, so a restart forgets nothing already counted.
  const deliveryRedis = redisUrl ? createRedis(redisUrl, 'events', 'serving delivery counters') : undefined;
  const delivery = new DeliveryLedger(deliveryRedis ? new RedisDeliveryStore(deliveryRedis, redisKeyPrefix()) : new MemoryDeliveryStore(), {
    replica: REPLICA_TAG,
    totals: (account, scopes) => reports.getDelivery({ account, scopes }, { idempotent: true }),
    inflightMs: envInt('DELIVERY_INFLIGHT_MS', 10_000, 100),
    claimEveryMs: envInt('DELIVERY_CLAIM_MS', 100, 10),
  });
  // Opened when a geo rule first needs it, or at start with GEOIP_PRELOAD=1 (then every event carries a country).
  const geo = new GeoDatabase();
  if (envStr('GEOIP_PRELOAD') === '1') void geo.load();
  // Programmatic demand: one keep-alive pool to every endpoint; a billing notice is sent once across replicas.
  const demandClient = new DemandClient();
  const billingOnce = pagesRedis
    ? (key: string) => pagesRedis!.set(`${redisKeyPrefix()}${key}`, '1', 'EX', 86_400, 'NX').then((r) => r === 'OK', () => true)
    : localOnce();
  const programmatic = new Programmatic(demandClient, events, billingOnce, new SpendLimits(pagesRedis, redisKeyPrefix()));
  const server = http.createServer(
    { keepAliveTimeout: 65_000 },
    createServeHandler({ data, testData, testReady: () => testFeed.synced, signer, events, ready: () => feed.synced, geo, pages, delivery, programmatic, secret: `frequency:${secret}` }),
  );
  const port = envInt('SERVING_PORT', 8090);
  // Loopback under npm start (the gateway proxies); the chart sets BIND_HOST=0.0.0.0.
  const host = envStr('SERVING_HOST') ?? bindHost();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const metrics = await startMetricsServer(envInt('METRICS_PORT', 9469));
  log.info('ready', { port, host, events: events.transport.name });
  return {
    async stop() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]);
      server.closeAllConnections();
      feed.stop();
      testFeed.stop();
      await demandClient.close();
      const left = await events.close();
      await pagesRedis?.quit().catch(() => undefined);
      await deliveryRedis?.quit().catch(() => undefined);
      metrics.close();
      return { undelivered_events: left };
    },
  };
}
