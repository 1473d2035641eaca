import crypto from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { AccountsClient, type SettingsSession } from '../../proto/gen/adserver/accounts/v1/accounts';
import { call, clientFor } from '../../services/shared/grpc/client';
import type { SharedState } from '../redis-state';

/** A settings-page session stops working after this long without a request. */
export const IDLE_SECONDS = 12 * 3600;

export interface Session {
  accountId: number;
  csrfToken: string;
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');
const rpc = <Res>(method: string, req: unknown) => call<unknown, Res>('accounts', clientFor('accounts', AccountsClient), method, req, new Metadata(), { timeoutMs: 3000 });

/**
 * Settings-page sessions, shared by every gateway replica: in Redis when configured, otherwise in the
 * accounts service's database. Only the SHA-256 of a session id is stored, so a leaked store does not
 * hand out sessions. A Redis outage falls back to accounts' database (sessions made there stay valid).
 */
export class SessionStore {
  constructor(private readonly state: SharedState) {}

  private key(hash: string) {
    return `${this.state.prefix}settings-session:${hash}`;
  }
  private accountKey(accountId: number) {
    return `${this.state.prefix}settings-sessions-of:${accountId}`;
  }

  /** A new session for the account: the cookie value (random id) and the session. */
  async create(accountId: number): Promise<{ id: string; session: Session }> {
    const id = crypto.randomBytes(32).toString('base64url');
    const session = { accountId, csrfToken: crypto.randomBytes(24).toString('base64url') };
    const hash = sha256(id);
    const redis = this.state.client;
    if (redis) {
      try {
        await redis.multi().set(this.key(hash), JSON.stringify(session), 'EX', IDLE_SECONDS).sadd(this.accountKey(accountId), hash).expire(this.accountKey(accountId), 7 * 86_400).exec();
        return { id, session };
      } catch (err) {
        this.state.commandFailed(err);
      }
    }
    await rpc<SettingsSession>('createSession', { sessionHash: hash, accountId, csrfToken: session.csrfToken });
    return { id, session };
  }

  /** The session of a cookie value, its idle time restarted; undefined when unknown or expired. */
  async touch(id: string | undefined): Promise<Session | undefined> {
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const hash = sha256(id);
    const redis = this.state.client;
    if (redis) {
      try {
        const raw = await redis.getex(this.key(hash), 'EX', IDLE_SECONDS);
        if (raw) return JSON.parse(raw) as Session;
      } catch (err) {
        this.state.commandFailed(err);
      }
    }
    try {
      const s = await rpc<SettingsSession>('touchSession', { sessionHash: hash, idleSeconds: IDLE_SECONDS });
      return { accountId: Number(s.accountId), csrfToken: s.csrfToken };
    } catch (err) {
      if ((err as { code?: number }).code === 5) return undefined;
      throw err;
    }
  }

  /** Ends every session of the account, in both stores (sign-out everywhere). */
  async endAll(accountId: number): Promise<void> {
    const redis = this.state.client;
    if (redis) {
      try {
        const hashes = await redis.smembers(this.accountKey(accountId));
        await redis.del(this.accountKey(accountId), ...hashes.map((h) => this.key(h)));
      } catch (err) {
        this.state.commandFailed(err);
      }
    }
    await rpc('endSessions', { accountId });
  }
}
