import crypto from 'node:crypto';
import type { Mode } from './tenant';

/**
 * API keys: `<mode>_` then 32 random bytes (base64url). Accounts issues them and stores only their
 * SHA-256; gateways hash what a caller presents the same way to look it up.
 */
export function newApiKey(mode: Mode): { secret: string; hash: string; prefix: string } {
  const secret = `${mode}_${crypto.randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashApiKey(secret), prefix: secret.slice(0, 12) };
}

export function hashApiKey(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Every key the platform issues has this shape; anything else cannot resolve and need not be looked up. */
export function looksLikeApiKey(secret: string): boolean {
  return /^(test|live)_[A-Za-z0-9_-]{20,100}$/.test(secret);
}
