import path from 'node:path';
import { parseBoolean } from './booleans';
import type { ServiceName } from './catalog/types';

const SERVICE_ORDER: ServiceName[] = ['accounts', 'inventory', 'selfserve', 'reporting'];

/**
 * Default gRPC and metrics ports per service when run by `npm start` on one machine: consecutive ports
 * from GRPC_BASE_PORT (50051) and SERVICE_METRICS_BASE_PORT (9465), so a second platform on the same
 * host moves them all with two variables; `<NAME>_GRPC_PORT` / `<NAME>_METRICS_PORT` still override one.
 */
export const SERVICE_DEFAULTS = Object.fromEntries(
  SERVICE_ORDER.map((name, i) => [name, { grpcPort: envInt('GRPC_BASE_PORT', 50051) + i, metricsPort: envInt('SERVICE_METRICS_BASE_PORT', 9465) + i }]),
) as Record<ServiceName, { grpcPort: number; metricsPort: number }>;

export const SERVICE_NAMES = Object.keys(SERVICE_DEFAULTS) as ServiceName[];

/*
 * Environment parsing: every setting is read through these helpers, and a value they cannot read stops
 * the process with a message naming the variable (nothing falls back silently, nothing yields NaN).
 */

/** An integer setting, at least `min` (0 unless given). */
export function envInt(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\s*-?\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be an integer of at least ${min}, got '${raw}'`);
  return n;
}

export function envStr(name: string, fallback?: string): string | undefined {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

/** The whole environment, copied: what a launcher hands its children. */
export function environment(): NodeJS.ProcessEnv {
  return { ...process.env };
}

/** Sets settings for this process and the modules it loads next (launchers and the migration runner). */
export function setEnvironment(values: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

/** A boolean setting: true/false/1/0 (the same words as the API's boolean query flags). */
export function envBool(name: string, fallback: boolean): boolean {
  const raw = envStr(name);
  if (raw === undefined) return fallback;
  const value = parseBoolean(raw);
  if (value === undefined) throw new Error(`${name} must be true, false, 1 or 0, got '${raw}'`);
  return value;
}

/** A setting that takes one of a few words. */
export function envOneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const raw = envStr(name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return raw as T;
}

export function dataDir(): string {
  return path.resolve(envStr('DATA_DIR', '.data')!);
}

/** Address of a service's gRPC API, from `<NAME>_ADDR` or the local default. */
export function serviceAddress(service: ServiceName): string {
  return envStr(`${service.toUpperCase()}_ADDR`, `127.0.0.1:${SERVICE_DEFAULTS[service].grpcPort}`)!;
}

/**
 * The public host that ad tags, tracking URLs and creative files point at (SERVE_BASE_URL, without a
 * trailing slash), optionally in another protocol (tags can be asked for in http). By default the
 * gateway's serving origin (GATEWAY_SERVE_PORT), never the API's: ad documents get an origin of their own.
 */
export function serveBaseUrl(protocol?: 'http' | 'https' | ''): string {
  const base = new URL(envStr('SERVE_BASE_URL', `https://localhost:${envInt('GATEWAY_SERVE_PORT', 8444)}`)!);
  if (protocol) base.protocol = `${protocol}:`;
  return base.toString().replace(/\/+$/, '');
}

/**
 * Interface the service gRPC and metrics listeners bind: loopback unless BIND_HOST says otherwise
 * (the chart sets 0.0.0.0), so `npm start` on a shared host exposes nothing beyond the gateway.
 */
export function bindHost(): string {
  return envStr('BIND_HOST', '127.0.0.1')!;
}
