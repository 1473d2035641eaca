/**
 * An extra replica of one service (node dist/services/<name>/main.js) on the test platform's database,
 * on its own ports: for tests of work claimed with a lease and of news every replica must hear. With
 * DATABASE_URL it uses the platform's schemas; on the embedded default it connects to the platform's
 * embedded PostgreSQL (its port and password are in the platform's data directory).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { credentials, Metadata, type Client } from '@grpc/grpc-js';
import { HealthCheckResponse_ServingStatus, HealthClient } from '../../../proto/gen/grpc/health/v1/health';
import type { ServiceName } from '../../../services/shared/catalog/types';
import { freePort, ROOT, type PlatformInfo } from './platform';

export interface ServiceReplica {
  proc: ChildProcess;
  /** `127.0.0.1:<port>` of its gRPC API. */
  address: string;
  output(): string;
  /** SIGTERM (SIGKILL after `timeoutMs`); resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

/** The database URL the platform's services use. */
export function platformDatabaseUrl(info: PlatformInfo): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const password = fs.readFileSync(path.join(info.dataDir, 'postgres-password'), 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${info.env.EMBEDDED_POSTGRES_PORT}/postgres`;
}

/** Metadata carrying the platform's internal token (and a tenant, when given). */
export function platformMetadata(info: PlatformInfo, tenant?: { accountId: number; mode: 'test' | 'live' }): Metadata {
  const md = new Metadata();
  md.set('x-internal-token', info.env.INTERNAL_TOKEN);
  if (tenant) {
    md.set('x-account-id', String(tenant.accountId));
    md.set('x-mode', tenant.mode);
  }
  return md;
}

/**
 * Starts the replica on fresh ports; a port picked as free can be taken by another test before the
 * replica binds it, so a start that fails on a taken port is tried again on new ones.
 */
export async function startServiceReplica(info: PlatformInfo, service: ServiceName, extraEnv: Record<string, string> = {}): Promise<ServiceReplica> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(info, service, extraEnv);
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(info: PlatformInfo, service: ServiceName, extraEnv: Record<string, string>): Promise<ServiceReplica> {
  const grpcPort = await freePort();
  let out = '';
  const proc = spawn(process.execPath, [path.join(ROOT, `dist/services/${service}/main.js`)], {
    env: {
      ...process.env,
      ...info.env,
      DATABASE_URL: platformDatabaseUrl(info),
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: String(await freePort()),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const address = `127.0.0.1:${grpcPort}`;
  const health = new HealthClient(address, credentials.createInsecure());
  const until = Date.now() + 30_000;
  for (;;) {
    const serving = await new Promise<boolean>((resolve) =>
      health.check({ service: '' }, platformMetadata(info), { deadline: Date.now() + 1000 }, (err, res) => resolve(!err && res.status === HealthCheckResponse_ServingStatus.SERVING)),
    );
    if (serving) break;
    if (proc.exitCode !== null || Date.now() > until) {
      proc.kill('SIGKILL');
      health.close();
      throw new Error(`${service} replica did not start:\n${out.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  health.close();
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    proc,
    address,
    output: () => out,
    async stop(timeoutMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Calls a unary method of a ts-proto grpc-js client as a promise. */
export function unary<Res>(client: Client, method: string, request: unknown, md: Metadata): Promise<Res> {
  return new Promise((resolve, reject) =>
    (client as unknown as Record<string, Function>)[method](request, md, { deadline: Date.now() + 5000 }, (err: Error | null, res: Res) => (err ? reject(err) : resolve(res))),
  );
}
