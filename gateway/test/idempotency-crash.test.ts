/**
 * Idempotency-Key through crashes, on a platform of this file's own: the key is stored by the owning
 * service with what it created, so a retry after a `kill -9` (whether or not the first write committed
 * before its answer was lost) and a retry through a gateway that never saw the key (its own in-process
 * state, as during a Redis outage) both find the first result instead of making a second one.
 */
import { as, type Client } from './support/api';
import { pool, startGatewayProcess } from './support/gateway-process';
import { startOwnPlatform, type OwnPlatform } from './support/own-platform';
import { nativeFixture } from '../../services/inventory/test/v2-fixtures';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CUSTOMERS = '/v2/self-serve/customers';

interface Sent {
  status: number;
  attempts: number;
  replayed: boolean;
  body: any;
}

/** Sends one keyed request until it is answered below 500, retrying 503s (and dropped connections) with the same key. */
async function untilAnswered(send: () => Promise<{ status: number; body: any; headers: Record<string, unknown> }>): Promise<Sent> {
  for (let attempts = 1; ; attempts++) {
    const res = await send().catch(() => ({ status: 0, body: undefined, headers: {} as Record<string, unknown> }));
    if (res.status !== 0 && res.status !== 503) return { status: res.status, attempts, replayed: res.headers['idempotent-replayed'] === 'true', body: res.body };
    if (attempts > 300) throw new Error('no answer after 300 attempts');
    await sleep(150);
  }
}

async function listAll(client: Client, path: string): Promise<any[]> {
  const out: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await client.get(`${path}?limit=100&offset=${offset}`);
    if (page.status !== 200) throw new Error(`${path}: ${page.status} ${page.text.slice(0, 200)}`);
    out.push(...page.body.data);
    if (!page.body.has_more) return out;
  }
}

async function until(what: string, fn: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(50);
  }
}

describe('Idempotency-Key anchored in the owning service', () => {
  let own: OwnPlatform;
  beforeAll(async () => {
    own = await startOwnPlatform();
  }, 200_000);
  afterAll(async () => own?.stop(), 60_000);

  /** Runs `send(i)` for keys 0..n-1 on four lanes and kills `service` with SIGKILL once `killAfter` are answered. */
  async function runWithKill(n: number, killAfter: number, service: string, send: (i: number) => Promise<Sent>) {
    let answered = 0;
    let victim = 0;
    const killer = (async () => {
      await until('enough answers before the kill', () => answered >= killAfter, 60_000);
      victim = own.pids()[service];
      process.kill(victim, 'SIGKILL');
    })();
    const results = await pool(4, Array.from({ length: n }, (_, i) => i), async (i) => {
      const r = await send(i);
      answered++;
      return r;
    });
    await killer;
    await until(`the launcher restarts ${service}`, () => own.pids()[service] !== victim);
    return results;
  }

  test('keyed creates with inventory killed mid-run, each 503 retried with its key: exactly one object per key', async () => {
    const client = (await own.newAccount()).test;
    const N = 120;
    const results = await runWithKill(N, 30, 'inventory', (i) =>
      untilAnswered(() => client.post('/v2/media-groups', { name: `kill-retry-${i}` }, { headers: { 'Idempotency-Key': `kill-retry-key-${i}` } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(N).fill(200));
    const retried = results.filter((r) => r.attempts > 1).length;
    expect(retried).toBeGreaterThan(0);
    const groups = (await listAll(client, '/v2/media-groups')).filter((g) => String(g.name).startsWith('kill-retry-'));
    const perName = new Map<string, number>();
    for (const g of groups) perName.set(g.name, (perName.get(g.name) ?? 0) + 1);
    expect([...perName.values()].filter((c) => c !== 1)).toEqual([]);
    expect(perName.size).toBe(N);
    // Every answer names the one object its key made.
    results.forEach((r, i) => expect(groups.find((g) => g.name === `kill-retry-${i}`).id).toBe(r.body.id));
    process.stdout.write(`idempotency-crash: ${N} keyed creates, ${retried} retried after 503, ${results.filter((r) => r.replayed).length} answered as replays, ${groups.length} objects\n`);
  }, 120_000);

  test('keyed deposits with selfserve killed mid-run, each retried with its key: each applied exactly once', async () => {
    const client = (await own.newAccount()).test;
    const ok = async (p: Promise<{ status: number; body: any }>) => {
      const r = await p;
      if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const portal = (await ok(client.post('/v2/self-serve/portals', { name: 'Portal' }))).id;
    const customer = (await ok(client.post(CUSTOMERS, { email: 'deposits@example.com', password: 'correct horse', portal }))).id;
    const N = 80;
    const results = await runWithKill(N, 20, 'selfserve', (i) =>
      untilAnswered(() => client.put(`${CUSTOMERS}/${customer}/add-funds`, { amount: 0.1 }, { headers: { 'Idempotency-Key': `deposit-${i}` } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(N).fill(200));
    expect(results.filter((r) => r.attempts > 1).length).toBeGreaterThan(0);
    const deposits = await listAll(client, `${CUSTOMERS}/${customer}/transactions`);
    expect(deposits).toHaveLength(N);
    expect(new Set(results.map((r) => r.body.transaction.id)).size).toBe(N);
    expect((await ok(client.get(`${CUSTOMERS}/${customer}`))).balance).toBe(8);
  }, 120_000);

  test('a gateway that never saw a key (its own in-process state, as in a Redis outage) still replays it', async () => {
    const acct = await own.newAccount();
    // A second gateway replica sharing nothing with the first but the services.
    const other = await startGatewayProcess({ ...own.info.env, REDIS_URL: '' });
    try {
      const first = await acct.test.post('/v2/media-groups', { name: 'Across gateways' }, { headers: { 'Idempotency-Key': 'across-1' } });
      expect(first.status).toBe(200);
      const there = await as(acct.testKey, other.httpsPort).post('/v2/media-groups', { name: 'Across gateways' }, { headers: { 'Idempotency-Key': 'across-1' } });
      expect(there.status).toBe(200);
      expect(there.headers['idempotent-replayed']).toBe('true');
      expect(there.body.id).toBe(first.body.id);
      // The other way round, and the key with another body is refused there too.
      const made = await as(acct.testKey, other.httpsPort).post('/v2/media-groups', { name: 'Made over there' }, { headers: { 'Idempotency-Key': 'across-2' } });
      const back = await acct.test.post('/v2/media-groups', { name: 'Made over there' }, { headers: { 'Idempotency-Key': 'across-2' } });
      expect([back.status, back.headers['idempotent-replayed'], back.body.id]).toEqual([200, 'true', made.body.id]);
      const clash = await as(acct.testKey, other.httpsPort).post('/v2/media-groups', { name: 'Another body' }, { headers: { 'Idempotency-Key': 'across-1' } });
      expect([clash.status, clash.body.type]).toEqual([409, 'idempotency_error']);
      const names = (await listAll(acct.test, '/v2/media-groups')).map((g) => g.name).sort();
      expect(names).toEqual(['Across gateways', 'Made over there']);

      // One keyed order sent at once through both gateways: they share no state, so the requests meet
      // in selfserve's database. One order is placed and paid once; the others answer it or say it is
      // still being placed.
      const P = '/v2/self-serve/portals';
      const portal = (await acct.test.post(P, { name: 'Portal' })).body.id;
      const zone = (await acct.test.post('/v2/zones/standard', { name: 'Zone', width: 300, height: 250 })).body.id;
      const pz = (await acct.test.post(`${P}/${portal}/zones`, { zone, name: 'Z', pricing_model: 'fixed-CPC', cpc: 0.35, quantity: 10 })).body.id;
      const customer = (await acct.test.post(CUSTOMERS, { email: 'raced-order@example.com', password: 'correct horse', portal })).body.id;
      expect((await acct.test.put(`${CUSTOMERS}/${customer}/add-funds`, { amount: 12 })).status).toBe(200);
      const cart = (await acct.test.post(`${P}/${portal}/cart`, {})).body.id;
      for (let i = 0; i < 3; i++) expect((await acct.test.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'raw', custom_html: `<i>${i}</i>` })).status).toBe(200);
      const orders = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          as(acct.testKey, i % 2 ? other.httpsPort : own.port).post('/v2/self-serve/orders', { cart, customer }, { headers: { 'Idempotency-Key': 'raced-order' } }),
        ),
      );
      const placed = orders.filter((o) => o.status === 200);
      process.stdout.write(`idempotency-crash: one keyed order sent 6 times at once through two gateways: ${placed.length} answered 200 (${placed.filter((o) => o.headers['idempotent-replayed']).length} as replays), ${orders.length - placed.length} answered 409 still being placed\n`);
      expect(placed.length).toBeGreaterThan(0);
      expect(new Set(placed.map((o) => o.body.id)).size).toBe(1);
      for (const o of orders.filter((r) => r.status !== 200)) expect([o.status, o.body.type]).toEqual([409, 'idempotency_error']);
      const orderRetry = await as(acct.testKey, other.httpsPort).post('/v2/self-serve/orders', { cart, customer }, { headers: { 'Idempotency-Key': 'raced-order' } });
      expect([orderRetry.status, orderRetry.body.id, orderRetry.body.total]).toEqual([200, placed[0].body.id, 10.5]);
      expect((await acct.test.get(`${CUSTOMERS}/${customer}`)).body.balance).toBe(1.5);
      expect((await acct.test.get('/v2/self-serve/orders?limit=100')).body.data).toHaveLength(1);

      // Scheduling a native-to-image task keeps its key in inventory the same way.
      const artist = await own.newAccount(['native-to-image']);
      const fx = await nativeFixture(artist.test);
      const body = { media_group: fx.group.id, size: '300x250' };
      const task = await artist.test.post(`${fx.item.self}/to-image`, body, { headers: { 'Idempotency-Key': 'to-image-1' } });
      expect(task.status).toBe(200);
      const retried = await as(artist.testKey, other.httpsPort).post(`${fx.item.self}/to-image`, body, { headers: { 'Idempotency-Key': 'to-image-1' } });
      expect([retried.status, retried.headers['idempotent-replayed'], retried.body]).toEqual([200, 'true', task.body]);
    } finally {
      await other.stop();
    }
  }, 60_000);
});
