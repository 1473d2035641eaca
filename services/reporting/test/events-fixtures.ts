import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import knexFactory, { type Knex } from 'knex';
import { EventIngestClient, EventKind, ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import { freePort, ROOT } from '../../../gateway/test/support/platform';
import { call, clientFor } from '../../shared/grpc/client';

export { EventKind };

/** A live serving event with the contract's defaults; override what the test is about. */
export function servingEvent(over: Partial<ServingEvent> = {}): ServingEvent {
  return ServingEvent.fromPartial({
    id: `${crypto.randomUUID()}:response`,
    kind: EventKind.RESPONSE,
    occurredAt: new Date().toISOString(),
    publisher: 1,
    zone: 1,
    advertiser: 1,
    campaign: 1,
    adItem: 1,
    placement: 1,
    ...over,
  });
}

/** EventIngest.RecordEvents on the platform's real reporting service. */
export function recordEvents(events: ServingEvent[]): Promise<{ stored: number }> {
  return call('reporting', clientFor('reporting', EventIngestClient), 'recordEvents', { events }, new Metadata());
}

/** The shared platform's reporting schema on the real Postgres (DATABASE_URL runs only). */
export function reportingDb(): Knex {
  return knexFactory({
    client: 'pg',
    connection: process.env.DATABASE_URL,
    searchPath: [`${process.env.DB_SCHEMA_PREFIX ?? ''}reporting`],
    pool: { min: 0, max: 2 },
  });
}

/** A second reporting process on the shared platform's database and Redis (a second replica). */
export async function startReportingReplica(env: Record<string, string> = {}): Promise<{ proc: ChildProcess; addr: string; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist/services/reporting/main.js')], {
    env: { ...process.env, GRPC_PORT: String(port), METRICS_PORT: String(await freePort()), ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const addr = `127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  const client = new EventIngestClient(addr, (await import('@grpc/grpc-js')).credentials.createInsecure());
  // Ready once it answers a call (an empty batch stores nothing).
  for (;;) {
    const md = new Metadata();
    md.set('x-internal-token', process.env.INTERNAL_TOKEN!);
    const ok = await new Promise<boolean>((resolve) => client.recordEvents({ events: [] }, md, { deadline: Date.now() + 1000 }, (err) => resolve(!err)));
    if (ok) break;
    if (proc.exitCode !== null || Date.now() > until) throw new Error('reporting replica did not start');
    await new Promise((r) => setTimeout(r, 300));
  }
  client.close();
  return {
    proc,
    addr,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
