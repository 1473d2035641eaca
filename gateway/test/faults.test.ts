/**
 * Faults injected into a platform of this file's own (so other suites never see them): a service
 * killed and restarted by the launcher, Postgres restarted (a server of its own), and a gateway stopped with
 * SIGTERM, each during a stream of requests. Every answered request has a correct status in the error
 * shape, none hangs, and every acknowledged write is readable afterwards.
 */
import { credentials } from '@grpc/grpc-js';
import pgDriver from 'pg';
import { AccountsClient, Mode, type ListApiKeysResponse } from '../../proto/gen/adserver/accounts/v1/accounts';
import { as, request, type ApiResponse, type Client } from './support/api';
import { pool, readPids, startGatewayProcess } from './support/gateway-process';
import { startOwnPlatform, type OwnPlatform } from './support/own-platform';
import type { PlatformInfo } from './support/platform';
import { platformMetadata, unary } from './support/service-replica';
import { available as tempPostgres, startTempPostgres, type TempPostgres } from './support/temp-postgres';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  status: number;
  ms: number;
  id?: number;
  name: string;
  error?: string;
}

/** Creates publishers one after another on `workers` lanes until `stop()` is called. */
function writeStream(client: Client, port: number, workers = 4) {
  const outcomes: Outcome[] = [];
  let running = true;
  let n = 0;
  const lanes = Array.from({ length: workers }, async () => {
    while (running) {
      const name = `fault-${n++}`;
      const started = Date.now();
      try {
        const res = await client.post('/v1/publishers', { name }, { port });
        outcomes.push({ status: res.status, ms: Date.now() - started, id: res.body?.id, name, error: res.status === 200 ? undefined : checkErrorShape(res) });
      } catch (err) {
        outcomes.push({ status: 0, ms: Date.now() - started, name, error: (err as Error).message });
      }
      await sleep(5);
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(lanes);
      return outcomes;
    },
  };
}

function checkErrorShape(res: ApiResponse): string | undefined {
  const b = res.body;
  return b?.object === 'error' && b.http_status === res.status && b.status === res.status && typeof b.message === 'string' ? undefined : `bad error body: ${res.text.slice(0, 200)}`;
}

async function until(what: string, fn: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(100);
  }
}

describe('faults on a platform of its own', () => {
  let own: OwnPlatform;
  let info: PlatformInfo;
  let client: Client;
  let port: number;
  const health = async () => (await request('GET', '/healthz', undefined, { plainHttp: true, port: Number(info.env.GATEWAY_HTTP_PORT) })).body;

  // The platform runs on a Postgres server of this file's own (where the machine has the binaries), so
  // that restarting it disturbs no other suite running meanwhile.
  let pg: TempPostgres | undefined;

  beforeAll(async () => {
    if (tempPostgres()) pg = await startTempPostgres();
    own = await startOwnPlatform(pg ? { DATABASE_URL: pg.url } : {});
    ({ info, port } = own);
    client = (await own.newAccount()).test;
  }, 200_000);

  afterAll(async () => {
    await own?.stop();
    pg?.stop();
  }, 60_000);

  async function verifyAcknowledged(outcomes: Outcome[]): Promise<number> {
    const acked = outcomes.filter((o) => o.status === 200);
    const reads = await pool(8, acked, (o) => client.get(`/v1/publishers/${o.id}`, { port }));
    reads.forEach((r, i) => expect([r.status, r.body?.name]).toEqual([200, acked[i].name]));
    return acked.length;
  }

  test('readiness is the gateway\'s own: a frozen service fails /healthz, not /readyz; keys stay checkable from the cache; /livez answers', async () => {
    const probe = async (path: string) => request('GET', path, undefined, { plainHttp: true, port: Number(info.env.GATEWAY_HTTP_PORT) });
    expect((await client.get('/v1/publishers?limit=1', { port })).status).toBe(200); // caches this key
    expect(await probe('/readyz')).toMatchObject({ status: 200, body: { status: 'ok', listeners: 'ok', keys: 'ok' } });
    expect(await probe('/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const pids = readPids(info.dataDir);
    // SIGSTOP: the process stays (the launcher does not restart it) but answers nothing.
    process.kill(pids.selfserve, 'SIGSTOP');
    process.kill(pids.accounts, 'SIGSTOP');
    try {
      await until('healthz reports selfserve down', async () => (await health()).services?.selfserve === 'unavailable', 10_000);
      const healthz = await probe('/healthz');
      expect(healthz.status).toBe(503);
      expect(healthz.body).toMatchObject({ status: 'unavailable', services: { selfserve: 'unavailable', accounts: 'unavailable' } });
      // Accounts is frozen too, but the key resolved a moment ago is cached: still ready.
      const ready = await probe('/readyz');
      expect(ready).toMatchObject({ status: 200, body: { status: 'ok', keys: 'cached' } });
      expect(ready.body.cached_keys).toBeGreaterThan(0);
      expect((await probe('/livez')).status).toBe(200);
    } finally {
      process.kill(pids.accounts, 'SIGCONT');
      process.kill(pids.selfserve, 'SIGCONT');
    }
    await until('healthz ok again', async () => (await health()).status === 'ok', 20_000);
  }, 60_000);

  test('a killed service: requests answer 503 JSON meanwhile, never hang, /healthz names it, and all recovers on its own', async () => {
    expect((await client.post('/v1/publishers', { name: 'warm' }, { port })).status).toBe(200);
    const stream = writeStream(client, port);
    await sleep(500);
    const victim = readPids(info.dataDir).accounts;
    process.kill(victim, 'SIGKILL');
    await until('healthz reports accounts down', async () => (await health()).services?.accounts === 'unavailable', 10_000);
    expect((await health()).status).toBe('unavailable');
    await until('the launcher restarts accounts', async () => readPids(info.dataDir).accounts !== victim && (await health()).status === 'ok');
    await sleep(500);
    const outcomes = await stream.stop();
    const statuses = new Set(outcomes.map((o) => o.status));
    expect([...statuses].every((s) => s === 200 || s === 503)).toBe(true);
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(15_000);
    expect(outcomes[outcomes.length - 1].status).toBe(200);
    const verified = await verifyAcknowledged(outcomes);
    process.stdout.write(`faults: service kill: ${outcomes.length} requests, ${outcomes.filter((o) => o.status === 503).length} answered 503, ${verified} writes verified\n`);
  }, 120_000);

  (tempPostgres() ? test : test.skip)('Postgres restarted while writes run: requests fail cleanly, pools reconnect, no acknowledged write is lost', async () => {
    const stream = writeStream(client, port);
    await sleep(500);
    pg!.restart();
    await until('writes succeed again', async () => (await client.post('/v1/publishers', { name: 'after restart' }, { port })).status === 200, 30_000);
    await sleep(300);
    const outcomes = await stream.stop();
    expect(outcomes.filter((o) => o.error)).toEqual([]);
    expect(outcomes.every((o) => [200, 503].includes(o.status))).toBe(true);
    expect(outcomes[outcomes.length - 1].status).toBe(200);
    const verified = await verifyAcknowledged(outcomes);
    process.stdout.write(`faults: postgres restart: ${outcomes.length} requests, ${outcomes.filter((o) => o.status !== 200).length} refused, ${verified} writes verified\n`);

    // Accounts listens for key revocations again on the restarted server: a key deleted now is refused
    // at once, not only when the gateway's key cache expires.
    const db = new pgDriver.Client({ connectionString: pg!.url });
    await db.connect();
    const accounts = new AccountsClient(info.env.ACCOUNTS_ADDR, credentials.createInsecure());
    try {
      await until('the revocation listener is back', async () => (await db.query("select 1 from pg_stat_activity where query like 'listen %'")).rows.length > 0, 10_000);
      const acct = await own.newAccount();
      expect((await acct.live.get('/v2/publishers')).status).toBe(200);
      const md = platformMetadata(info);
      const { keys } = await unary<ListApiKeysResponse>(accounts, 'listApiKeys', { accountId: acct.id }, md);
      await unary(accounts, 'deleteApiKey', { accountId: acct.id, keyId: keys.find((k) => k.mode === Mode.MODE_LIVE)!.id }, md);
      await until('the deleted key is refused', async () => (await acct.live.get('/v2/publishers')).status === 403, 1000);
    } finally {
      accounts.close();
      await db.end();
    }
  }, 120_000);

  test('SIGTERM on a gateway: in-flight requests finish, then it exits 0', async () => {
    const gw = await startGatewayProcess({ ...info.env });
    const inFlight = Array.from({ length: 24 }, (_, i) => as(client.key).post('/v1/publishers', { name: `draining-${i}` }, { port: gw.httpsPort }).catch((e: Error) => ({ error: String(e?.message ?? e) })));
    await sleep(30);
    const code = gw.stop();
    const results = await Promise.all(inFlight);
    expect(await code).toBe(0);
    const answered = results.filter((r): r is ApiResponse => 'status' in r);
    expect(answered.length).toBeGreaterThan(0);
    for (const r of answered) expect(r.status).toBe(200);
    await verifyAcknowledged(answered.map((r) => ({ status: r.status, ms: 0, id: r.body.id, name: r.body.name })));
    // A connection the gateway closed before reading its request (refused, or an idle keep-alive socket
    // reset) must not have been acted on: no answer was lost after a write.
    const names = new Set<string>();
    for (let offset = 0; ; offset += 100) {
      const page = await client.get(`/v1/publishers?limit=100&offset=${offset}`, { port });
      page.body.data.forEach((p: { name: string }) => names.add(p.name));
      if (!page.body.has_more) break;
    }
    results.forEach((r, i) => {
      if ('error' in r) {
        expect(r.error).toMatch(/ECONNREFUSED|ECONNRESET|socket hang up/);
        expect(names.has(`draining-${i}`)).toBe(false);
      }
    });
  }, 60_000);
});
