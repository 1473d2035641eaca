import { Metadata } from '@grpc/grpc-js';
import { HealthCheckResponse_ServingStatus, HealthClient, type HealthCheckResponse } from '../../../proto/gen/grpc/health/v1/health';
import type { ServiceName } from '../catalog/types';
import { call, clientFor } from './client';

/**
 * Whether a service answers its grpc.health.v1 check as SERVING within `timeoutMs`. The probe carries
 * the platform's internal token, so a process of another platform holding the port answers no.
 */
export async function serviceServing(service: ServiceName, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await call<unknown, HealthCheckResponse>(service, clientFor(service, HealthClient), 'check', { service: '' }, new Metadata(), { timeoutMs });
    return res.status === HealthCheckResponse_ServingStatus.SERVING;
  } catch {
    return false;
  }
}
