import type { ServiceName } from './catalog/types';
import { SERVICE_DEFAULTS, envInt } from './config';
import { openDatabase, type Database, type Migration } from './db';
import { closeClients } from './grpc/client';
import { startGrpcServer, type ServiceBinding } from './grpc/server';
import { runProcess, type Running } from './lifecycle';
import { log } from './log';
import { startMetricsServer } from './metrics';
import { ResourceStore, type KindHooks } from './resource-store';

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
export async function runService(spec: ServiceSpec): Promise<Running> {
  const defaults = SERVICE_DEFAULTS[spec.name];
  const db = await openDatabase(spec.name, spec.migrations);
  const store = new ResourceStore(spec.name, db, spec.hooks);
  const grpcServer = await startGrpcServer(spec.name, envInt('GRPC_PORT', defaults.grpcPort), [store.binding(), ...(spec.bindings?.(db, store) ?? [])]);
  const metrics = await startMetricsServer(envInt('METRICS_PORT', defaults.metricsPort));
  const stopBackground = await spec.start?.(db, store);
  log.info('ready', { grpc_port: grpcServer.port });
  return {
    async stop() {
      await grpcServer.shutdown(10_000);
      if (stopBackground) await stopBackground().catch(() => undefined);
      closeClients();
      metrics.close();
      await db.close().catch(() => undefined);
    },
  };
}

export function main(spec: ServiceSpec): void {
  runProcess(spec.name, () => runService(spec));
}
