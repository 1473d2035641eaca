import type { Metadata } from '@grpc/grpc-js';
import type { ListRequest } from '../../proto/gen/adserver/resources/v1/resources';
import { getKind, type Json } from '../../services/shared/catalog';
import { resourcesApi } from '../../services/shared/grpc/resources-api';
import { withIdempotencyKey } from '../../services/shared/idempotency';
import { tenantMetadata } from '../../services/shared/tenant';
import type { RequestContext } from '../context';
import { ApiError, fromGrpcError } from '../errors';
import { viewOf } from './views';

/**
 * The gateway's only way to data: the Resources API of the service that owns a kind, called with the
 * caller's account and mode in metadata. gRPC failures come back as API errors of the caller's version.
 */
async function invoke<Res>(ctx: RequestContext, kindName: string, fn: (api: ReturnType<typeof resourcesApi>) => Promise<Res>, keyed = false): Promise<Res> {
  const kind = getKind(kindName);
  try {
    return await fn(resourcesApi(kind.service, withIdempotencyKey(tenantMetadata(ctx.tenant), keyed ? ctx.idempotency : undefined)));
  } catch (err) {
    const view = viewOf(kind, ctx.version);
    throw fromGrpcError(err, ctx.version, view?.versionName);
  }
}

/**
 * A call to a service-specific API (outside Resources) on the caller's behalf: `send` gets the
 * metadata carrying the caller's account and mode (and, when `keyed`, the Idempotency-Key), and a
 * failure comes back as an API error of the caller's version. The typed clients are in
 * services/shared/grpc/clients.ts.
 */
export async function asCaller<Res>(ctx: RequestContext, send: (metadata: Metadata) => Promise<Res>, opts: { keyed?: boolean } = {}): Promise<Res> {
  try {
    return await send(withIdempotencyKey(tenantMetadata(ctx.tenant), opts.keyed ? ctx.idempotency : undefined));
  } catch (err) {
    // The request built inside `send` may refuse the caller's input before any call is made.
    if (err instanceof ApiError) throw err;
    throw fromGrpcError(err, ctx.version);
  }
}

export const backend = {
  /** The request's Idempotency-Key goes with the create, so the service stores it with the resource. */
  create: (ctx: RequestContext, kind: string, attributes: Record<string, Json>) => invoke(ctx, kind, (api) => api.create({ kind, attributes }), true),
  get: (ctx: RequestContext, kind: string, id: number, archived = false) => invoke(ctx, kind, (api) => api.get({ kind, id, archived })),
  update: (ctx: RequestContext, kind: string, id: number, attributes: Record<string, Json>) => invoke(ctx, kind, (api) => api.update({ kind, id, attributes })),
  delete: (ctx: RequestContext, kind: string, id: number, archived = false) => invoke(ctx, kind, (api) => api.delete({ kind, id, archived })),
  list: (ctx: RequestContext, req: Partial<ListRequest> & { kinds: string[] }) => invoke(ctx, req.kinds[0], (api) => api.list(req)),
  archive: (ctx: RequestContext, kind: string, id: number) => invoke(ctx, kind, (api) => api.archive({ kind, id }, { timeoutMs: 20_000 })),
  unarchive: (ctx: RequestContext, kind: string, id: number, include: string[]) => invoke(ctx, kind, (api) => api.unarchive({ kind, id, include }, { timeoutMs: 20_000 })),
};
