/**
 * Native-to-image tasks with two inventory replicas on one database: every task runs exactly once
 * (claimed with a lease), a task held by a replica that died is taken over once its lease runs out but
 * not before, and the rendered file is served at its file_url whichever replica made it.
 */
import pg from 'pg';
import { request, newAccount, type TestAccount } from '../../../gateway/test/support/api';
import type { PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl, startServiceReplica, type ServiceReplica } from '../../../gateway/test/support/service-replica';
import { nativeFixture } from './v2-fixtures';

jest.setTimeout(90_000);

let info: PlatformInfo;
let replica: ServiceReplica;
let db: pg.Client;
let acct: TestAccount;
const schema = () => `${info.schemaPrefix && process.env.DATABASE_URL ? info.schemaPrefix : ''}inventory`;

beforeAll(async () => {
  info = JSON.parse(process.env.TEST_PLATFORM!);
  replica = await startServiceReplica(info, 'inventory', { NATIVE_TO_IMAGE_POLL_MS: '20' });
  db = new pg.Client({ connectionString: platformDatabaseUrl(info) });
  await db.connect();
  acct = await newAccount(['native-to-image']);
}, 60_000);

afterAll(async () => {
  await db?.end();
  await replica?.stop();
});

async function untilDone(url: string, timeoutMs = 30_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await acct.test.get(url);
    if (res.status === 200 && res.body.data.results !== null) return res.body.data;
    if (Date.now() > until) throw new Error(`task not done: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('twenty tasks polled by two replicas each run once, and each file is served at its file_url', async () => {
  const { item, group } = await nativeFixture(acct.test);
  const urls: string[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await acct.test.post(`${item.self}/to-image`, { media_group: group.id, size: `${100 + i}x50`, name: `Copy ${i}` });
    expect(res.status).toBe(200);
    urls.push(res.body.data.task_url);
  }
  const done = await Promise.all(urls.map((u) => untilDone(u)));
  expect(done.every((d) => d.status === 'success')).toBe(true);
  const ids = urls.map((u) => Number(u.split('/').pop()));
  const { rows } = await db.query(`select id, attempts, status from ${schema()}.native_to_image_tasks where id = any($1)`, [ids]);
  expect(rows).toHaveLength(20);
  expect(rows.every((r) => r.attempts === 1 && r.status === 'success')).toBe(true);
  // One creative per task, none twice.
  const creatives = (await acct.test.get(`/v2/creatives/image?limit=100&group=${group.id}`)).body.data.filter((c: any) => c.group === group.id);
  expect(creatives).toHaveLength(20);
  for (const c of creatives.slice(0, 5)) {
    const file = await request('GET', new URL(c.file_url).pathname);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(file.headers['cache-control']).toContain('immutable');
    expect(file.text).toContain(`width="${c.width}"`);
    expect((await request('GET', new URL(c.file_url).pathname, undefined, { headers: { 'If-None-Match': String(file.headers.etag) } })).status).toBe(304);
  }
  expect((await request('GET', '/creatives/no-such-file.svg')).status).toBe(404);
});

test('a task held by a replica that died is taken over when its lease ends, not before', async () => {
  const { item, group } = await nativeFixture(acct.test);
  const res = await acct.test.post(`${item.self}/to-image`, { media_group: group.id, size: '64x64', name: 'Orphaned' });
  const id = Number(res.body.data.task_url.split('/').pop());
  // The state a replica leaves when it is killed mid-task: running, its lease still a few seconds long.
  // (Written before any replica could claim it: the task was made with a delay of 0, so claim it first.)
  await db.query(
    `update ${schema()}.native_to_image_tasks set status = 'running', attempts = 1, lease_owner = 'replica-that-died', lease_until = now() + interval '2 seconds', completed_at = null, image_creative = null where id = $1`,
    [id],
  );
  await new Promise((r) => setTimeout(r, 1000));
  const held = (await db.query(`select status, lease_owner from ${schema()}.native_to_image_tasks where id = $1`, [id])).rows[0];
  expect(held).toEqual({ status: 'running', lease_owner: 'replica-that-died' });
  const done = await untilDone(res.body.data.task_url);
  expect(done.status).toBe('success');
  const after = (await db.query(`select attempts, lease_owner from ${schema()}.native_to_image_tasks where id = $1`, [id])).rows[0];
  expect(after.attempts).toBe(2);
  expect(after.lease_owner).toBeNull();
});
