/**
 * Native-to-image tasks with two inventory processes on one database (the platform's inventory, A, and
 * a replica, B): every task runs exactly once (claimed with a lease), a task whose holder is SIGKILLed
 * is taken over by the other once its lease ends but not before, and each rendered file is served at its
 * file_url over HTTPS whichever replica made it (the gateway reads files through A).
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { request, newAccount, type TestAccount } from '../../../gateway/test/support/api';
import type { PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl, startServiceReplica, type ServiceReplica } from '../../../gateway/test/support/service-replica';
import { nativeFixture } from './v2-fixtures';

jest.setTimeout(90_000);

/** B's lease: short, so that a task B held when it was killed is taken over within the test. */
const LEASE_MS = 2000;

let info: PlatformInfo;
let replicaB: ServiceReplica;
let db: pg.Client;
let acct: TestAccount;
const tasks = () => `${process.env.DATABASE_URL ? info.schemaPrefix : ''}inventory.native_to_image_tasks`;
const files = () => `${process.env.DATABASE_URL ? info.schemaPrefix : ''}inventory.creative_files`;
// Worker ids are `host-pid-random` (services/shared/lease-queue.ts).
const ownedBy = (owner: string | null, r: ServiceReplica) => owner?.includes(`-${r.proc.pid}-`) ?? false;

beforeAll(async () => {
  info = JSON.parse(process.env.TEST_PLATFORM!);
  replicaB = await startServiceReplica(info, 'inventory', { NATIVE_TO_IMAGE_POLL_MS: '20', NATIVE_TO_IMAGE_LEASE_MS: String(LEASE_MS) });
  db = new pg.Client({ connectionString: platformDatabaseUrl(info) });
  await db.connect();
  acct = await newAccount(['native-to-image']);
}, 60_000);

afterAll(async () => {
  await db?.end();
  await replicaB?.stop();
});

/** Inserts tasks due at once (one statement, so that the replicas race for them) and returns their ids. */
async function insertTasks(item: { id: number }, group: { id: number }, n: number, extra: { file_name?: string[] } = {}): Promise<number[]> {
  const { rows } = await db.query(
    `insert into ${tasks()} (account_id, mode, native_ad_item, media_group, width, height, name, file_name)
     select $1, 'test', $2, $3, 100 + i, 50, 'Copy ' || i, ($4::text[])[i] from generate_series(1, $5::int) as i
     returning id`,
    [acct.id, item.id, group.id, extra.file_name ?? [], n],
  );
  return rows.map((r) => Number(r.id));
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('forty tasks due at once on two replicas each run exactly once, and each file is served at its file_url', async () => {
  const { item, group } = await nativeFixture(acct.test);
  const ids = await insertTasks(item, group, 40);
  const rows = await until('every task to finish', async () => {
    const { rows } = await db.query(`select id, status, attempts, lease_owner, image_creative, file_name from ${tasks()} where id = any($1)`, [ids]);
    return rows.every((r) => r.status === 'success' || r.status === 'error') ? rows : undefined;
  });
  expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'success'));
  // Claimed once each: a second claim would have counted a second attempt.
  expect(rows.filter((r) => r.attempts !== 1)).toEqual([]);
  const byB = rows.filter((r) => ownedBy(r.lease_owner, replicaB));
  expect(byB.length).toBeGreaterThan(0);
  console.log(`tasks run: ${byB.length} by replica B, ${rows.length - byB.length} by the platform's inventory`);

  // One creative per task, none twice, each with its own file.
  const creatives = (await acct.test.get(`/v2/creatives/image?limit=100`)).body.data.filter((c: any) => c.group === group.id);
  expect(creatives).toHaveLength(40);
  expect(new Set(creatives.map((c: any) => c.file_url)).size).toBe(40);
  expect(new Set(rows.map((r) => Number(r.image_creative)))).toEqual(new Set(creatives.map((c: any) => c.id)));

  // Files made on either replica are served over HTTPS, without a key, at their file_url's path.
  const madeByB = creatives.find((c: any) => c.id === Number(byB[0].image_creative));
  const madeByA = creatives.find((c: any) => !byB.some((r) => Number(r.image_creative) === c.id));
  for (const c of [madeByB, madeByA].filter(Boolean)) {
    const path = new URL(c.file_url).pathname;
    expect(path).toMatch(/^\/creatives\/native-to-image-\d+-[A-Za-z0-9_-]{16}\.svg$/);
    const file = await request('GET', path);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('image/svg+xml');
    expect(file.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(file.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(Number(file.headers['content-length'])).toBe(c.file_size);
    expect(file.text).toContain(`width="${c.width}" height="50"`);
    expect(file.text).toContain('Running &lt;shoes&gt;');
    // The plain HTTP listener answers it too (an ad tag on an http page may load it).
    const plain = await request('GET', path, undefined, { plainHttp: true });
    expect([plain.status, plain.headers['content-type'], plain.text]).toEqual([200, 'image/svg+xml', file.text]);
    const again = await request('GET', path, undefined, { headers: { 'If-None-Match': String(file.headers.etag) } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  }
  expect(madeByA ?? madeByB).toBeDefined();
});

test('a creative file is public but unguessable: unknown and malformed names answer 404 JSON, other methods answer 501', async () => {
  for (const p of ['/creatives/no-such-file.svg', '/creatives/..%2Finventory', `/creatives/${'a'.repeat(200)}.svg`]) {
    const res = await request('GET', p);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ object: 'error', http_status: 404 });
  }
  const del = await request('DELETE', '/creatives/no-such-file.svg');
  expect(del.status).toBe(501);
  expect(del.body).toMatchObject({ object: 'error', type: 'method_not_supported_error' });
});

/**
 * Holds `replica` inside a task: two tasks are due with pre-named files, and an open transaction of this
 * test has inserted those names, so a worker that reaches the file's insert waits until `release()`.
 * The replica polls every 20 ms and runs one task at a time, so it holds one of them (the platform's
 * inventory may hold the other, or be busy elsewhere).
 */
async function holdInTask(replica: ServiceReplica, item: { id: number }, group: { id: number }) {
  const names = [1, 2].map(() => `native-to-image-held-${crypto.randomBytes(8).toString('hex')}.svg`);
  const lock = new pg.Client({ connectionString: platformDatabaseUrl(info) });
  await lock.connect();
  await lock.query('begin');
  for (const name of names) {
    await lock.query(`insert into ${files()} (name, account_id, mode, content_type, body, etag) values ($1, $2, 'test', 'text/plain', '', '')`, [name, acct.id]);
  }
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await lock.query('rollback').catch(() => undefined);
    await lock.end().catch(() => undefined);
  };
  try {
    const ids = await insertTasks(item, group, 2, { file_name: names });
    const held = await until('the replica to hold a task', async () => {
      const { rows } = await db.query(`select id, status, lease_owner from ${tasks()} where id = any($1)`, [ids]);
      return rows.find((r) => r.status === 'running' && ownedBy(r.lease_owner, replica));
    });
    return { ids, held, fileName: names[ids.indexOf(Number(held.id))], release };
  } catch (err) {
    await release();
    throw err;
  }
}

const exited = (r: ServiceReplica) =>
  new Promise<number | null>((resolve) => (r.proc.exitCode !== null || r.proc.signalCode !== null ? resolve(r.proc.exitCode) : r.proc.once('exit', (code) => resolve(code))));

test('a task whose replica is SIGKILLed while holding it is taken over by the other replica when its lease ends, not before', async () => {
  const { item, group } = await nativeFixture(acct.test);
  const { ids, held, fileName, release } = await holdInTask(replicaB, item, group);
  try {
    // Longer than the lease: B renews it while it works, so nobody takes the task from a live replica.
    await new Promise((r) => setTimeout(r, LEASE_MS + 500));
    const stillB = (await db.query(`select status, attempts, lease_owner from ${tasks()} where id = $1`, [held.id])).rows[0];
    expect(stillB).toMatchObject({ status: 'running', attempts: 1, lease_owner: held.lease_owner });

    replicaB.proc.kill('SIGKILL');
    await exited(replicaB);
    const killedAt = Date.now();
    await release();

    // B's last renewal set its lease to end at least 2/3 of LEASE_MS after the kill: until then it stays B's.
    await new Promise((r) => setTimeout(r, 300));
    expect((await db.query(`select status, lease_owner from ${tasks()} where id = $1`, [held.id])).rows[0]).toEqual({ status: 'running', lease_owner: held.lease_owner });

    const done = await until('the orphaned task to be completed', async () => {
      const { rows } = await db.query(`select status, attempts, lease_owner, image_creative, completed_at from ${tasks()} where id = $1`, [held.id]);
      return rows[0].status === 'running' || rows[0].status === 'queued' ? undefined : rows[0];
    });
    const tookOverAfter = new Date(done.completed_at).getTime() - killedAt;
    console.log(`orphaned task completed ${tookOverAfter} ms after its replica was killed (lease ${LEASE_MS} ms)`);
    expect(done).toMatchObject({ status: 'success', attempts: 2 });
    expect(ownedBy(done.lease_owner, replicaB)).toBe(false);
    // The other task (held by A, or run once free) completes too, once.
    const other = await until('the other task', async () => {
      const { rows } = await db.query(`select status, attempts from ${tasks()} where id = any($1) and id <> $2`, [ids, held.id]);
      return rows[0].status === 'success' ? rows[0] : undefined;
    });
    expect(other.attempts).toBe(1);

    // Exactly one creative for the task, and its file is the one named before the crash, served.
    const fileUrl = `${info.env.SERVE_BASE_URL}/creatives/${fileName}`;
    const creatives = (await acct.test.get('/v2/creatives/image?limit=100')).body.data.filter((c: any) => c.file_url === fileUrl);
    expect(creatives.map((c: any) => c.id)).toEqual([Number(done.image_creative)]);
    const file = await request('GET', new URL(fileUrl).pathname);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('image/svg+xml');
  } finally {
    await release();
  }
});

test('a replica stopped (SIGTERM) while stuck in a task hands it back at once instead of leaving it to its lease', async () => {
  // Its lease is the default 30 s: a task completed well before that was handed back, not taken over.
  const replicaC = await startServiceReplica(info, 'inventory', { NATIVE_TO_IMAGE_POLL_MS: '20' });
  const { item, group } = await nativeFixture(acct.test);
  const { held, release } = await holdInTask(replicaC, item, group);
  try {
    const stoppedAt = Date.now();
    const code = replicaC.stop(30_000);
    // It gives the task 5 s to finish, then queues it again for any replica: seen queued, or already
    // claimed by another replica (the platform's polls too), well before C's 30 s lease could expire.
    await until('the task to be handed back', async () => {
      const { rows } = await db.query(`select status, lease_owner from ${tasks()} where id = $1`, [held.id]);
      const queued = rows[0].status === 'queued' && rows[0].lease_owner === null;
      const retaken = rows[0].status === 'running' && rows[0].lease_owner !== null && !ownedBy(rows[0].lease_owner, replicaC);
      return queued || retaken ? true : undefined;
    }, 15_000);
    // (Its database pool waits for the stuck statement before the process exits.)
    await release();
    expect(await code).toBe(0);
    const done = await until('the handed-back task to be completed', async () => {
      const { rows } = await db.query(`select status, attempts, lease_owner from ${tasks()} where id = $1`, [held.id]);
      return rows[0].status === 'success' ? rows[0] : undefined;
    }, 20_000);
    expect(done.attempts).toBe(2);
    expect(ownedBy(done.lease_owner, replicaC)).toBe(false);
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
  } finally {
    await release();
    await replicaC.stop();
  }
});
