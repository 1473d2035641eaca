import * as grpc from '@grpc/grpc-js';
import type { ServiceName } from '../catalog/types';
import { envInt, serviceAddress } from '../config';
import { withInternalToken } from '../internal-token';
import { grpcClientHandled } from '../metrics';

export interface CallOptions {
  /** Deadline for one attempt, in ms. */
  timeoutMs?: number;
  /** Safe to repeat (reads): retried with backoff while the peer is UNAVAILABLE. */
  idempotent?: boolean;
}

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

/** One client (and channel) per service and stub type, created on first use. */
export function clientFor<C extends grpc.Client>(
  service: ServiceName,
  Ctor: new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => C,
): C {
  const key = `${service}:${Ctor.name}:${(Ctor as unknown as { serviceName?: string }).serviceName ?? ''}`;
  let c = clients.get(key);
  if (!c) {
    c = new Ctor(serviceAddress(service), grpc.credentials.createInsecure(), channelOptions);
    clients.set(key, c);
  }
  return c as C;
}

export function closeClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}

/**
 * Calls a unary method of a ts-proto grpc-js client as a promise, with a deadline on every attempt
 * and retries for idempotent calls while the peer is unavailable.
 */
export async function call<Req, Res>(
  service: ServiceName,
  client: grpc.Client,
  method: string,
  request: Req,
  metadata: grpc.Metadata,
  opts: CallOptions = {},
): Promise<Res> {
  const attempts = opts.idempotent ? READ_RETRIES + 1 : 1;
  let lastErr: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(100 * 2 ** (attempt - 1) + Math.random() * 50);
    try {
      const res = await once<Req, Res>(client, method, request, withInternalToken(metadata), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      grpcClientHandled.inc({ grpc_service: service, grpc_method: method, grpc_code: 'OK' });
      return res;
    } catch (err) {
      const code = (err as grpc.ServiceError).code;
      grpcClientHandled.inc({ grpc_service: service, grpc_method: method, grpc_code: grpc.status[code] ?? 'UNKNOWN' });
      lastErr = err;
      if (code !== grpc.status.UNAVAILABLE) break;
    }
  }
  throw lastErr;
}

function once<Req, Res>(client: grpc.Client, method: string, request: Req, metadata: grpc.Metadata, timeoutMs: number): Promise<Res> {
  const fn = (client as unknown as Record<string, Function>)[method];
  if (typeof fn !== 'function') throw new Error(`no gRPC method ${method}`);
  return new Promise((resolve, reject) => {
    fn.call(client, request, metadata, { deadline: Date.now() + timeoutMs }, (err: grpc.ServiceError | null, res: Res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
