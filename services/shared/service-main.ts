import type { ServiceName } from './catalog/types';
import { SERVICE_DEFAULTS, envInt } from './config';
import { openDatabase, type Database, type Migration } from './db';
import { closeClients } from './grpc/client';
import { startGrpcServer, type ServiceBinding } from './grpc/server';
import { errorFields, log, setLogComponent } from './log';
import { startMetricsServer } from './metrics';
import { ResourceStore, type KindHooks } from './resource-store';
import { stopTelemetry } from './telemetry';

export interface ServiceSpec {
  name: ServiceName;
  migrations: Migration[];
  hooks?: Record<string, KindHooks>;
  /** Service-specific gRPC APIs served next to Resources. */
  bindings?(db: Database, store: ResourceStore): ServiceBinding[];
  /** Background work to start once serving (and to stop on shutdown). */
  start?(db: Database, store: ResourceStore): Promise<(() => Promise<void>) | void>;
}

/**
 * Runs one service process: database and migrations, the Resources API for its catalog kinds plus its
 * own APIs and the health service, /metrics, and a graceful stop on SIGTERM/SIGINT (in-flight calls
 * get up to 10 s).
 */
export async function runService(spec: ServiceSpec): Promise<void> {
  setLogComponent(spec.name);
  process.on('unhandledRejection', (err) => log.error('unhandled rejection', errorFields(err)));
  const defaults = SERVICE_DEFAULTS[spec.name];
  const db = await openDatabase(spec.name, spec.migrations);
  const store = new ResourceStore(spec.name, db, spec.hooks);
  const grpcServer = await startGrpcServer(spec.name, envInt('GRPC_PORT', defaults.grpcPort), [store.binding(), ...(spec.bindings?.(db, store) ?? [])]);
  const metrics = await startMetricsServer(envInt('METRICS_PORT', defaults.metricsPort));
  const stopBackground = await spec.start?.(db, store);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    await grpcServer.shutdown(10_000);
    if (stopBackground) await stopBackground().catch(() => undefined);
    closeClients();
    metrics.close();
    await db.close().catch(() => undefined);
    await stopTelemetry();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  log.info('ready', { grpc_port: grpcServer.port });
}

export function main(spec: ServiceSpec): void {
  runService(spec).catch((err) => {
    log.error('failed to start', errorFields(err));
    process.exit(1);
  });
}
