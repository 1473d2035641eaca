import type { ServiceName } from '../services/shared/catalog';
import { SERVICE_NAMES } from '../services/shared/config';
import { serviceServing } from '../services/shared/grpc/health-probe';

export type DependencyState = 'ok' | 'unavailable';

/** Asks every service's grpc.health.v1 endpoint; a service that does not answer in 1 s is down. */
export async function checkServices(): Promise<Record<ServiceName, DependencyState>> {
  const entries = await Promise.all(SERVICE_NAMES.map(async (name) => [name, (await serviceServing(name)) ? 'ok' : 'unavailable'] as const));
  return Object.fromEntries(entries) as Record<ServiceName, DependencyState>;
}
