/**
 * `npm start` as root with the checkout in a private home (`/root` is mode 0700 in most images): the
 * embedded server runs as `postgres`, which cannot traverse that parent. The launcher keeps the
 * cluster under /var/lib/ad-serving (DATA_DIR/postgres links to it), changes no parent's mode, and the
 * data outlives a restart.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT, startPlatform, stopPlatform } from './support/platform';

const asRoot = process.getuid?.() === 0 && !process.env.DATABASE_URL;
const maybe = asRoot ? test : test.skip;
const exec = promisify(execFile);

maybe('as root, a DATA_DIR under a 0700 parent starts, keeps its data across a restart, and no parent is opened up', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'adserver-private-home-'));
  fs.chmodSync(home, 0o700);
  const dataDir = path.join(home, 'app', '.data');
  let cluster = '';
  const admin = (env: Record<string, string>, ...args: string[]) => exec(process.execPath, [path.join(ROOT, 'dist/scripts/admin.js'), ...args], { env: { ...process.env, ...env } });
  try {
    const first = await startPlatform({ DATA_DIR: dataDir });
    let account: number;
    try {
      const made = JSON.parse((await admin(first.info.env, 'create-account', '--name', 'Root home')).stdout);
      account = made.account.id;
      const link = path.join(dataDir, 'postgres');
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
      cluster = fs.realpathSync(link);
      expect(cluster.startsWith('/var/lib/ad-serving/postgres-')).toBe(true);
      expect(fs.existsSync(path.join(cluster, 'PG_VERSION'))).toBe(true);
    } finally {
      await stopPlatform(first.info.pid, 30_000, dataDir);
    }
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    // A restart on the same DATA_DIR finds the same cluster and its data.
    const second = await startPlatform({ DATA_DIR: dataDir });
    try {
      const keys = JSON.parse((await admin(second.info.env, 'list-keys', '--account', String(account))).stdout);
      expect(keys.keys.map((k: { mode: string }) => k.mode).sort()).toEqual(['live', 'test']);
      expect(fs.realpathSync(path.join(dataDir, 'postgres'))).toBe(cluster);
    } finally {
      await stopPlatform(second.info.pid, 30_000, dataDir);
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
    if (cluster) fs.rmSync(path.dirname(cluster), { recursive: true, force: true });
  }
}, 240_000);

maybe('as root, a cluster home that cannot be made is refused in one line naming the directory and the fix', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'adserver-private-home-'));
  fs.chmodSync(home, 0o700);
  // A file where the cluster home's parent should be: nothing can be made under it.
  const blocked = path.join(os.tmpdir(), `adserver-blocked-${process.pid}`);
  fs.writeFileSync(blocked, '');
  try {
    await expect(startPlatform({ DATA_DIR: path.join(home, '.data'), EMBEDDED_POSTGRES_HOME: path.join(blocked, 'pg') })).rejects.toThrow(
      /start failed: the embedded PostgreSQL runs as 'postgres', which cannot reach .*adserver-private-home-.*\.data.*: set DATA_DIR to a directory every user can traverse/,
    );
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(blocked, { force: true });
  }
}, 120_000);
