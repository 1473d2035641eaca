import type http from 'node:http';
import { Metadata } from '@grpc/grpc-js';
import { hasInternalToken, internalToken } from '../shared/internal-token';
import { tenantFromMetadata, type Tenant } from '../shared/tenant';

/**
 * The tenant the gateway forwards `/v2/adserve` for: the key's account and mode in the same headers
 * and under the same internal token as a gRPC call, checked by the same shared functions. Without a
 * configured token nobody may speak for a tenant here (serving faces the public).
 */
export function callerTenant(req: http.IncomingMessage): Tenant | undefined {
  if (!internalToken()) return undefined;
  const md = new Metadata();
  for (const name of ['x-internal-token', 'x-account-id', 'x-mode']) {
    const v = req.headers[name];
    if (typeof v === 'string') md.set(name, v);
  }
  if (!hasInternalToken(md)) return undefined;
  try {
    return tenantFromMetadata(md);
  } catch {
    return undefined;
  }
}
