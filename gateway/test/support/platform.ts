/**
 * Starts the whole platform the way an operator does (`node dist/scripts/start.js`: every service and
 * the gateway as child processes) on free loopback ports, with its own data directory and embedded
 * PostgreSQL server, or with its own schemas when DATABASE_URL points at a Postgres server.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** The repository root (holding package.json), from the sources or from dist/. */
export const ROOT = (() => {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
})();

export interface PlatformInfo {
  pid: number;
  dataDir: string;
  schemaPrefix: string;
  env: Record<string, string>;
  logFile: string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function platformEnv(extra: Record<string, string> = {}): Promise<{ env: Record<string, string>; dataDir: string; schemaPrefix: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'adserver-test-'));
  const schemaPrefix = `t${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}_`;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    START_QUIET: '1',
    OTEL_SDK_DISABLED: process.env.OTEL_SDK_DISABLED ?? 'true',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_HTTPS_PORT: String(await freePort()),
    GATEWAY_HTTP_PORT: String(await freePort()),
    GATEWAY_SERVE_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    SERVE_BASE_URL: 'https://serve.example.test',
    // Services accept calls only with it; the test workers get it through the environment.
    INTERNAL_TOKEN: crypto.randomBytes(24).toString('base64url'),
    // Test platforms running at once may share one Redis, and their account ids collide.
    REDIS_KEY_PREFIX: `adserver-test:${schemaPrefix}:`,
    // Tests' and benchmarks' demand endpoints listen on loopback, which production refuses.
    DEMAND_ALLOW_PRIVATE_NETWORKS: 'true',
    ...extra,
  };
  for (const s of ['ACCOUNTS', 'INVENTORY', 'SELFSERVE', 'REPORTING']) {
    env[`${s}_GRPC_PORT`] = String(await freePort());
    env[`${s}_METRICS_PORT`] = String(await freePort());
    env[`${s}_ADDR`] = `127.0.0.1:${env[`${s}_GRPC_PORT`]}`;
  }
  // The ad server (serving) of this platform, on ports of its own.
  env.SERVING_PORT ??= String(await freePort());
  env.SERVING_METRICS_PORT ??= String(await freePort());
  env.SERVING_ADDR ??= `127.0.0.1:${env.SERVING_PORT}`;
  if (process.env.DATABASE_URL) env.DB_SCHEMA_PREFIX = schemaPrefix;
  else env.EMBEDDED_POSTGRES_PORT = String(await freePort());
  return { env, dataDir, schemaPrefix };
}

export function gatewayHealthy(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

/** `detached` gives the launcher a process group of its own, as a terminal gives its foreground job. */
export async function startPlatform(extra: Record<string, string> = {}, options: { detached?: boolean } = {}): Promise<{ info: PlatformInfo; proc: ChildProcess }> {
  // A port picked as free can be taken (by another platform, or an outgoing connection's ephemeral port)
  // before the platform binds it: then the launcher gives up quickly and this tries again on fresh ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startPlatformOnce(extra, options);
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|is taken by another program/.test(String((err as Error).message))) throw err;
    }
  }
}

async function startPlatformOnce(extra: Record<string, string>, options: { detached?: boolean }): Promise<{ info: PlatformInfo; proc: ChildProcess }> {
  const { env, dataDir, schemaPrefix } = await platformEnv(extra);
  const logFile = path.join(dataDir, 'platform.log');
  const out = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist/scripts/start.js')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', out, out],
    detached: options.detached ?? false,
  });
  const until = Date.now() + 180_000;
  while ((await gatewayHealthy(Number(env.GATEWAY_HTTP_PORT))) !== 200) {
    if (proc.exitCode !== null) {
      const log = fs.readFileSync(logFile, 'utf8');
      await stopPlatform(proc.pid!, 5_000, dataDir);
      throw new Error(`platform exited early; see ${logFile}:\n${log.slice(-3000)}${log.includes('EADDRINUSE') ? '\n(EADDRINUSE)' : ''}`);
    }
    if (Date.now() > until) {
      await stopPlatform(proc.pid!, 30_000, dataDir);
      throw new Error(`platform not healthy in time; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { info: { pid: proc.pid!, dataDir, schemaPrefix, env, logFile }, proc };
}

/** Stops a launcher (SIGTERM, then SIGKILL after `timeoutMs`) and makes sure its embedded Postgres is gone too. */
export async function stopPlatform(pid: number, timeoutMs = 30_000, dataDir?: string): Promise<void> {
  await stopProcess(pid, timeoutMs);
  if (!dataDir) return;
  try {
    const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (postmaster > 0) await stopProcess(postmaster, 10_000, 'SIGINT');
  } catch {
    /* no embedded server, or it stopped and removed its pid file */
  }
}

async function stopProcess(pid: number, timeoutMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** Drops the schemas a real-Postgres test run created. */
export async function dropSchemas(prefix: string): Promise<void> {
  if (!process.env.DATABASE_URL || !prefix) return;
  const { Client } = await import('pg');
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>('select nspname from pg_namespace where nspname like $1', [`${prefix}%`]);
    for (const r of rows) await client.query(`drop schema if exists "${r.nspname}" cascade`);
  } finally {
    await client.end();
  }
}

const execFileAsync = promisify(execFile);

/** Runs the operator CLI (`npm run admin -- ...`) against the platform in this process's environment. */
export function admin(...args: string[]) {
  return execFileAsync(process.execPath, [path.join(ROOT, 'dist/scripts/admin.js'), ...args], { env: process.env });
}

/** A plain-HTTP GET (metrics and health ports). */
export function plainGet(port: number, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}
