/**
 * `npm start` as an operator meets it: a launcher killed with -9 leaves its embedded PostgreSQL and
 * services behind, and the next start on the same DATA_DIR recovers them; a clean stop leaves nothing;
 * a platform whose service ports are taken by another platform fails with a clear message instead of
 * reporting itself up through the other platform's services.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from './support/api';
import { promisify } from 'node:util';
import { ROOT, dropSchemas, gatewayHealthy, platformEnv, startPlatform, stopPlatform, type PlatformInfo } from './support/platform';

const execFileAsync = promisify(execFile);

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
    await waitUntil('the relaunched platform', () => {
      const log = fs.readFileSync(logFile, 'utf8');
      if (relaunched!.exitCode !== null) throw new Error(`the relaunched platform exited (${relaunched!.exitCode}):\n${log.slice(-3000)}`);
      return log.includes('Ad serving platform is up');
    });
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
    expect(log).toMatch(new RegExp(`port ${shared.env.ACCOUNTS_GRPC_PORT} for accounts is taken by another program`));
  } finally {
    await stopPlatform(proc.pid!, 30_000, info.dataDir);
    fs.rmSync(info.dataDir, { recursive: true, force: true });
  }
}, 120_000);

test("a second platform whose gateway ports are another platform's refuses at once, naming the port, instead of reporting that one's health", async () => {
  const shared = JSON.parse(process.env.TEST_PLATFORM!) as PlatformInfo;
  const { env, dataDir } = await platformEnv();
  // Its own DATA_DIR and ports, except the gateway's.
  const clash = { ...env, START_QUIET: '0', GATEWAY_HTTP_PORT: shared.env.GATEWAY_HTTP_PORT, GATEWAY_HTTPS_PORT: shared.env.GATEWAY_HTTPS_PORT };
  const logFile = path.join(dataDir, 'clash.log');
  const proc = launch(clash, logFile);
  try {
    const code = await Promise.race([new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c))), new Promise<string>((r) => setTimeout(() => r('still running'), 30_000))]);
    const log = fs.readFileSync(logFile, 'utf8');
    expect(log).not.toMatch(/platform is up/);
    expect(code).toBe(1);
    expect(log).toMatch(new RegExp(`start failed: port (${shared.env.GATEWAY_HTTPS_PORT}|${shared.env.GATEWAY_HTTP_PORT}) for the gateway \\(HTTPS?\\) is taken by another program: stop it, or set GATEWAY_HTTPS?_PORT to a free port`));
    // Nothing was started: no embedded PostgreSQL, no child.
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  } finally {
    await stopPlatform(proc.pid!, 30_000, dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);

test('Ctrl-C to the whole process group drains the gateway before any service stops: every in-flight request answers, the last key-usage flush lands', async () => {
  const tls = process.env.TEST_CA_FILE!;
  // A long call deadline: 200 creates at once on a loaded CI machine can outlast the default 5 s and
  // answer 503 for that reason alone; a service stopping under the gateway still answers 503 at once.
  // A group of its own, as a terminal gives the foreground job: the signal below reaches all of it.
  // (startPlatform tries fresh ports when one it picked was taken meanwhile.)
  const { info, proc } = await startPlatform(
    { TLS_CERT_FILE: tls, TLS_KEY_FILE: tls.replace(/\.crt$/, '.key'), START_QUIET: '0', LOG_LEVEL: 'info', GRPC_DEADLINE_MS: '30000' },
    { detached: true },
  );
  const { env, dataDir, schemaPrefix, logFile } = info;
  try {
    const made = JSON.parse((await execFileAsync(process.execPath, [path.join(ROOT, 'dist/scripts/admin.js'), 'create-account', '--name', 'Group stop'], { env: { ...process.env, ...env } })).stdout);
    const port = Number(env.GATEWAY_HTTPS_PORT);
    const auth = { Authorization: `Basic ${made.keys.live}` };
    expect((await request('GET', '/v2/publishers', undefined, { port, headers: auth })).status).toBe(200);
    // 200 requests in flight, then Ctrl-C to the whole group.
    const inFlight = Array.from({ length: 200 }, (_, i) =>
      request('POST', '/v2/publishers', { name: `P${i}`, email: `p${i}@group.example` }, { port, headers: auth }).then((r) => r.status, (e: Error) => `error: ${e.message}`),
    );
    await new Promise((r) => setTimeout(r, 30));
    process.kill(-proc.pid!, 'SIGINT');
    const statuses = await Promise.all(inFlight);
    await new Promise<void>((resolve) => (proc.exitCode !== null ? resolve() : proc.once('exit', () => resolve())));
    const log = fs.readFileSync(logFile, 'utf8');
    // Refused before it reached the gateway is fine (the listener closed); an answer of a dying service is not.
    expect(statuses.filter((s) => s !== 200 && !String(s).startsWith('error'))).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(log).not.toMatch(/recording key use failed/);
    expect(log).toMatch(/stopped\./);
  } finally {
    await stopPlatform(proc.pid!, 30_000, dataDir);
    await dropSchemas(schemaPrefix).catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);
