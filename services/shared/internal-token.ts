import crypto from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { PlatformSecret } from './secrets';

/**
 * The shared secret that service-to-service gRPC calls carry (`x-internal-token`), so that only the
 * platform's own processes can speak for a tenant: services trust the account and mode in metadata only
 * from callers that know it. INTERNAL_TOKEN sets it (a Kubernetes Secret); `npm start` creates one under
 * DATA_DIR/internal-token when none is set, where the admin CLI finds it too. Unset and absent: no check
 * (a single trusted host).
 */
const TOKEN_HEADER = 'x-internal-token';
const token = new PlatformSecret('INTERNAL_TOKEN', 'internal-token');

export const tokenFile = (): string => token.file();
export const internalToken = (): string | undefined => token.read();
/** The token to hand to child processes: INTERNAL_TOKEN, else the one in DATA_DIR, else a new one saved there. */
export const ensureInternalToken = (): string => token.ensure();

/** A copy of `md` carrying the token (when one is configured). */
export function withInternalToken(md: Metadata): Metadata {
  const token = internalToken();
  if (!token) return md;
  const out = md.clone();
  out.set(TOKEN_HEADER, token);
  return out;
}

/** The configured token's digest, kept while the token stays the same: one hash per call, not two. */
let expectedDigest: { token: string; digest: Buffer } | undefined;

/** Whether a call carries the configured token (constant-time); true when none is configured. */
export function hasInternalToken(md: Metadata): boolean {
  const expected = internalToken();
  if (!expected) return true;
  const given = md.get(TOKEN_HEADER)[0];
  if (typeof given !== 'string') return false;
  if (expectedDigest?.token !== expected) expectedDigest = { token: expected, digest: crypto.createHash('sha256').update(expected).digest() };
  return crypto.timingSafeEqual(crypto.createHash('sha256').update(given).digest(), expectedDigest.digest);
}
