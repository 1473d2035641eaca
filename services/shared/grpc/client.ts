import * as grpc from '@grpc/grpc-js';
import type { ServiceName } from '../catalog/types';
import { envInt, serviceAddress } from '../config';
import { withInternalToken } from '../internal-token';
import { grpcClientHandled } from '../metrics';
import { unaryMethods, type ClientClass, type DefinitionShape, type MethodShape, type RequestOf, type ResponseOf, type StreamName, type UnaryName } from './definition';

const DEFAULT_TIMEOUT_MS = envInt('GRPC_DEADLINE_MS', 5000, 1);
const READ_RETRIES = 3;

/**
 * Calls are balanced per call across every address the target resolves to (`round_robin`), not
 * pinned to the first one (grpc-js's default `pick_first`). With `dns:///<headless service>:port`
 * that is every ready pod; servers close connections after GRPC_MAX_CONNECTION_AGE_MS so that
 * clients re-resolve and find new pods. `ipv4:127.0.0.1:A,127.0.0.1:B` lists addresses directly.
 */
export const channelOptions: grpc.ChannelOptions = {
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 2_000,
};

const clients = new Map<string, grpc.Client>();

/** One client (and channel) per service and generated client class, created on first use. */
function clientFor(service: ServiceName, Class: ClientClass<DefinitionShape>): grpc.Client {
  const key = `${service}:${Class.serviceName}`;
  let c = clients.get(key);
  if (!c) {
    c = new Class(serviceAddress(service), grpc.credentials.createInsecure(), channelOptions);
    clients.set(key, c);
  }
  return c;
}

export function closeClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}

/** How one call travels: tenant metadata, its deadline and whether it may be repeated. */
export interface CallOptions {
  /** The caller's metadata (tenant, idempotency key); the internal token is added here. */
  metadata?: grpc.Metadata;
  /** Deadline for one attempt, in ms. */
  timeoutMs?: number;
  /** Safe to repeat (reads): retried with backoff while the peer is UNAVAILABLE. */
  idempotent?: boolean;
}

/** A service's unary methods as promises, typed from its generated definition. */
export type ServiceClient<D> = {
  [K in UnaryName<D>]: (request: RequestOf<D[K]>, options?: CallOptions) => Promise<ResponseOf<D[K]>>;
};

/**
 * The one way to call another service: each unary method of the generated client class as a promise,
 * with a deadline on every attempt, retries for idempotent calls while the peer is unavailable, the
 * internal token, and client metrics. The channel is opened on the first call.
 */
export function serviceClient<D extends DefinitionShape>(service: ServiceName, Class: ClientClass<D>): ServiceClient<D> {
  const out: Record<string, (request: unknown, options?: CallOptions) => Promise<unknown>> = {};
  for (const [name, method] of unaryMethods(Class.service)) {
    out[name] = (request, options = {}) => callWithRetries(service, Class, name, method, request, options);
  }
  return out as ServiceClient<D>;
}

async function callWithRetries(service: ServiceName, Class: ClientClass<DefinitionShape>, name: string, method: MethodShape, request: unknown, opts: CallOptions): Promise<unknown> {
  const attempts = opts.idempotent ? READ_RETRIES + 1 : 1;
  const metadata = withInternalToken(opts.metadata ?? new grpc.Metadata());
  let lastErr: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(100 * 2 ** (attempt - 1) + Math.random() * 50);
    try {
      const res = await once(clientFor(service, Class), method, request, metadata, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      grpcClientHandled.inc({ grpc_service: service, grpc_method: name, grpc_code: 'OK' });
      return res;
    } catch (err) {
      const code = (err as grpc.ServiceError).code;
      grpcClientHandled.inc({ grpc_service: service, grpc_method: name, grpc_code: grpc.status[code] ?? 'UNKNOWN' });
      lastErr = err;
      if (code !== grpc.status.UNAVAILABLE) break;
    }
  }
  throw lastErr;
}

function once(client: grpc.Client, method: MethodShape, request: unknown, metadata: grpc.Metadata, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      method.path,
      method.requestSerialize as (value: unknown) => Buffer,
      method.responseDeserialize,
      request,
      metadata,
      { deadline: Date.now() + timeoutMs },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Opens a server stream (a subscription such as a watch) of a generated client class, with the
 * internal token. Subscriptions have no deadline; the caller reconnects when one closes.
 */
export function openStream<D extends DefinitionShape, K extends StreamName<D>>(
  service: ServiceName,
  Class: ClientClass<D>,
  name: K,
  request: RequestOf<D[K]>,
  metadata: grpc.Metadata = new grpc.Metadata(),
): grpc.ClientReadableStream<ResponseOf<D[K]>> {
  const method: MethodShape = Class.service[name];
  return clientFor(service, Class).makeServerStreamRequest(
    method.path,
    method.requestSerialize as (value: RequestOf<D[K]>) => Buffer,
    method.responseDeserialize as (value: Buffer) => ResponseOf<D[K]>,
    request,
    withInternalToken(metadata),
  );
}

/** A message field the peer always sets (proto3 marks every message field optional): absent is a bug there. */
export function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the answer lacks ${what}`);
  return value;
}
