import { Metadata } from '@grpc/grpc-js';
import { fail } from './errors';

export type Mode = 'test' | 'live';

/** Whose data a call may see: one account, one mode. Every query is filtered by both. */
export interface Tenant {
  accountId: number;
  mode: Mode;
}

export function tenantFromMetadata(md: Metadata): Tenant {
  const account = md.get('x-account-id')[0];
  const mode = md.get('x-mode')[0];
  const accountId = Number(account);
  if (!Number.isSafeInteger(accountId) || accountId < 1 || (mode !== 'test' && mode !== 'live')) {
    throw fail.unauthenticated('The call carries no valid account and mode.');
  }
  return { accountId, mode };
}

export function tenantMetadata(t: Tenant, extra?: Metadata): Metadata {
  const md = extra?.clone() ?? new Metadata();
  md.set('x-account-id', String(t.accountId));
  md.set('x-mode', t.mode);
  return md;
}
