import crypto from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { EventKind, ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import type { PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl, startServiceReplica } from '../../../gateway/test/support/service-replica';
import { eventIngest } from '../../shared/grpc/clients';

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
  // Six callers racing on the same rollup rows wait on each other's locks: on a loaded CI machine that
  // can take longer than the platform's 5 s default deadline.
  return eventIngest.recordEvents({ events }, { timeoutMs: 30_000 });
}

/** The shared platform's reporting schema (on DATABASE_URL, or on the platform's embedded PostgreSQL). */
export function reportingDb(): Knex {
  return knexFactory({
    client: 'pg',
    connection: platformDatabaseUrl(platformInfo()),
    searchPath: [`${process.env.DB_SCHEMA_PREFIX ?? ''}reporting`],
    pool: { min: 0, max: 2 },
  });
}

export const platformInfo = (): PlatformInfo => JSON.parse(process.env.TEST_PLATFORM!);

/** A second reporting process on the shared platform's database and Redis (a second replica). */
export function startReportingReplica(env: Record<string, string> = {}) {
  return startServiceReplica(platformInfo(), 'reporting', env);
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
