import path from 'node:path';
import type { ServiceName } from './catalog/types';

/** Default gRPC and metrics ports per service when run by `npm start` on one machine. */
export const SERVICE_DEFAULTS: Record<ServiceName, { grpcPort: number; metricsPort: number }> = {
  accounts: { grpcPort: 50051, metricsPort: 9465 },
  inventory: { grpcPort: 50052, metricsPort: 9466 },
  selfserve: { grpcPort: 50053, metricsPort: 9467 },
  reporting: { grpcPort: 50054, metricsPort: 9468 },
};

export const SERVICE_NAMES = Object.keys(SERVICE_DEFAULTS) as ServiceName[];

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return n;
}

export function envStr(name: string, fallback?: string): string | undefined {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

export function dataDir(): string {
  return path.resolve(envStr('DATA_DIR', '.data')!);
}

/** Address of a service's gRPC API, from `<NAME>_ADDR` or the local default. */
export function serviceAddress(service: ServiceName): string {
  return envStr(`${service.toUpperCase()}_ADDR`, `127.0.0.1:${SERVICE_DEFAULTS[service].grpcPort}`)!;
}
