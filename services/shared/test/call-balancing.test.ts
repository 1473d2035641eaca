/**
 * Call-level balancing: two processes of one service behind one target name, and the calls of one
 * client channel spread across both (round_robin), where grpc-js's default pick_first would send
 * every call to the first address.
 *
 * In a cluster the name is `dns:///<headless service>:50051`, resolving to every pod. DNS cannot give
 * two ports of 127.0.0.1 here, so the test names both processes with grpc-js's `ipv4:` target, which
 * lists addresses the same way a DNS answer does and goes through the same load-balancing policy.
 *
 * The processes need a Postgres server: DATABASE_URL, else (the embedded run) a temporary server of
 * this file's own (root with Debian's Postgres binaries, as in CI); without either the tests skip.
 *
 * Also: a service started with DB_MIGRATE=false on a schema that was never migrated refuses to start
 * and says why (the chart runs migrations in a Job and the services with a user that cannot run DDL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { ResourcesClient } from '../../../proto/gen/adserver/resources/v1/resources';
import { HealthClient } from '../../../proto/gen/grpc/health/v1/health';
import { channelOptions } from '../grpc/client';
import { dropSchemas, freePort, ROOT } from '../../../gateway/test/support/platform';
import { available as tempPostgresAvailable, startTempPostgres, type TempPostgres } from '../../../gateway/test/support/temp-postgres';

interface ServiceProcess {
  proc: ChildProcess;
  grpcPort: number;
  metricsPort: number;
  logFile: string;
}

const token = crypto.randomBytes(24).toString('base64url');
const schemaPrefix = `tlb${Date.now().toString(36)}_`;
const dirs: string[] = [];
const procs: ChildProcess[] = [];
// The services need a Postgres server: DATABASE_URL, else a server of this file's own.
let tempPg: TempPostgres | undefined;
let databaseUrl = process.env.DATABASE_URL;
const runnable = !!databaseUrl || tempPostgresAvailable();
const maybe = runnable ? test : test.skip;

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'adserver-lb-'));
  dirs.push(dataDir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DB_SCHEMA_PREFIX: schemaPrefix,
    // A stream of their own: on the shared platform's prefix these reporting processes would join its
    // consumer group and store the platform's serving events in this file's schema, where no test looks.
    REDIS_KEY_PREFIX: `adserver-test:${schemaPrefix}:`,
    DATA_DIR: dataDir,
    INTERNAL_TOKEN: token,
    LOG_LEVEL: 'info',
    OTEL_SDK_DISABLED: 'true',
    ...extra,
  };
  return env;
}

async function startService(name: string, extra: Record<string, string> = {}): Promise<ServiceProcess> {
  const grpcPort = await freePort();
  const metricsPort = await freePort();
  const env = baseEnv({ GRPC_PORT: String(grpcPort), METRICS_PORT: String(metricsPort), ...extra });
  const logFile = path.join(env.DATA_DIR!, 'service.log');
  const out = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, [path.join(ROOT, `dist/services/${name}/main.js`)], { env, stdio: ['ignore', out, out] });
  procs.push(proc);
  return { proc, grpcPort, metricsPort, logFile };
}

async function serving(port: number, proc: ChildProcess, logFile: string): Promise<void> {
  const health = new HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const until = Date.now() + 120_000;
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`service exited: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
      const ok = await new Promise<boolean>((r) => health.check({ service: '' }, new Metadata(), { deadline: Date.now() + 1000 }, (err) => r(!err)));
      if (ok) return;
      if (Date.now() > until) throw new Error(`service on ${port} not serving in time`);
      await new Promise((r) => setTimeout(r, 300));
    }
  } finally {
    health.close();
  }
}

/** grpc_server_handled_total of one process for a method, from its /metrics. */
function handled(metricsPort: number, method: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: metricsPort, path: '/metrics' }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => {
          let sum = 0;
          for (const line of body.split('\n')) {
            if (line.startsWith('grpc_server_handled_total{') && line.includes(`grpc_method="${method}"`)) sum += Number(line.split(' ').pop());
          }
          resolve(sum);
        });
      })
      .on('error', reject);
  });
}

function getOnce(client: ResourcesClient): Promise<void> {
  const md = new Metadata();
  md.set('x-internal-token', token);
  md.set('x-account-id', '1');
  md.set('x-mode', 'test');
  return new Promise((resolve) => client.get({ kind: 'no_such_kind', id: 1, archived: false } as never, md, () => resolve()));
}

let a: ServiceProcess;
let b: ServiceProcess;

beforeAll(async () => {
  if (!runnable) return;
  if (!databaseUrl) databaseUrl = (tempPg = await startTempPostgres()).url;
  // Two reporting processes; with DATABASE_URL they share one schema, as replicas of a Deployment do.
  a = await startService('reporting');
  await serving(a.grpcPort, a.proc, a.logFile);
  b = await startService('reporting');
  await serving(b.grpcPort, b.proc, b.logFile);
}, 180_000);

afterAll(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : undefined)));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  await dropSchemas(schemaPrefix);
  tempPg?.stop();
});

maybe('calls of one channel spread across two processes of a service behind one name', async () => {
  const client = new ResourcesClient(`ipv4:127.0.0.1:${a.grpcPort},127.0.0.1:${b.grpcPort}`, credentials.createInsecure(), channelOptions);
  try {
    // Both subchannels connect before round_robin sends calls to them; let the channel settle first.
    await getOnce(client);
    await new Promise((r) => setTimeout(r, 500));
    const before = [await handled(a.metricsPort, 'get'), await handled(b.metricsPort, 'get')];
    for (let i = 0; i < 40; i++) await getOnce(client);
    const after = [await handled(a.metricsPort, 'get'), await handled(b.metricsPort, 'get')];
    const calls = [after[0] - before[0], after[1] - before[1]];
    expect(calls[0] + calls[1]).toBe(40);
    // round_robin alternates: each process gets about half, certainly not none.
    expect(calls[0]).toBeGreaterThanOrEqual(15);
    expect(calls[1]).toBeGreaterThanOrEqual(15);
  } finally {
    client.close();
  }
});

maybe('the same two addresses under pick_first send every call to one process (what the chart had before)', async () => {
  // Guards the test above: it can fail, because without round_robin the spread disappears.
  const { 'grpc.service_config': _ignored, ...pickFirst } = channelOptions;
  const client = new ResourcesClient(`ipv4:127.0.0.1:${a.grpcPort},127.0.0.1:${b.grpcPort}`, credentials.createInsecure(), pickFirst);
  try {
    const before = [await handled(a.metricsPort, 'get'), await handled(b.metricsPort, 'get')];
    for (let i = 0; i < 20; i++) await getOnce(client);
    const after = [await handled(a.metricsPort, 'get'), await handled(b.metricsPort, 'get')];
    const calls = [after[0] - before[0], after[1] - before[1]];
    expect(calls[0] + calls[1]).toBe(20);
    expect(Math.min(...calls)).toBe(0);
  } finally {
    client.close();
  }
});

maybe('without BIND_HOST a service binds loopback only: its gRPC and metrics ports refuse other interfaces', async () => {
  const external = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  const connects = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const sock = net.connect({ host, port, timeout: 2000 }, () => {
        sock.destroy();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
      sock.on('timeout', () => {
        sock.destroy();
        resolve(false);
      });
    });
  expect(await connects('127.0.0.1', a.grpcPort)).toBe(true);
  expect(await connects('127.0.0.1', a.metricsPort)).toBe(true);
  if (!external) return void process.stdout.write('bind test: no non-loopback IPv4 interface on this machine; only loopback checked\n');
  expect(await connects(external, a.grpcPort)).toBe(false);
  expect(await connects(external, a.metricsPort)).toBe(false);
});

maybe('DB_MIGRATE=false on a schema that was never migrated: the service refuses to start and says why', async () => {
  const s = await startService('selfserve', { DB_MIGRATE: 'false', DB_SCHEMA_PREFIX: `${schemaPrefix}fresh_` });
  const code = await new Promise<number | null>((resolve) => (s.proc.exitCode !== null ? resolve(s.proc.exitCode) : s.proc.once('exit', resolve)));
  expect(code).toBe(1);
  const logText = fs.readFileSync(s.logFile, 'utf8');
  expect(logText).toMatch(/database schema is behind this version: run the migrations job/);
  expect(logText).toMatch(/"pending":\[/);
}, 120_000);

maybe('dist/scripts/migrate.js migrates the schemas, after which DB_MIGRATE=false services start', async () => {
  const prefix = `${schemaPrefix}job_`;
  const env = baseEnv({ MIGRATIONS_DATABASE_URL: databaseUrl!, DB_SCHEMA_PREFIX: prefix });
  delete env.DATABASE_URL;
  const migrate = spawn(process.execPath, [path.join(ROOT, 'dist/scripts/migrate.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  migrate.stdout!.on('data', (c) => (output += c));
  migrate.stderr!.on('data', (c) => (output += c));
  const code = await new Promise<number | null>((resolve) => migrate.once('exit', resolve));
  expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
  expect(output.match(/"msg":"migrated"|migrated/g)?.length).toBeGreaterThanOrEqual(4);
  const s = await startService('selfserve', { DB_MIGRATE: 'false', DB_SCHEMA_PREFIX: prefix });
  await serving(s.grpcPort, s.proc, s.logFile);
  expect(fs.readFileSync(s.logFile, 'utf8')).toMatch(/database schema up to date \(DB_MIGRATE=false/);
}, 120_000);
