import type { ClientReadableStream } from '@grpc/grpc-js';
import type { NextFunction, Request, Response } from 'express';
import { AccountsClient, Mode, type KeyRevocation } from '../proto/gen/adserver/accounts/v1/accounts';
import { hashApiKey, looksLikeApiKey } from '../services/shared/api-keys';
import { envInt } from '../services/shared/config';
import { openStream } from '../services/shared/grpc/client';
import { accounts } from '../services/shared/grpc/clients';
import { log } from '../services/shared/log';
import type { RequestContext } from './context';
import { versionOfPath } from './context';
import { apiErrors, ApiError } from './errors';
import type { RateLimiter } from './ratelimit';

interface Cached {
  identity: Omit<RequestContext, 'version'>;
  expires: number;
}

export const MISSING_KEY_MESSAGE = "Provide your API key in the Authorization header: 'Authorization: Basic <API key>'.";
export const INVALID_KEY_MESSAGE = 'The API key is invalid or has been deleted.';

/**
 * Resolves API keys through the accounts service. Resolutions are cached briefly (KEY_CACHE_TTL_MS);
 * a deleted key is dropped at once through the accounts revocation stream, and the whole cache is
 * dropped whenever that stream breaks, since revocations may have been missed meanwhile.
 */
export class KeyResolver {
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs = envInt('KEY_CACHE_TTL_MS', 30_000);
  /** Hashes just found unknown: repeated bad keys (a misconfigured client, guessing) stay off accounts. */
  private readonly misses = new Map<string, number>();
  private readonly missTtlMs = envInt('KEY_MISS_TTL_MS', 5_000);
  private stream?: ClientReadableStream<KeyRevocation>;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  /** Keys used since the last flush: their last-used times are written in one batch, off the request path. */
  private used = new Set<number>();
  private usageTimer?: NodeJS.Timeout;
  private readonly usageFlushMs = envInt('KEY_USAGE_FLUSH_MS', 60_000);

  start(): void {
    this.watch();
    this.usageTimer = setInterval(() => void this.flushUsage(), this.usageFlushMs);
    this.usageTimer.unref();
  }

  /** Unexpired cached resolutions: keys this gateway can still authenticate without accounts. */
  cachedKeys(): number {
    const now = Date.now();
    let n = 0;
    for (const c of this.cache.values()) if (c.expires > now) n++;
    return n;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.usageTimer);
    this.stream?.cancel();
    await this.flushUsage();
  }

  /** Notes a request made with this key (no I/O). */
  noteUse(keyId: number): void {
    if (this.used.size < 100_000) this.used.add(keyId);
  }

  private async flushUsage(): Promise<void> {
    if (!this.used.size) return;
    const keyIds = [...this.used];
    this.used = new Set();
    try {
      await accounts.recordKeyUse({ keyIds }, { idempotent: true, timeoutMs: 5000 });
    } catch (err) {
      // Last-used times are informative: a lost batch only leaves them a minute behind.
      log.warn('recording key use failed', { error: (err as Error).message, keys: keyIds.length });
    }
  }

  private watch(): void {
    if (this.stopped) return;
    const stream = openStream('accounts', AccountsClient, 'watchKeyRevocations', {});
    this.stream = stream;
    stream.on('data', (ev: KeyRevocation) => (ev.all ? this.cache.clear() : this.cache.delete(ev.keyHash)));
    stream.on('error', () => undefined);
    stream.on('close', () => {
      this.cache.clear();
      if (!this.stopped) this.retryTimer = setTimeout(() => this.watch(), 1000);
    });
  }

  /** Whether this key is answered from the cache (no call to accounts). */
  cached(secret: string): boolean {
    return looksLikeApiKey(secret) && (this.cache.get(hashApiKey(secret))?.expires ?? 0) > Date.now();
  }

  async resolve(secret: string): Promise<Cached['identity'] | undefined> {
    if (!looksLikeApiKey(secret)) return undefined;
    const hash = hashApiKey(secret);
    const hit = this.cache.get(hash);
    if (hit && hit.expires > Date.now()) return hit.identity;
    const missed = this.misses.get(hash);
    if (missed !== undefined && missed > Date.now()) return undefined;
    try {
      const id = await accounts.resolveKey({ keyHash: hash }, {
        idempotent: true,
        timeoutMs: 3000,
      });
      const identity = {
        tenant: { accountId: id.accountId, mode: id.mode === Mode.MODE_TEST ? ('test' as const) : ('live' as const) },
        keyId: id.keyId,
        features: id.features,
        limits: { general: id.generalLimit, reporting: id.reportingLimit },
      };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { identity, expires: Date.now() + this.ttlMs });
      return identity;
    } catch (err) {
      if ((err as { code?: number }).code === 5 /* NOT_FOUND */) {
        if (this.misses.size > 10_000) this.misses.clear();
        this.misses.set(hash, Date.now() + this.missTtlMs);
        return undefined;
      }
      log.warn('key resolution failed', { error: (err as Error).message });
      throw apiErrors.unavailable('Cannot check API keys right now; retry shortly.');
    }
  }
}

/** The key from `Authorization: Basic <key>`; also accepts curl's `-u <key>:` form (base64 of `key:`). */
export function keyFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (!m) return undefined;
  const token = m[1];
  if (looksLikeApiKey(token)) return token;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const user = decoded.split(':')[0];
  return looksLikeApiKey(user) ? user : token;
}

/** Failed authentications a client address may make per minute before its unknown keys are refused unchecked. */
const AUTH_FAILURE_LIMIT = envInt('AUTH_FAILURE_LIMIT', 300);

/**
 * Checks the request's key. A client address that sent more than AUTH_FAILURE_LIMIT unknown keys in the
 * last minute gets 429 for keys this gateway does not already know, without a lookup: a flood of
 * made-up keys costs it nothing and other tenants no latency. A key already in the cache (in use
 * recently) is never refused by this budget.
 */
export function authenticate(resolver: KeyResolver, failures?: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const version = versionOfPath(req.path);
    const secret = keyFromHeader(req.headers.authorization);
    if (!secret) {
      return next(apiErrors.unauthenticated(version, MISSING_KEY_MESSAGE));
    }
    try {
      const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
      if (failures && !resolver.cached(secret) && (await failures.used('auth-failure', address)) >= AUTH_FAILURE_LIMIT) {
        return next(new ApiError(429, 'rate_limit_error', `Too many requests with invalid API keys from this address (more than ${AUTH_FAILURE_LIMIT} a minute); retry in a minute with a valid key.`, undefined, { 'Retry-After': '60' }));
      }
      const identity = await resolver.resolve(secret);
      if (!identity) {
        await failures?.hit('auth-failure', address, Number.MAX_SAFE_INTEGER);
        return next(apiErrors.unauthenticated(version, INVALID_KEY_MESSAGE));
      }
      resolver.noteUse(identity.keyId);
      res.locals.ctx = { ...identity, version: version ?? 'v2' } satisfies RequestContext;
      next();
    } catch (err) {
      next(err instanceof ApiError ? err : apiErrors.unavailable());
    }
  };
}
