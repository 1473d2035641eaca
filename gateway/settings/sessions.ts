import crypto from 'node:crypto';
import { accounts } from '../../services/shared/grpc/clients';
import type { SharedState } from '../redis-state';

/** A settings-page session stops working after this long without a request. */
export const IDLE_SECONDS = 12 * 3600;

export interface Session {
  accountId: number;
  csrfToken: string;
  /** The account's session generation when the session began (absent in sessions made before it existed: 0). */
  generation?: number;
}

/** How long a gateway trusts the session generation it last read (another replica's sign-out everywhere shows within this). */
const GENERATION_CACHE_MS = 2000;

const sha256 = (s: string) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * Settings-page sessions, shared by every gateway replica: in Redis when configured, otherwise in the
 * accounts service's database. Only the SHA-256 of a session id is stored, so a leaked store does not
 * hand out sessions. A Redis outage falls back to accounts' database (sessions made there stay valid).
 *
 * Sign-out everywhere reaches every store: it deletes what it can reach and starts a new session
 * generation in accounts' database, and a session made in an earlier generation is refused wherever
 * it is found later (a Redis session that outlived an outage during which its owner signed out).
 */
export class SessionStore {
  private readonly generations = new Map<number, { generation: number; until: number }>();

  constructor(private readonly state: SharedState) {}

  private async generationOf(accountId: number): Promise<number> {
    const known = this.generations.get(accountId);
    if (known && known.until > Date.now()) return known.generation;
    const { generation } = await accounts.getSessionGeneration({ accountId }, { timeoutMs: 3000 });
    if (this.generations.size > 10_000) this.generations.clear();
    this.generations.set(accountId, { generation: Number(generation), until: Date.now() + GENERATION_CACHE_MS });
    return Number(generation);
  }

  private key(hash: string) {
    return `${this.state.prefix}settings-session:${hash}`;
  }
  private accountKey(accountId: number) {
    return `${this.state.prefix}settings-sessions-of:${accountId}`;
  }

  /** A new session for the account: the cookie value (random id) and the session. */
  async create(accountId: number): Promise<{ id: string; session: Session }> {
    const id = crypto.randomBytes(32).toString('base64url');
    const session: Session = { accountId, csrfToken: crypto.randomBytes(24).toString('base64url'), generation: await this.generationOf(accountId) };
    const hash = sha256(id);
    const redis = this.state.client;
    if (redis) {
      try {
        // The index lives as long as its longest session: each session's idle time is IDLE_SECONDS from
        // its last use, and every use renews the index for as long.
        await redis.multi().set(this.key(hash), JSON.stringify(session), 'EX', IDLE_SECONDS).sadd(this.accountKey(accountId), hash).expire(this.accountKey(accountId), IDLE_SECONDS).exec();
        return { id, session };
      } catch (err) {
        this.state.commandFailed(err);
      }
    }
    await accounts.createSession({ sessionHash: hash, accountId, csrfToken: session.csrfToken }, { timeoutMs: 3000 });
    return { id, session };
  }

  /** The session of a cookie value, its idle time restarted; undefined when unknown or expired. */
  async touch(id: string | undefined): Promise<Session | undefined> {
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const hash = sha256(id);
    const redis = this.state.client;
    if (redis) {
      let found: Session | undefined;
      try {
        const raw = await redis.getex(this.key(hash), 'EX', IDLE_SECONDS);
        if (raw) {
          found = JSON.parse(raw) as Session;
          await redis.expire(this.accountKey(found.accountId), IDLE_SECONDS);
        }
      } catch (err) {
        this.state.commandFailed(err);
      }
      if (found) {
        if ((found.generation ?? 0) >= (await this.generationOf(found.accountId))) return found;
        // Ended by a sign-out everywhere this store did not hear of: gone for good.
        await redis.del(this.key(hash)).catch((err) => this.state.commandFailed(err));
        return undefined;
      }
    }
    try {
      const s = await accounts.touchSession({ sessionHash: hash, idleSeconds: IDLE_SECONDS }, { timeoutMs: 3000 });
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
    const { generation } = await accounts.endSessions({ accountId }, { timeoutMs: 3000 });
    this.generations.set(accountId, { generation: Number(generation), until: Date.now() + GENERATION_CACHE_MS });
  }
}
