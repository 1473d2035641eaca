/**
 * A native-to-image task survives a restart of inventory. This file runs its own platform (so stopping
 * its inventory disturbs no other test), where tasks wait a few seconds before they run: long enough
 * to stop inventory while the task is still queued.
 */
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { newAccount } from '../../../gateway/test/support/api';
import { readPids } from '../../../gateway/test/support/gateway-process';
import { dropSchemas, startPlatform, stopPlatform, type PlatformInfo } from '../../../gateway/test/support/platform';
import { nativeFixture } from './v2-fixtures';

jest.setTimeout(180_000);

let info: PlatformInfo;
let proc: ChildProcess;

beforeAll(async () => {
  ({ info, proc } = await startPlatform({ NATIVE_TO_IMAGE_DELAY_MS: '4000' }));
  for (const [k, v] of Object.entries(info.env)) process.env[k] = v;
  // api.ts reads the platform's addresses and certificate from the environment at first use: after this.
  process.env.TEST_CA_FILE = path.join(info.dataDir, 'tls', 'localhost.crt');
}, 180_000);

afterAll(async () => {
  if (proc?.pid) await stopPlatform(proc.pid, 30_000, info?.dataDir);
  if (info) await dropSchemas(info.schemaPrefix);
});

async function untilRestarted(oldPid: number): Promise<number> {
  const until = Date.now() + 60_000;
  for (;;) {
    const pid = readPids(info.dataDir).inventory;
    if (pid && pid !== oldPid) return pid;
    if (Date.now() > until) throw new Error('inventory was not restarted');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function taskOf(client: { get: (p: string) => Promise<{ status: number; body: any }> }, url: string, done: (b: any) => boolean, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await client.get(url);
    if (res.status === 200 && done(res.body)) return res.body;
    if (Date.now() > until) throw new Error(`task state not reached: ${res.status} ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a task queued when inventory stops is resumed at its start and completes with an image creative', async () => {
  const acct = await newAccount(['native-to-image']);
  const { item, group } = await nativeFixture(acct.test);
  const res = await acct.test.post(`${item.self}/to-image`, { media_group: group.id, size: '300x250', name: 'After restart' });
  expect(res.status).toBe(200);
  const url = res.body.data.task_url;
  expect((await acct.test.get(url)).body.data).toMatchObject({ status: 'queued', results: null, percent_complete: 0 });

  const before = readPids(info.dataDir).inventory;
  process.kill(before, 'SIGTERM');
  await untilRestarted(before);

  const done = await taskOf(acct.test, url, (b) => b.data.results !== null);
  expect(done.data).toMatchObject({ status: 'success', results: { status: 'success', extra: { size: '300x250', media_group: group.id } } });
  const creative = await acct.test.get(`/v2/creatives/image/${done.data.results.extra.image_creative}`);
  expect(creative.body).toMatchObject({ name: 'After restart', width: 300, height: 250, group: group.id, mime_type: 'image/svg+xml' });
  // The file is served at its file_url (the path under SERVE_BASE_URL, here through the gateway).
  const file = await acct.test.get(new URL(creative.body.file_url).pathname, { headers: { Authorization: '' } });
  expect(file.status).toBe(200);
  expect(file.headers['content-type']).toMatch(/^image\/svg\+xml/);
  expect(file.text).toContain('Running &lt;shoes&gt;');
  // Exactly one creative was made for the task.
  expect((await acct.test.get('/v2/creatives/image?limit=100')).body.data).toHaveLength(1);
});

test('a task whose native ad item is deleted before it runs ends in error, saying why', async () => {
  const acct = await newAccount(['native-to-image']);
  const { item, group } = await nativeFixture(acct.test);
  const res = await acct.test.post(`${item.self}/to-image`, { media_group: group.id, size: '50x50' });
  expect((await acct.test.del(item.self)).status).toBe(200);
  const done = await taskOf(acct.test, res.body.data.task_url, (b) => b.data.results !== null);
  expect(done.data).toMatchObject({ status: 'error', percent_complete: 1, results: { status: 'error', extra: { message: `No native ad item with id ${item.id} exists.` } } });
  expect((await acct.test.get('/v2/creatives/image')).body.data).toEqual([]);
});
