import { HealthCheckResponse_ServingStatus, HealthClient } from '../../../proto/gen/grpc/health/v1/health';
import type { ServiceName } from '../catalog/types';
import { serviceClient } from './client';

/**
 * Whether a service answers its grpc.health.v1 check as SERVING within `timeoutMs`. The probe carries
 * the platform's internal token, so a process of another platform holding the port answers no.
 */
export async function serviceServing(service: ServiceName, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await health[service].check({ service: '' }, { timeoutMs });
    return res.status === HealthCheckResponse_ServingStatus.SERVING;
  } catch {
    return false;
  }
}

const health = {
  accounts: serviceClient('accounts', HealthClient),
  inventory: serviceClient('inventory', HealthClient),
  selfserve: serviceClient('selfserve', HealthClient),
  reporting: serviceClient('reporting', HealthClient),
};
