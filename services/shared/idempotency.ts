import { Metadata, status } from '@grpc/grpc-js';
import type { Knex } from 'knex';
import { ServiceError } from './errors';

/**
 * An Idempotency-Key as the owning service keeps it: recorded with what the request created, in the
 * same transaction, so a retry finds that resource whatever happened to the first answer (a crash of
 * the service before it answered, a gateway that lost Redis). The gateway hashes the caller's key and
 * fingerprints the request (method, path, query, body); the service scopes both by account and mode.
 */
export interface IdempotencyKey {
  /** SHA-256 (hex) of the caller's Idempotency-Key. */
  key: string;
  /** SHA-256 (hex) of what "the same request" means. */
  fingerprint: string;
}

const KEY_MD = 'x-idempotency-key';
const FINGERPRINT_MD = 'x-idempotency-fingerprint';
const HEX64 = /^[0-9a-f]{64}$/;

/** Adds the key to the metadata of the one call that creates (Create, AddFunds, PlaceOrder). */
export function withIdempotencyKey(md: Metadata, k: IdempotencyKey | undefined): Metadata {
  if (k) {
    md.set(KEY_MD, k.key);
    md.set(FINGERPRINT_MD, k.fingerprint);
  }
  return md;
}

export function idempotencyFromMetadata(md: Metadata): IdempotencyKey | undefined {
  const key = md.get(KEY_MD)[0];
  const fingerprint = md.get(FINGERPRINT_MD)[0];
  if (typeof key !== 'string' || typeof fingerprint !== 'string' || !HEX64.test(key) || !HEX64.test(fingerprint)) return undefined;
  return { key, fingerprint };
}

/** The key names another request: 409 in v2, 400 in v1, as the gateway's own check answers. */
export function differentRequest(): ServiceError {
  return new ServiceError(
    status.ALREADY_EXISTS,
    'This Idempotency-Key was already used with a different request; use a new key for a new request.',
    'idempotency_error',
  );
}

/** Name of the unique index that holds one key per account and mode in `table`. */
export const idempotencyIndex = (table: string) => `${table}_idempotency_key`;

/** Adds the key columns and their unique index (per account and mode) to a table of a service. */
export async function addIdempotencyColumns(db: Knex, table: string): Promise<void> {
  await db.schema.alterTable(table, (t) => {
    t.string('idempotency_key', 64).nullable();
    t.string('idempotency_fingerprint', 64).nullable();
  });
  await db.raw(`create unique index ${idempotencyIndex(table)} on ${table} (account_id, mode, idempotency_key) where idempotency_key is not null`);
}

/** The insert was refused because another request with the same key got there first. */
export function isKeyTaken(err: unknown, table: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && e.constraint === idempotencyIndex(table);
}

/** A stored row's key matches the request's: same fingerprint, else the key was used for something else. */
export function checkSameRequest(stored: { idempotency_fingerprint: string | null }, k: IdempotencyKey): void {
  if (stored.idempotency_fingerprint !== k.fingerprint) throw differentRequest();
}
