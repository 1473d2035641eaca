import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ServerWritableStream } from '@grpc/grpc-js';
import {
  AccountsService,
  Mode as ProtoMode,
  type Account,
  type ApiKey,
  type CreateAccountRequest,
  type KeyRevocation,
  type WatchKeyRevocationsRequest,
} from '../../proto/gen/adserver/accounts/v1/accounts';
import type { Knex } from 'knex';
import type { Database } from '../shared/db';
import { formatTimestamp, schemaFor } from '../shared/db';
import { fail } from '../shared/errors';
import { holdSubscription, implement, type ServiceBinding, type UnaryHandlers } from '../shared/grpc/server';
import { hashPassword, verifyPassword } from '../shared/passwords';

/** A hash no password matches in practice: checked when the email is unknown, so both cases cost the same. */
const DUMMY_HASH = 'scrypt$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
import { channelName, notify, PgListener } from '../shared/pg-notify';
import type { Mode } from '../shared/tenant';
import { newApiKey } from '../shared/api-keys';

/** Account features an operator can switch on. */
export const FEATURES = ['native-to-image', 'self-serve'] as const;

interface AccountRow {
  id: number;
  name: string;
  email: string | null;
  features: string[];
  general_limit: number | null;
  reporting_limit: number | null;
  created_at: Date;
}

/** Largest per-account budget an operator can set (requests per 60-second window). */
const MAX_LIMIT = 1_000_000;

interface KeyRow {
  id: number;
  account_id: number;
  mode: Mode;
  key_hash: string;
  prefix: string;
  name: string;
  suffix: string;
  created_at: Date;
  last_used_at: Date | null;
}

const toProtoMode = (m: Mode) => (m === 'test' ? ProtoMode.MODE_TEST : ProtoMode.MODE_LIVE);
const fromProtoMode = (m: ProtoMode): Mode | undefined => (m === ProtoMode.MODE_TEST ? 'test' : m === ProtoMode.MODE_LIVE ? 'live' : undefined);

function toAccount(r: AccountRow): Account {
  return {
    id: Number(r.id),
    name: r.name,
    email: r.email ?? '',
    features: r.features ?? [],
    createdAt: formatTimestamp(r.created_at),
    generalLimit: r.general_limit ?? 0,
    reportingLimit: r.reporting_limit ?? 0,
  };
}

function toApiKey(r: KeyRow): ApiKey {
  return {
    id: Number(r.id),
    accountId: Number(r.account_id),
    mode: toProtoMode(r.mode),
    prefix: r.prefix,
    createdAt: formatTimestamp(r.created_at),
    name: r.name,
    suffix: r.suffix ?? '',
    lastUsedAt: r.last_used_at ? formatTimestamp(r.last_used_at) : '',
  };
}

/**
 * Key revocations reach every gateway whichever accounts replica handled the change: the replica that
 * deletes a key sends its hash over Postgres NOTIFY, and every replica, listening, passes it on to the
 * gateways watching it. When the listener lost its connection it may have missed some, so it tells its
 * gateways to drop every cached key.
 */
export function keyRevocationFeed(): { revocations: EventEmitter; channel: string; listener: PgListener } {
  const revocations = new EventEmitter();
  revocations.setMaxListeners(0);
  const channel = channelName(schemaFor('accounts'), 'key_revoked');
  const listener = new PgListener(() => revocations.emit('revoked-all'));
  void listener.listen(channel, (keyHash) => revocations.emit('revoked', keyHash));
  return { revocations, channel, listener };
}

/** Accounts and API keys: the operator-facing API (admin CLI) and key resolution for gateways. */
export function accountsBinding(db: Database, feed: ReturnType<typeof keyRevocationFeed>): ServiceBinding {
  const knex = db.knex;
  const { revocations, channel } = feed;
  // Sent inside the transaction of the change: Postgres delivers it on commit, so a replica that dies
  // after committing cannot leave a deleted key alive in gateways' caches.
  const revoke = async (trx: Knex.Transaction, keyHashes: string[]) => {
    for (const h of keyHashes) await notify(trx, channel, h);
  };

  const getAccount = async (id: number): Promise<AccountRow> => {
    const row = await knex<AccountRow>('accounts').where({ id }).first();
    if (!row) throw fail.notFound('account', id);
    return row;
  };

  const handlers: UnaryHandlers<typeof AccountsService> = {
    async createAccount(req: CreateAccountRequest) {
      const name = req.name.trim();
      if (!name || name.length > 255) throw fail.invalid([{ field: 'name', type: 'invalid_value', message: "'name' is required (1-255 characters)." }]);
      const unknown = req.features.filter((f) => !(FEATURES as readonly string[]).includes(f));
      if (unknown.length) throw fail.invalid([{ field: 'features', type: 'invalid_value', message: `Unknown feature '${unknown[0]}'; known: ${FEATURES.join(', ')}.` }]);
      if (req.password && req.password.length < 8) throw fail.invalid([{ field: 'password', type: 'invalid_value', message: "'password' must be at least 8 characters long." }]);
      const passwordHash = req.password ? await hashPassword(req.password) : null;
      const test = newApiKey('test');
      const live = newApiKey('live');
      const account = await knex.transaction(async (trx) => {
        const [acc] = await trx<AccountRow>('accounts')
          .insert({ name, email: req.email || null, password_hash: passwordHash, features: JSON.stringify([...new Set(req.features)]) } as never)
          .returning('*');
        await trx('api_keys').insert([
          { account_id: acc.id, mode: 'test', key_hash: test.hash, prefix: test.prefix, suffix: test.secret.slice(-4), name: 'Default test key' },
          { account_id: acc.id, mode: 'live', key_hash: live.hash, prefix: live.prefix, suffix: live.secret.slice(-4), name: 'Default live key' },
        ]);
        return acc;
      });
      return { account: toAccount(account), testKey: test.secret, liveKey: live.secret };
    },

    async setPassword(req: { accountId: number; password: string }) {
      if (!req.password || req.password.length < 8) throw fail.invalid([{ field: 'password', type: 'invalid_value', message: "'password' must be at least 8 characters long." }]);
      if (req.password.length > 1024) throw fail.invalid([{ field: 'password', type: 'invalid_value', message: "'password' must be at most 1024 characters long." }]);
      await getAccount(req.accountId);
      const [row] = await knex<AccountRow>('accounts').where({ id: req.accountId }).update({ password_hash: await hashPassword(req.password) } as never).returning('*');
      return toAccount(row);
    },

    async recordKeyUse(req: { keyIds: number[] }) {
      const ids = [...new Set(req.keyIds.map(Number))].filter((id) => Number.isSafeInteger(id) && id > 0).slice(0, 10_000);
      if (!ids.length) return { updated: 0 };
      // The age guard keeps the write to one a minute per key whatever the number of gateways.
      const updated = await knex('api_keys')
        .whereIn('id', ids)
        .andWhere((q) => q.whereNull('last_used_at').orWhereRaw("last_used_at < now() - interval '1 minute'"))
        .update({ last_used_at: knex.fn.now() });
      return { updated: Number(updated) };
    },

    async signIn(req: { email: string; password: string }) {
      const email = (req.email ?? '').trim().toLowerCase();
      const row = email && email.length <= 255 ? await knex<AccountRow & { password_hash: string | null }>('accounts').whereRaw('lower(email) = ?', [email]).orderBy('id').first() : undefined;
      // The same work and the same answer whether the email or the password is wrong.
      const ok = await verifyPassword(String(req.password ?? '').slice(0, 1024), row?.password_hash ?? DUMMY_HASH);
      if (!row || !row.password_hash || !ok) throw fail.notFound('account with this email and password', 'given');
      return toAccount(row);
    },

    async createSession(req: { sessionHash: string; accountId: number; csrfToken: string }) {
      if (!/^[0-9a-f]{64}$/.test(req.sessionHash) || !/^[A-Za-z0-9_-]{20,64}$/.test(req.csrfToken)) {
        throw fail.invalid([{ field: 'session_hash', type: 'invalid_value', message: 'A session needs a SHA-256 hash and a CSRF token.' }]);
      }
      await getAccount(req.accountId);
      await knex('settings_sessions').insert({ session_hash: req.sessionHash, account_id: req.accountId, csrf_token: req.csrfToken });
      return { sessionHash: req.sessionHash, accountId: Number(req.accountId), csrfToken: req.csrfToken };
    },

    async touchSession(req: { sessionHash: string; idleSeconds: number }) {
      const idle = Math.max(1, Math.min(req.idleSeconds || 43_200, 7 * 86_400));
      const [row] = await knex('settings_sessions')
        .where({ session_hash: String(req.sessionHash) })
        .andWhereRaw("last_seen_at > now() - make_interval(secs => ?)", [idle])
        .update({ last_seen_at: knex.fn.now() })
        .returning(['session_hash', 'account_id', 'csrf_token']);
      if (!row) {
        // Expired sessions go when they are next presented (and with their account).
        await knex('settings_sessions').where({ session_hash: String(req.sessionHash) }).delete();
        throw fail.notFound('session', 'given');
      }
      return { sessionHash: row.session_hash, accountId: Number(row.account_id), csrfToken: row.csrf_token };
    },

    async endSessions(req: { accountId: number }) {
      return knex.transaction(async (trx) => {
        const ended = await trx('settings_sessions').where({ account_id: req.accountId }).delete();
        const [row] = await trx('accounts').where({ id: req.accountId }).increment('session_generation', 1).returning(['session_generation']);
        return { ended: Number(ended), generation: Number(row?.session_generation ?? 0) };
      });
    },

    async getSessionGeneration(req: { accountId: number }) {
      const row = await knex('accounts').select('session_generation').where({ id: req.accountId }).first();
      if (!row) throw fail.notFound('account', req.accountId);
      return { generation: Number(row.session_generation) };
    },

    async getAccount(req: { id: number }) {
      return toAccount(await getAccount(req.id));
    },

    async resolveKey(req: { keyHash: string }) {
      if (!/^[0-9a-f]{64}$/.test(req.keyHash)) throw fail.notFound('API key', 'given');
      const row = await knex('api_keys as k')
        .join('accounts as a', 'a.id', 'k.account_id')
        .where('k.key_hash', req.keyHash)
        .first<KeyRow & Pick<AccountRow, 'features' | 'general_limit' | 'reporting_limit'>>('k.id', 'k.account_id', 'k.mode', 'k.key_hash', 'a.features', 'a.general_limit', 'a.reporting_limit');
      // The index finds the row; the comparison itself is constant-time all the same.
      if (!row || !crypto.timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(req.keyHash, 'hex'))) {
        throw fail.notFound('API key', 'given');
      }
      return {
        accountId: Number(row.account_id),
        mode: toProtoMode(row.mode),
        keyId: Number(row.id),
        features: row.features ?? [],
        generalLimit: row.general_limit ?? 0,
        reportingLimit: row.reporting_limit ?? 0,
      };
    },

    async createApiKey(req: { accountId: number; mode: ProtoMode; name: string }) {
      await getAccount(req.accountId);
      const mode = fromProtoMode(req.mode);
      if (!mode) throw fail.invalid([{ field: 'mode', type: 'invalid_value', message: "'mode' must be test or live." }]);
      const name = (req.name ?? '').trim();
      if (!name || name.length > 100) throw fail.invalid([{ field: 'name', type: 'invalid_value', message: "'name' is required: 1-100 characters that say what the key is for." }]);
      const key = newApiKey(mode);
      const [row] = await knex<KeyRow>('api_keys').insert({ account_id: req.accountId, mode, key_hash: key.hash, prefix: key.prefix, suffix: key.secret.slice(-4), name }).returning('*');
      return { key: toApiKey(row), secret: key.secret };
    },

    async listApiKeys(req: { accountId: number }) {
      await getAccount(req.accountId);
      const rows = await knex<KeyRow>('api_keys').where({ account_id: req.accountId }).orderBy('id');
      return { keys: rows.map(toApiKey) };
    },

    async deleteApiKey(req: { accountId: number; keyId: number }) {
      const row = await knex.transaction(async (trx) => {
        const [deleted] = await trx<KeyRow>('api_keys').where({ account_id: req.accountId, id: req.keyId }).delete().returning('*');
        if (deleted) await revoke(trx, [deleted.key_hash]);
        return deleted;
      });
      if (!row) throw fail.notFound('API key', req.keyId);
      return { keyId: Number(row.id) };
    },

    async setAccountLimits(req: { accountId: number; generalLimit?: number; reportingLimit?: number }) {
      await getAccount(req.accountId);
      const changes: Partial<Pick<AccountRow, 'general_limit' | 'reporting_limit'>> = {};
      for (const [field, value] of [['general_limit', req.generalLimit], ['reporting_limit', req.reportingLimit]] as const) {
        if (value === undefined) continue;
        if (!Number.isInteger(value) || value < 0 || value > MAX_LIMIT) {
          throw fail.invalid([{ field, type: 'invalid_value', message: `'${field}' must be an integer from 0 (the default) to ${MAX_LIMIT}.` }]);
        }
        changes[field] = value === 0 ? null : value;
      }
      const row = await knex.transaction(async (trx) => {
        const [updated] = Object.keys(changes).length
          ? await trx<AccountRow>('accounts').where({ id: req.accountId }).update(changes).returning('*')
          : await trx<AccountRow>('accounts').where({ id: req.accountId });
        if (!updated) throw fail.notFound('account', req.accountId);
        // Gateways cache resolved keys together with these limits; dropping the account's keys from
        // their caches (as a revocation does) makes the new limits apply at once.
        const keys = await trx<KeyRow>('api_keys').where({ account_id: req.accountId }).select('key_hash');
        await revoke(trx, keys.map((k) => k.key_hash));
        return updated;
      });
      return { accountId: Number(row.id), generalLimit: row.general_limit ?? 0, reportingLimit: row.reporting_limit ?? 0 };
    },
  };

  const watchKeyRevocations = (call: ServerWritableStream<WatchKeyRevocationsRequest, KeyRevocation>) => {
    holdSubscription(call);
    const onRevoked = (keyHash: string) => call.write({ keyHash, all: false });
    const onGap = () => call.write({ keyHash: '', all: true });
    revocations.on('revoked', onRevoked);
    revocations.on('revoked-all', onGap);
    const done = () => {
      revocations.off('revoked', onRevoked);
      revocations.off('revoked-all', onGap);
    };
    call.on('cancelled', done);
    call.on('close', done);
    call.on('error', done);
  };

  return implement('accounts.Accounts', AccountsService, handlers, { watchKeyRevocations });
}
