import { HealthCheckResponse_ServingStatus, HealthClient, type HealthCheckResponse } from '../proto/gen/grpc/health/v1/health';
import { Metadata } from '@grpc/grpc-js';
import type { ServiceName } from '../services/shared/catalog';
import { SERVICE_NAMES } from '../services/shared/config';
import { call, clientFor } from '../services/shared/grpc/client';

export type DependencyState = 'ok' | 'unavailable';

/** Asks every service's grpc.health.v1 endpoint; a service that does not answer in 1 s is down. */
export async function checkServices(): Promise<Record<ServiceName, DependencyState>> {
  const entries = await Promise.all(
    SERVICE_NAMES.map(async (name) => {
      try {
        const res = await call<unknown, HealthCheckResponse>(name, clientFor(name, HealthClient), 'check', { service: '' }, new Metadata(), { timeoutMs: 1000 });
        return [name, res.status === HealthCheckResponse_ServingStatus.SERVING ? 'ok' : 'unavailable'] as const;
      } catch {
        return [name, 'unavailable'] as const;
      }
    }),
  );
  return Object.fromEntries(entries) as Record<ServiceName, DependencyState>;
}
