/**
 * Key revocation with two accounts replicas: the platform's gateway watches replica A, the key is
 * deleted through replica B, and the gateway refuses it at once (Postgres NOTIFY carries the news
 * between replicas; the gateway's 30 s key cache must not keep it alive).
 */
import { credentials } from '@grpc/grpc-js';
import pg from 'pg';
import { AccountsClient, Mode, type CreateApiKeyResponse, type CreateAccountResponse } from '../../../proto/gen/adserver/accounts/v1/accounts';
import { as, expectError } from '../../../gateway/test/support/api';
import type { PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl, platformMetadata, startServiceReplica, unary, type ServiceReplica } from '../../../gateway/test/support/service-replica';

let info: PlatformInfo;
let replica: ServiceReplica;
let viaReplica: AccountsClient;

beforeAll(async () => {
  info = JSON.parse(process.env.TEST_PLATFORM!);
  replica = await startServiceReplica(info, 'accounts');
  viaReplica = new AccountsClient(replica.address, credentials.createInsecure());
}, 60_000);

afterAll(async () => {
  viaReplica?.close();
  await replica?.stop();
});

async function refusedWithin(key: string, ms: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await as(key).get('/v2/publishers');
    if (res.status === 403) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`key still accepted after ${ms} ms (status ${res.status})`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('a key deleted through another accounts replica stops working on the gateway within a second', async () => {
  const md = platformMetadata(info);
  const made = await unary<CreateAccountResponse>(viaReplica, 'createAccount', { name: 'Revocation across replicas', email: '', password: '', features: [] }, md);
  const extra = await unary<CreateApiKeyResponse>(viaReplica, 'createApiKey', { accountId: made.account!.id, mode: Mode.MODE_LIVE, name: 'Replica test' }, md);
  // Resolved once, so the gateway holds it in its cache.
  expect((await as(extra.secret).get('/v2/publishers')).status).toBe(200);
  expect((await as(extra.secret).get('/v2/publishers')).status).toBe(200);

  await unary(viaReplica, 'deleteApiKey', { accountId: made.account!.id, keyId: extra.key!.id }, md);
  expect(await refusedWithin(extra.secret, 1000)).toBeLessThan(1000);
  expectError(await as(extra.secret).get('/v2/publishers'), 403, 'v2');
  // The account's other keys are untouched.
  expect((await as(made.liveKey).get('/v2/publishers')).status).toBe(200);
});

test('new limits set through another replica apply at once on the gateway', async () => {
  const md = platformMetadata(info);
  const made = await unary<CreateAccountResponse>(viaReplica, 'createAccount', { name: 'Limits across replicas', email: '', password: '', features: [] }, md);
  const key = made.testKey;
  expect((await as(key).get('/v2/publishers')).headers['x-ratelimit-limit']).toBe('600');
  await unary(viaReplica, 'setAccountLimits', { accountId: made.account!.id, generalLimit: 42 }, md);
  const started = Date.now();
  while ((await as(key).get('/v2/publishers')).headers['x-ratelimit-limit'] !== '42') {
    if (Date.now() - started > 1000) throw new Error('the new limit did not reach the gateway within a second');
    await new Promise((r) => setTimeout(r, 25));
  }
});

test('after the replicas lose their Postgres listeners (as in a Postgres restart), revocations still reach the gateway', async () => {
  const md = platformMetadata(info);
  const made = await unary<CreateAccountResponse>(viaReplica, 'createAccount', { name: 'Revocation after reconnect', email: '', password: '', features: [] }, md);
  const mode = { accountId: made.account!.id, mode: Mode.MODE_LIVE, name: 'Replica test' };
  const [first, second] = [await unary<CreateApiKeyResponse>(viaReplica, 'createApiKey', mode, md), await unary<CreateApiKeyResponse>(viaReplica, 'createApiKey', mode, md)];
  for (const k of [first, second]) expect((await as(k.secret).get('/v2/publishers')).status).toBe(200);

  // Cut the listening connections of this platform's accounts processes, as a restarting server does.
  const channel = `${process.env.DATABASE_URL ? info.schemaPrefix : ''}accounts_key_revoked`;
  const db = new pg.Client({ connectionString: platformDatabaseUrl(info) });
  await db.connect();
  const listeners = `select pid from pg_stat_activity where datname = current_database() and query = 'listen "${channel}"'`;
  try {
    const cut = await db.query(`select pg_terminate_backend(pid) as cut from (${listeners}) l`);
    expect(cut.rows.length).toBe(2);
    // Deleted while the listeners are away: the news is lost, so a listener that comes back must tell
    // its gateways to drop every cached key.
    await unary(viaReplica, 'deleteApiKey', { accountId: made.account!.id, keyId: first.key!.id }, md);
    expect(await refusedWithin(first.secret, 3000)).toBeLessThan(3000);
    // And the listeners listen again: a later deletion arrives as usual.
    const back = Date.now();
    while ((await db.query(listeners)).rows.length < 2) {
      if (Date.now() - back > 5000) throw new Error('the listeners did not come back');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await as(second.secret).get('/v2/publishers')).status).toBe(200);
    await unary(viaReplica, 'deleteApiKey', { accountId: made.account!.id, keyId: second.key!.id }, md);
    expect(await refusedWithin(second.secret, 1000)).toBeLessThan(1000);
  } finally {
    await db.end();
  }
});
