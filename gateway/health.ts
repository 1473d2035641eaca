import type { ServiceName } from '../services/shared/catalog';
import { envInt, SERVICE_NAMES } from '../services/shared/config';
import { serviceServing } from '../services/shared/grpc/health-probe';

export type DependencyState = 'ok' | 'unavailable';

/** Asks one service's grpc.health.v1 endpoint; a service that does not answer in 1 s is down. */
export async function checkService(name: ServiceName): Promise<DependencyState> {
  return (await serviceServing(name)) ? 'ok' : 'unavailable';
}

/** Asks every service's grpc.health.v1 endpoint. */
export async function checkServices(): Promise<Record<ServiceName, DependencyState>> {
  const entries = await Promise.all(SERVICE_NAMES.map(async (name) => [name, await checkService(name)] as const));
  return Object.fromEntries(entries) as Record<ServiceName, DependencyState>;
}

/** /livez fails once timers run this late (LIVENESS_MAX_STALL_MS, default 10 s). */
export const LIVENESS_MAX_STALL_MS = envInt('LIVENESS_MAX_STALL_MS', 10_000);
const TICK_MS = 500;
let lastTick = performance.now();
let worstStall = 0;
setInterval(() => {
  const now = performance.now();
  worstStall = Math.max(worstStall, now - lastTick - TICK_MS);
  lastTick = now;
}, TICK_MS).unref();

/** The longest timer delay since the previous call (or the current one, if the loop is stuck now). */
export function eventLoopStall(): number {
  const current = performance.now() - lastTick - TICK_MS;
  const worst = Math.max(worstStall, current, 0);
  worstStall = 0;
  return worst;
}
