import crypto from 'node:crypto';
import { expectError, newAccount, type Client, type TestAccount } from './support/api';
import { startGatewayProcess } from './support/gateway-process';

const key = () => `k-${crypto.randomUUID()}`;
const withKey = (k: string) => ({ headers: { 'Idempotency-Key': k } });

async function count(client: Client, path: string, name: string): Promise<number> {
  const res = await client.get(`${path}?limit=100`);
  expect(res.status).toBe(200);
  return res.body.data.filter((o: { name: string }) => o.name === name).length;
}

describe('Idempotency-Key on POST', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await newAccount();
  });

  test('a retry with the same key and body replays the first response and creates nothing more', async () => {
    const k = key();
    const first = await acct.test.post('/v2/publishers', { name: 'Once', email: 'once@example.com' }, withKey(k));
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same body with its keys in another order is the same request.
    const again = await acct.test.post('/v2/publishers', { email: 'once@example.com', name: 'Once' }, withKey(k));
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await count(acct.test, '/v2/publishers', 'Once')).toBe(1);
  });

  test('the same key with a different body or path is refused: 409 in v2, 400 in v1, changing nothing', async () => {
    const k = key();
    expect((await acct.test.post('/v2/publishers', { name: 'First body' }, withKey(k))).status).toBe(200);
    const other = expectError(await acct.test.post('/v2/publishers', { name: 'Second body' }, withKey(k)), 409, 'v2');
    expect(other.type).toBe('idempotency_error');
    expect(other.message).toMatch(/different request/);
    expectError(await acct.test.post('/v2/advertisers', { name: 'First body' }, withKey(k)), 409, 'v2');

    const k1 = key();
    expect((await acct.test.post('/v1/publishers', { name: 'V1 first' }, withKey(k1))).status).toBe(200);
    expect(expectError(await acct.test.post('/v1/publishers', { name: 'V1 second' }, withKey(k1)), 400, 'v1').type).toBe('idempotency_error');
    expect(await count(acct.test, '/v2/publishers', 'Second body')).toBe(0);
    expect(await count(acct.test, '/v2/advertisers', 'First body')).toBe(0);
    expect(await count(acct.test, '/v1/publishers', 'V1 second')).toBe(0);
  });

  test('concurrent requests with one key create one resource and all get its answer', async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 12 }, () => acct.test.post('/v2/advertisers', { name: 'Raced' }, withKey(k))));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(11);
    expect(await count(acct.test, '/v2/advertisers', 'Raced')).toBe(1);
  });

  test('keys are scoped to account and mode', async () => {
    const other = await newAccount();
    const k = key();
    const mine = await acct.test.post('/v2/publishers', { name: 'Scoped' }, withKey(k));
    const live = await acct.live.post('/v2/publishers', { name: 'Scoped' }, withKey(k));
    const theirs = await other.test.post('/v2/publishers', { name: 'Scoped' }, withKey(k));
    for (const r of [mine, live, theirs]) {
      expect(r.status).toBe(200);
      expect(r.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(await count(acct.live, '/v2/publishers', 'Scoped')).toBe(1);
    expect(await count(other.test, '/v2/publishers', 'Scoped')).toBe(1);
  });

  test('a refused first request is replayed as refused; without a key every POST runs', async () => {
    const k = key();
    const bad = expectError(await acct.test.post('/v2/publishers', { email: 'no-name@example.com' }, withKey(k)), 400, 'v2');
    const again = await acct.test.post('/v2/publishers', { email: 'no-name@example.com' }, withKey(k));
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(bad);
    for (let i = 0; i < 2; i++) expect((await acct.test.post('/v2/publishers', { name: 'No key' })).status).toBe(200);
    expect(await count(acct.test, '/v2/publishers', 'No key')).toBe(2);
  });

  test('a malformed key is refused with 400 and creates nothing', async () => {
    for (const bad of ['x'.repeat(256), 'has space', 'ünïcode']) {
      const res = await acct.test.post('/v2/publishers', { name: 'Bad key' }, { headers: { 'Idempotency-Key': bad } });
      expect(expectError(res, 400, 'v2').message).toContain('Idempotency-Key');
    }
    expect(await count(acct.test, '/v2/publishers', 'Bad key')).toBe(0);
  });

  test('malformed JSON with a key is a 400 like without one', async () => {
    const res = await acct.test.request('POST', '/v2/publishers', undefined, { raw: '{"name":', headers: { 'Idempotency-Key': key() } });
    expect(expectError(res, 400, 'v2').type).toBe('invalid_json_error');
  });

  (process.env.REDIS_URL ? test : test.skip)('with Redis a retry through another gateway replica is replayed', async () => {
    const gw = await startGatewayProcess();
    try {
      const k = key();
      const first = await acct.test.post('/v2/publishers', { name: 'Across replicas' }, withKey(k));
      const again = await acct.test.post('/v2/publishers', { name: 'Across replicas' }, { ...withKey(k), port: gw.httpsPort });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      const raced = await Promise.all(
        Array.from({ length: 8 }, (_, i) => acct.test.post('/v2/advertisers', { name: 'Raced across' }, { ...withKey(`${k}-r`), port: i % 2 ? gw.httpsPort : undefined })),
      );
      expect(new Set(raced.map((r) => r.body.id)).size).toBe(1);
      expect(await count(acct.test, '/v2/advertisers', 'Raced across')).toBe(1);
    } finally {
      await gw.stop();
    }
  }, 40_000);
});
