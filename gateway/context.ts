import type { Response } from 'express';
import type { ApiVersion } from '../services/shared/catalog';
import type { IdempotencyKey } from '../services/shared/idempotency';
import type { Tenant } from '../services/shared/tenant';

/** What the gateway knows about a request once its key is checked. */
export interface RequestContext {
  version: ApiVersion;
  tenant: Tenant;
  keyId: number;
  features: string[];
  /** The account's request budgets per 60 s window; 0 (or absent) means the platform default. */
  limits?: { general: number; reporting: number };
  /** The request's Idempotency-Key (hashed) and fingerprint, handed to the service call that creates. */
  idempotency?: IdempotencyKey;
}

export function ctxOf(res: Response): RequestContext {
  return res.locals.ctx as RequestContext;
}

/** The path of a raw request, without its query string (for handlers that run before express). */
export function rawPath(req: { url?: string }): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

export function versionOfPath(path: string): ApiVersion | undefined {
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1';
  if (path === '/v2' || path.startsWith('/v2/')) return 'v2';
  return undefined;
}
