import crypto from 'node:crypto';
import type { Mode } from '../shared/tenant';

/** A new API key: `<mode>_` then 32 random bytes (base64url). Only its SHA-256 is stored. */
export function newApiKey(mode: Mode): { secret: string; hash: string; prefix: string } {
  const secret = `${mode}_${crypto.randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashKey(secret), prefix: secret.slice(0, 12) };
}

export function hashKey(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}
