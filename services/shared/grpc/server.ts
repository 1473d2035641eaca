import * as grpc from '@grpc/grpc-js';
import { uploadMaxBytes } from '../creative-files';
import { HealthCheckResponse_ServingStatus, HealthService, type HealthServer } from '../../../proto/gen/grpc/health/v1/health';
import { bindHost, envInt } from '../config';
import { ServiceError } from '../errors';
import { hasInternalToken } from '../internal-token';
import { errorFields, log } from '../log';
import { grpcServerHandled, grpcServerLatency } from '../metrics';
import { unaryMethods, type DefinitionShape, type RequestOf, type ResponseOf, type StreamName, type UnaryName } from './definition';

/** A unary handler written as an async function; errors become gRPC statuses. */
export type AsyncUnary<Req, Res> = (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>;

/** The unary handlers of a service, typed from its generated definition. */
export type UnaryHandlers<D> = { [K in UnaryName<D>]: AsyncUnary<RequestOf<D[K]>, ResponseOf<D[K]>> };
/** The server-streaming handlers of a service (subscriptions), typed from its generated definition. */
export type StreamHandlers<D> = { [K in StreamName<D>]: (call: grpc.ServerWritableStream<RequestOf<D[K]>, ResponseOf<D[K]>>) => void };

const INTERNAL_ONLY = 'This API is internal: the call lacks the platform internal token.';

/**
 * Binds the handlers of a generated service definition to grpc-js. Each handler's request and answer
 * types come from the proto, and every method of the service must be handled. Unary handlers get
 * metrics, ServiceError → status with its reason/parameters metadata, and unexpected errors hidden
 * behind INTERNAL (logged, never leaked). Every call, streams too, must carry the internal token.
 */
export function implement<D extends DefinitionShape>(
  serviceName: string,
  definition: D,
  handlers: UnaryHandlers<D>,
  ...streams: StreamName<D> extends never ? [] : [StreamHandlers<D>]
): ServiceBinding {
  const impl: grpc.UntypedServiceImplementation = {};
  const unary = handlers as Record<string, AsyncUnary<unknown, unknown>>;
  for (const [method] of unaryMethods(definition)) {
    const fn = unary[method];
    impl[method] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      if (!hasInternalToken(call.metadata)) {
        grpcServerHandled.inc({ grpc_service: serviceName, grpc_method: method, grpc_code: 'UNAUTHENTICATED' });
        return callback({ code: grpc.status.UNAUTHENTICATED, details: INTERNAL_ONLY }, null);
      }
      const stop = grpcServerLatency.startTimer({ grpc_service: serviceName, grpc_method: method });
      fn(call.request, call).then(
        (res) => {
          stop();
          grpcServerHandled.inc({ grpc_service: serviceName, grpc_method: method, grpc_code: 'OK' });
          callback(null, res);
        },
        (err: unknown) => {
          stop();
          const status = toStatus(err, serviceName, method);
          grpcServerHandled.inc({ grpc_service: serviceName, grpc_method: method, grpc_code: grpc.status[status.code ?? grpc.status.UNKNOWN] });
          try {
            callback(status, null);
          } catch (sendErr) {
            // Never leave a call unanswered until its deadline: resend the status without its details.
            log.error('could not send gRPC error status', { service: serviceName, method, ...errorFields(sendErr) });
            callback({ code: status.code ?? grpc.status.INTERNAL, details: 'Request failed.' }, null);
          }
        },
      );
    };
  }
  const streaming = (streams[0] ?? {}) as Record<string, (call: grpc.ServerWritableStream<unknown, unknown>) => void>;
  for (const [method, fn] of Object.entries(streaming)) {
    impl[method] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
      if (!hasInternalToken(call.metadata)) {
        grpcServerHandled.inc({ grpc_service: serviceName, grpc_method: method, grpc_code: 'UNAUTHENTICATED' });
        call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: INTERNAL_ONLY });
        return;
      }
      fn(call);
    };
  }
  return { definition: definition as unknown as grpc.ServiceDefinition, implementation: impl };
}

function toStatus(err: unknown, service: string, method: string): Partial<grpc.StatusObject> {
  if (err instanceof ServiceError) return { code: err.code, details: err.message, metadata: err.toMetadata() };
  // A failed call to a peer service carries its own status: pass unavailability through.
  const code = (err as { code?: unknown })?.code;
  if (code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED) {
    return { code: grpc.status.UNAVAILABLE, details: 'A service this request depends on is unavailable; retry shortly.' };
  }
  if (isDatabaseUnavailable(err)) {
    log.warn('database unavailable', { service, method, ...errorFields(err) });
    return { code: grpc.status.UNAVAILABLE, details: 'The database is unavailable; retry shortly.' };
  }
  log.error('unhandled error in gRPC handler', { service, method, ...errorFields(err) });
  return { code: grpc.status.INTERNAL, details: 'Internal error.' };
}

const DB_UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08003', '08006', '53300']);

/** Connection-level database failures (server restart, refused, timed-out pool): retryable, not bugs. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string; name?: string };
  if (e?.code && DB_UNAVAILABLE_CODES.has(e.code)) return true;
  if (e?.name === 'KnexTimeoutError') return true;
  const msg = e?.message ?? '';
  return /Connection terminated|terminating connection|connection is closed|Client has encountered a connection error/i.test(msg);
}

/**
 * Server-streaming calls that are subscriptions (watch streams), not work in flight: a stopping server
 * ends them at once, and their clients reconnect to another replica, instead of holding the shutdown
 * until its grace period runs out.
 */
const subscriptions = new Set<grpc.ServerWritableStream<unknown, unknown>>();

export function holdSubscription<Req, Res>(call: grpc.ServerWritableStream<Req, Res>): void {
  subscriptions.add(call as grpc.ServerWritableStream<unknown, unknown>);
  const release = () => subscriptions.delete(call as grpc.ServerWritableStream<unknown, unknown>);
  call.on('cancelled', release);
  call.on('close', release);
  call.on('error', release);
}

export interface RunningServer {
  server: grpc.Server;
  port: number;
  setServing(serving: boolean): void;
  /** Stops accepting calls, lets in-flight calls finish (up to `graceMs`), then stops. */
  shutdown(graceMs?: number): Promise<void>;
}

export interface ServiceBinding {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
}

/** Starts a gRPC server with the standard health service next to `bindings`. */
/**
 * Connection age limits: a client holding one HTTP/2 connection per peer re-resolves its target
 * (a headless Service's pod addresses) when the server closes the connection, so new pods get calls.
 * GRPC_MAX_CONNECTION_AGE_MS=0 turns the limit off.
 */
export function serverOptions(): grpc.ServerOptions {
  // Inventory's PutCreativeFile carries a whole uploaded creative file in one message.
  const options: grpc.ServerOptions = { 'grpc.max_receive_message_length': Math.max(8 * 1024 * 1024, uploadMaxBytes() + 64 * 1024) };
  const age = envInt('GRPC_MAX_CONNECTION_AGE_MS', 300_000);
  if (age > 0) {
    options['grpc.max_connection_age_ms'] = age;
    options['grpc.max_connection_age_grace_ms'] = envInt('GRPC_MAX_CONNECTION_AGE_GRACE_MS', 30_000);
  }
  return options;
}

export async function startGrpcServer(name: string, port: number, bindings: ServiceBinding[], host = bindHost()): Promise<RunningServer> {
  const server = new grpc.Server(serverOptions());
  let serving = true;
  const watchers = new Set<grpc.ServerWritableStream<unknown, unknown>>();
  const statusNow = () => ({ status: serving ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING });
  const health: HealthServer = {
    // A probe that carries a platform token must be answered by a process of that platform: a wrong token
    // means another platform's service holds the port (probes without one, like Kubernetes', are answered).
    check: (call, cb) =>
      call.metadata.get('x-internal-token').length && !hasInternalToken(call.metadata)
        ? cb({ code: grpc.status.UNAUTHENTICATED, details: 'This health check reached a process of another platform.' }, null)
        : cb(null, statusNow()),
    watch: (call) => {
      call.write(statusNow());
      watchers.add(call as never);
      call.on('cancelled', () => watchers.delete(call as never));
    },
  };
  server.addService(HealthService, health);
  for (const b of bindings) server.addService(b.definition, b.implementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  log.info('gRPC listening', { service: name, host, port: bound });
  return {
    server,
    port: bound,
    setServing(v) {
      serving = v;
      for (const w of watchers) w.write(statusNow());
    },
    shutdown(graceMs = 10_000) {
      serving = false;
      for (const w of watchers) w.end();
      for (const sub of subscriptions) sub.end();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
