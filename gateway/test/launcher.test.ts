/**
 * `npm start` as an operator meets it: a launcher killed with -9 leaves its embedded PostgreSQL and
 * services behind, and the next start on the same DATA_DIR recovers them; a clean stop leaves nothing;
 * a platform whose service ports are taken by another platform fails with a clear message instead of
 * reporting itself up through the other platform's services.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from './support/api';
import { ROOT, gatewayHealthy, startPlatform, stopPlatform, type PlatformInfo } from './support/platform';

const embedded = !process.env.DATABASE_URL;

/** Running (a zombie waiting for its parent to reap it has exited). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function postmasterPid(info: PlatformInfo): number {
  return Number(fs.readFileSync(path.join(info.dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

function launch(env: Record<string, string>, logFile: string) {
  const out = fs.openSync(logFile, 'a');
  return spawn(process.execPath, [path.join(ROOT, 'dist/scripts/start.js')], { env: { ...process.env, ...env }, stdio: ['ignore', out, out] });
}

(embedded ? test : test.skip)('a start after a kill -9 stops what the killed one left and comes up; SIGTERM then stops everything, PostgreSQL included', async () => {
  // The shared platform's certificate, which the test's HTTPS client trusts.
  const tls = process.env.TEST_CA_FILE!;
  const { info } = await startPlatform({ TLS_CERT_FILE: tls, TLS_KEY_FILE: tls.replace(/\.crt$/, '.key') });
  let relaunched: ReturnType<typeof launch> | undefined;
  const oldChildren = JSON.parse(fs.readFileSync(path.join(info.dataDir, 'pids.json'), 'utf8')) as Record<string, number>;
  try {
    const oldPostmaster = postmasterPid(info);
    process.kill(info.pid, 'SIGKILL');
    await waitUntil('the launcher to die', () => !alive(info.pid));
    expect(alive(oldPostmaster)).toBe(true);
    expect(alive(oldChildren.accounts)).toBe(true);

    const logFile = path.join(info.dataDir, 'relaunch.log');
    relaunched = launch({ ...info.env, START_QUIET: '0' }, logFile);
    // The killed launcher's gateway still answers /healthz until the new launcher stops it: wait for the new one's word.
    await waitUntil('the relaunched platform', () => fs.readFileSync(logFile, 'utf8').includes('Ad serving platform is up'));
    expect(await gatewayHealthy(Number(info.env.GATEWAY_HTTP_PORT))).toBe(200);
    const log = fs.readFileSync(logFile, 'utf8');
    expect(log).toMatch(/embedded PostgreSQL \(pid \d+\) was left running by an earlier start; stopping it/);
    expect(log).toMatch(/accounts \(pid \d+\) was left running by an earlier start; stopping it/);
    expect(alive(oldPostmaster)).toBe(false);
    const newPostmaster = postmasterPid(info);
    expect(newPostmaster).not.toBe(oldPostmaster);

    // A keep-alive API connection is open (as clients keep them); an idle platform still stops at once.
    expect((await request('GET', '/v2/publishers', undefined, { port: Number(info.env.GATEWAY_HTTPS_PORT) })).status).toBe(403);
    const exited = new Promise<number | null>((resolve) => relaunched!.once('exit', (code) => resolve(code)));
    const stopStarted = Date.now();
    relaunched.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - stopStarted).toBeLessThan(5_000);
    // pg_ctl returns once the server removed its pid file, a moment before the process ends.
    await waitUntil('PostgreSQL to exit', () => !alive(newPostmaster), 5_000);
    for (const pid of Object.values(JSON.parse(fs.readFileSync(path.join(info.dataDir, 'pids.json'), 'utf8')) as Record<string, number>)) {
      expect(alive(pid)).toBe(false);
    }
  } finally {
    if (relaunched?.pid) await stopPlatform(relaunched.pid, 30_000, info.dataDir);
    // On a failure midway the killed launcher's children may still run: never leave them behind.
    for (const pid of Object.values(oldChildren)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await stopPlatform(info.pid, 30_000, info.dataDir);
    fs.rmSync(info.dataDir, { recursive: true, force: true });
  }
}, 120_000);

test('a platform whose service port is taken by another platform refuses to start instead of using it', async () => {
  const shared = JSON.parse(process.env.TEST_PLATFORM!) as PlatformInfo;
  const { info } = await startPlatform().then(
    async (p) => {
      await stopPlatform(p.info.pid, 30_000, p.info.dataDir);
      return p;
    },
  );
  // Same layout as a fresh platform, but accounts on the shared platform's port.
  const env = { ...info.env, START_QUIET: '0', ACCOUNTS_GRPC_PORT: shared.env.ACCOUNTS_GRPC_PORT, ACCOUNTS_ADDR: shared.env.ACCOUNTS_ADDR };
  const logFile = path.join(info.dataDir, 'clash.log');
  const proc = launch(env, logFile);
  try {
    const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
    const log = fs.readFileSync(logFile, 'utf8');
    expect(code).not.toBe(0);
    expect(log).not.toMatch(/platform is up/);
    expect(log).toMatch(new RegExp(`accounts exited \\d+ times while starting.*port ${shared.env.ACCOUNTS_GRPC_PORT}`));
  } finally {
    await stopPlatform(proc.pid!, 30_000, info.dataDir);
    fs.rmSync(info.dataDir, { recursive: true, force: true });
  }
}, 120_000);
