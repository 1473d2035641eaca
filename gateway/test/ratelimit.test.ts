import net from 'node:net';
import Redis from 'ioredis';
import { MemoryWindow } from '../ratelimit';
import { as, expectError, newAccount, request, type ApiResponse } from './support/api';
import { pool, startGatewayProcess, type GatewayProcess } from './support/gateway-process';
import { admin, freePort, plainGet } from './support/platform';

const REDIS = process.env.REDIS_URL;
/** Answered 404 by the gateway after the limiter, without work for any service. */
const CHEAP = '/v2/rate-limit-probe';

function expectLimitHeaders(res: ApiResponse, limit: number): void {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
  const reset = Number(res.headers['x-ratelimit-reset']);
  const now = Date.now() / 1000;
  expect(reset).toBeGreaterThanOrEqual(Math.floor(now));
  expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 61);
}

function expect429(res: ApiResponse, version: 'v1' | 'v2', limit: number): void {
  const body = expectError(res, 429, version);
  expect(body.type).toBe('rate_limit_error');
  expect(body.message).toContain(String(limit));
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expectLimitHeaders(res, limit);
}

describe('general budget: 600 requests per 60 s per account', () => {
  // With Redis the budget is one across replicas: half the requests go through a second gateway.
  let second: GatewayProcess | undefined;
  beforeAll(async () => {
    if (REDIS) second = await startGatewayProcess();
  }, 40_000);
  afterAll(async () => {
    await second?.stop();
  });

  test(`600 concurrent requests pass, the next is 429 (${REDIS ? 'two gateways sharing Redis' : 'one gateway, in-process state'}); the other mode shares it, other accounts and the reporting budget do not`, async () => {
    const a = await newAccount();
    const b = await newAccount();
    const ports = second ? [undefined, second.httpsPort] : [undefined];
    const results = await pool(32, Array.from({ length: 600 }, (_, i) => i), (i) =>
      (i % 2 ? a.live : a.test).get(CHEAP, { port: ports[i % ports.length] }),
    );
    const statuses = results.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});
    expect(statuses).toEqual({ 404: 600 });
    const remaining = results.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y);
    // Each accepted request saw its own count: 599 down to 0, no two alike.
    expect(remaining).toEqual(Array.from({ length: 600 }, (_, i) => i));
    for (const port of ports) {
      expect429(await a.test.get('/v2/publishers', { port }), 'v2', 600);
      expect429(await a.live.get('/v1/publishers', { port }), 'v1', 600);
      expect429(await a.test.post('/v2/publishers', { name: 'over the limit' }, { port }), 'v2', 600);
    }
    // The refused create changed nothing, and the other account is untouched.
    const bList = await b.test.get('/v2/publishers');
    expect(bList.status).toBe(200);
    expect(bList.headers['x-ratelimit-remaining']).toBe('599');
    // The reporting budget is separate.
    // (A report without its required parameters is a 400, and still spends the reporting budget.)
    const report = await a.test.get('/v2/reports');
    expect(report.status).toBe(400);
    expectLimitHeaders(report, 60);
    expect(report.headers['x-ratelimit-remaining']).toBe('59');

    const metrics = await plainGet(Number(process.env.METRICS_PORT), '/metrics');
    expect(metrics.body).toMatch(/ratelimit_rejections_total\{bucket="general"\} [1-9]/);
  }, 60_000);
});

test('the reporting budget: 60 requests per 60 s over the four reporting paths, independent of the general one', async () => {
  const acct = await newAccount();
  const paths = ['/v2/reports', '/v2/custom-reports', '/v2/vast-reports', '/v2/vast-custom-reports'];
  const results = await pool(16, Array.from({ length: 60 }, (_, i) => i), (i) => acct.test.get(`${paths[i % 4]}${i % 3 ? '' : '/1'}`));
  expect(results.every((r) => r.status !== 429)).toBe(true);
  for (const p of paths) expect429(await acct.test.get(p), 'v2', 60);
  const general = await acct.test.get('/v2/publishers');
  expect(general.status).toBe(200);
  expectLimitHeaders(general, 600);
  expect(general.headers['x-ratelimit-remaining']).toBe('599');
  // Only the v2 paths are reporting ones.
  expect((await acct.test.get('/v1/reports')).status).toBe(404);
});

test('limits are set per account with the admin CLI and apply at once', async () => {
  const acct = await newAccount();
  const { stdout } = await admin('set-limits', '--account', String(acct.id), '--general', '5', '--reporting', '2');
  expect(JSON.parse(stdout)).toEqual({ account: { id: acct.id, limits: { general: 5, reporting: 2 } } });
  for (let i = 0; i < 5; i++) {
    const res = await acct.test.get(CHEAP);
    expect([res.status, res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']]).toEqual([404, '5', String(4 - i)]);
  }
  expect429(await acct.test.get(CHEAP), 'v2', 5);
  expect((await acct.test.get('/v2/reports')).status).toBe(400);
  expect((await acct.test.get('/v2/reports')).status).toBe(400);
  expect429(await acct.test.get('/v2/reports'), 'v2', 2);
  // Back to the default while the gateway has the key cached: the change reaches it through the
  // accounts service's key stream, without waiting for the cache to expire.
  const back = JSON.parse((await admin('set-limits', '--account', String(acct.id), '--general', '0')).stdout);
  expect(back.account.limits).toEqual({ general: null, reporting: 2 });
  let res = await acct.test.get(CHEAP);
  for (let i = 0; i < 20 && res.headers['x-ratelimit-limit'] !== '600'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    res = await acct.test.get(CHEAP);
  }
  expect(res.headers['x-ratelimit-limit']).toBe('600');
  expect(res.status).toBe(404);

  await expect(admin('set-limits', '--account', String(acct.id), '--general', 'lots')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('--general') });
  await expect(admin('set-limits', '--account', '99999999', '--general', '5')).rejects.toMatchObject({ code: 1 });
}, 30_000);

test('requests without a valid key are refused before the limiter and spend nobody’s budget', async () => {
  const acct = await newAccount();
  const bad = await as('test_not-a-real-key-00000000000000000000').get(CHEAP);
  expectError(bad, 403, 'v2');
  expect(bad.headers['x-ratelimit-limit']).toBeUndefined();
  expect((await acct.test.get(CHEAP)).headers['x-ratelimit-remaining']).toBe('599');
});

describe('the sliding window', () => {
  test('requests admitted through Redis are counted in the fallback window too, and age out with it', () => {
    const w = new MemoryWindow();
    for (let i = 0; i < 8; i++) w.record('k', 1000, 10_000 + i);
    expect(w.hit('k', 10, 1000, 10_100)).toMatchObject({ allowed: true, remaining: 1 });
    expect(w.hit('k', 10, 1000, 10_100)).toMatchObject({ allowed: true, remaining: 0 });
    expect(w.hit('k', 10, 1000, 10_100).allowed).toBe(false);
    // One window after the recorded requests they no longer count.
    expect(w.hit('k', 10, 1000, 11_050)).toMatchObject({ allowed: true, remaining: 7 });
  });

  test('while Redis admits an active account, the fallback log keeps only the last window', () => {
    const w = new MemoryWindow();
    // An hour of 100 requests a second, every one admitted through Redis.
    const t0 = 1_000_000;
    for (let i = 0; i < 360_000; i++) w.record('busy', 60_000, t0 + i * 10);
    // One window's worth (6,000), not the 360,000 recorded.
    expect(w.held('busy')).toBe(6_000);
    expect(w.count('busy', 60_000, t0 + 3_600_000)).toBe(5_999);
  });

  test('in process: refused requests use no budget, and each slot frees exactly one window after its request', () => {
    const w = new MemoryWindow();
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) expect(w.hit('k', 3, 60_000, t0 + i * 10).allowed).toBe(true);
    for (let i = 0; i < 50; i++) expect(w.hit('k', 3, 60_000, t0 + 100 + i).allowed).toBe(false);
    const refused = w.hit('k', 3, 60_000, t0 + 59_999);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetAt: t0 + 60_000 });
    // The first slot frees at t0 + 60 s; the refusals in between did not push it back.
    expect(w.hit('k', 3, 60_000, t0 + 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(w.hit('k', 3, 60_000, t0 + 60_005).allowed).toBe(false);
    expect(w.hit('k', 3, 60_000, t0 + 60_010).allowed).toBe(true);
    expect(w.hit('other', 3, 60_000, t0 + 60_010)).toMatchObject({ allowed: true, remaining: 2 });
  });

  (REDIS ? test : test.skip)('in Redis: the log holds exactly the accepted requests', async () => {
    const acct = await newAccount();
    await admin('set-limits', '--account', String(acct.id), '--general', '4');
    const results = await pool(8, Array.from({ length: 20 }, (_, i) => i), () => acct.test.get(CHEAP));
    expect(results.filter((r) => r.status === 404)).toHaveLength(4);
    expect(results.filter((r) => r.status === 429)).toHaveLength(16);
    const redis = new Redis(REDIS!);
    try {
      expect(await redis.zcard(`${process.env.REDIS_KEY_PREFIX}ratelimit:general:${acct.id}`)).toBe(4);
      const ttl = await redis.pttl(`${process.env.REDIS_KEY_PREFIX}ratelimit:general:${acct.id}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      redis.disconnect();
    }
  });
});

describe('shared state and Redis outages', () => {
  (REDIS ? test : test.skip)('with Redis unreachable the gateway keeps serving with in-process limits, says so, and returns to Redis', async () => {
    // A TCP relay to the real Redis that the test can cut and restore.
    const target = new URL(REDIS!);
    const sockets = new Set<net.Socket>();
    const relayPort = await freePort();
    const makeRelay = () =>
      net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 6379), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
    let relay = makeRelay();
    await new Promise<void>((r) => relay.listen(relayPort, '127.0.0.1', r));
    const url = new URL(REDIS!);
    url.host = `127.0.0.1:${relayPort}`;
    const gw = await startGatewayProcess({ REDIS_URL: url.toString() });
    const health = async () => JSON.parse((await plainGet(gw.httpPort, '/healthz')).body);
    const gauge = async () => /^ratelimit_fallback_active (\d)/m.exec((await plainGet(gw.metricsPort, '/metrics')).body)?.[1];
    const waitFor = async (store: string) => {
      for (let i = 0; i < 100 && (await health()).shared_state?.store !== store; i++) await new Promise((r) => setTimeout(r, 100));
      expect((await health()).shared_state.store).toBe(store);
    };
    try {
      const acct = await newAccount();
      await waitFor('redis');
      expect(await gauge()).toBe('0');
      expect((await acct.test.get(CHEAP, { port: gw.httpsPort })).headers['x-ratelimit-remaining']).toBe('599');

      relay.close();
      sockets.forEach((s) => s.destroy());
      const during = await acct.test.get('/v2/publishers', { port: gw.httpsPort });
      expect(during.status).toBe(200);
      expect(during.headers['x-ratelimit-limit']).toBe('600');
      // The fallback window starts from what this gateway already counted, not from a fresh budget.
      expect(during.headers['x-ratelimit-remaining']).toBe('598');
      await waitFor('in-process');
      const h = await health();
      expect(h).toMatchObject({ status: 'ok', shared_state: { store: 'in-process', redis: 'unavailable' } });
      expect(await gauge()).toBe('1');

      relay = makeRelay();
      await new Promise<void>((r) => relay.listen(relayPort, '127.0.0.1', r));
      await waitFor('redis');
      expect(await gauge()).toBe('0');
      // Back on the shared log: the first request's entry is still there.
      expect((await acct.test.get(CHEAP, { port: gw.httpsPort })).headers['x-ratelimit-remaining']).toBe('598');
      // Said once, not once per request.
      expect(gw.output().match(/redis unreachable/g)?.length).toBe(1);
    } finally {
      await gw.stop();
      relay.close();
      sockets.forEach((s) => s.destroy());
    }
  }, 60_000);

  test('/healthz names the shared-state store', async () => {
    const res = await request('GET', '/healthz', undefined, { plainHttp: true });
    expect(res.body.shared_state).toEqual(REDIS ? { store: 'redis', redis: 'ok' } : { store: 'in-process', redis: 'not configured' });
  });
});
