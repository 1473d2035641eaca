import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { envInt } from '../services/shared/config';
import { ctxOf } from './context';
import { apiErrors, ApiError, versionStatus } from './errors';
import { jsonBody } from './json-body';
import { isUploadRequest, uploadFingerprint } from './multipart';
import type { SharedState } from './redis-state';

export const REPLAYED_HEADER = 'Idempotent-Replayed';
const STORED_MS = 24 * 60 * 60 * 1000;
/** A claim outlives any request (the server's request timeout is 30 s) but not a crashed gateway by long. */
const PENDING_MS = 60_000;
const WAIT_MS = envInt('IDEMPOTENCY_WAIT_MS', 10_000);
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

interface Entry {
  /** Hash of method, path, query and body: what "the same request" means. */
  fingerprint: string;
  /** Random token of the request that claimed the key. */
  owner: string;
  status?: number;
  body?: unknown;
}

/** Key-value store with set-if-absent: Redis when reachable, else in process with the same semantics. */
class EntryStore {
  private readonly memory = new Map<string, { value: string; expires: number }>();
  private lastSweep = Date.now();

  constructor(private readonly state: SharedState) {
    state.redis?.defineCommand('adserverDeleteIfEquals', {
      numberOfKeys: 1,
      lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
    });
  }

  private async viaRedis<T>(op: (r: NonNullable<SharedState['client']>) => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    const redis = this.state.client;
    if (!redis) return { ok: false };
    try {
      return { ok: true, value: await op(redis) };
    } catch (err) {
      this.state.commandFailed(err);
      return { ok: false };
    }
  }

  private memGet(key: string): string | undefined {
    const now = Date.now();
    if (now - this.lastSweep > 60_000) {
      this.lastSweep = now;
      for (const [k, v] of this.memory) if (v.expires <= now) this.memory.delete(k);
    }
    const hit = this.memory.get(key);
    if (hit && hit.expires > now) return hit.value;
    this.memory.delete(key);
    return undefined;
  }

  async claim(key: string, value: string, ttlMs: number): Promise<boolean> {
    const r = await this.viaRedis((redis) => redis.set(key, value, 'PX', ttlMs, 'NX'));
    if (r.ok) return r.value === 'OK';
    if (this.memGet(key) !== undefined) return false;
    this.memory.set(key, { value, expires: Date.now() + ttlMs });
    return true;
  }

  async get(key: string): Promise<string | undefined> {
    const r = await this.viaRedis((redis) => redis.get(key));
    if (r.ok) return r.value ?? undefined;
    return this.memGet(key);
  }

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    const r = await this.viaRedis((redis) => redis.set(key, value, 'PX', ttlMs));
    if (!r.ok) this.memory.set(key, { value, expires: Date.now() + ttlMs });
  }

  /** Drops the key only while it still holds `value` (our own claim). */
  async release(key: string, value: string): Promise<void> {
    const r = await this.viaRedis((redis) => (redis as unknown as { adserverDeleteIfEquals(k: string, v: string): Promise<number> }).adserverDeleteIfEquals(key, value));
    if (!r.ok && this.memGet(key) === value) this.memory.delete(key);
  }
}

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

async function fingerprintOf(req: Request): Promise<string> {
  const query = new URL(req.originalUrl, 'https://x').searchParams;
  query.sort();
  // A form's boundary is random per send: what must match is its parts and the file's bytes.
  const body = isUploadRequest(req) ? await uploadFingerprint(req, (b) => crypto.createHash('sha256').update(b).digest('hex')) : req.body;
  return crypto.createHash('sha256').update(`${req.method} ${req.path}?${query.toString()}\n${canonical(body)}`).digest('hex');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Marks a response whose resource the service found already made by the request's key. */
export function markReplayed(res: Response, replayed: boolean | undefined): void {
  if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
}

/**
 * `Idempotency-Key` on a POST or PUT: the first response (any status below 500) is stored for 24 hours per
 * account, mode and key, and a retry with the same key and request gets it back with
 * `Idempotent-Replayed: true` instead of running again. The same key with a different request is refused
 * (409 in v2, 400 in v1). A second request arriving while the first still runs waits for its answer.
 * A 5xx is not stored, so a retry after an outage runs again.
 */
export function idempotency(state: SharedState, bodyLimit: string) {
  const store = new EntryStore(state);
  // Parsed here, as the API routes would, because the body is part of what must match.
  const parseJson = jsonBody(bodyLimit);

  const conflict = (req: Request, message: string) => {
    const version = ctxOf(req.res!).version;
    return new ApiError(versionStatus('conflict', version), 'idempotency_error', message);
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const rawKey = req.headers['idempotency-key'];
    if ((req.method !== 'POST' && req.method !== 'PUT') || rawKey === undefined || !ctxOf(res)) return next();
    if (typeof rawKey !== 'string' || !KEY_SHAPE.test(rawKey)) {
      return next(apiErrors.badRequest("The 'Idempotency-Key' header must be 1 to 255 visible ASCII characters, given once.", 'idempotency_error'));
    }
    parseJson(req, res, (parseErr?: unknown) => {
      if (parseErr) return next(parseErr);
      void run(req, res, next, rawKey).catch(next);
    });
  };

  async function run(req: Request, res: Response, next: NextFunction, rawKey: string): Promise<void> {
    const ctx = ctxOf(res);
    const { tenant } = ctx;
    const hashed = crypto.createHash('sha256').update(rawKey).digest('hex');
    const key = `${state.prefix}idempotency:${tenant.accountId}:${tenant.mode}:${hashed}`;
    const fingerprint = await fingerprintOf(req);
    // The owning service records the key with what it creates: that, not this cache, is what makes a
    // retry after a crash or a Redis outage find the first result.
    ctx.idempotency = { key: hashed, fingerprint };
    const mine: Entry = { fingerprint, owner: crypto.randomBytes(12).toString('hex') };
    const claim = JSON.stringify(mine);
    const until = Date.now() + WAIT_MS;
    for (;;) {
      if (await store.claim(key, claim, PENDING_MS)) break;
      const raw = await store.get(key);
      if (raw === undefined) continue; // released or expired meanwhile: try to claim it again
      const found = JSON.parse(raw) as Entry;
      if (found.fingerprint !== fingerprint) {
        return next(conflict(req, 'This Idempotency-Key was already used with a different request; use a new key for a new request.'));
      }
      if (found.status !== undefined) {
        res.setHeader(REPLAYED_HEADER, 'true');
        res.status(found.status).json(found.body);
        return;
      }
      if (Date.now() > until) {
        return next(conflict(req, 'A request with this Idempotency-Key is still in progress; retry it shortly.'));
      }
      await sleep(50);
    }

    // We own the key: remember what this request answers, or give the key back on a server error.
    const json = res.json.bind(res);
    let sent: unknown;
    let captured = false;
    res.json = (body: unknown) => {
      sent = body;
      captured = true;
      return json(body);
    };
    res.on('finish', () => {
      // The service's own key answers ("still being placed", "used with a different request") are not
      // this request's outcome: keeping one would answer every later retry with it.
      const keyAnswer = (sent as { type?: unknown } | undefined)?.type === 'idempotency_error';
      if (captured && res.statusCode < 500 && !keyAnswer) {
        void store.put(key, JSON.stringify({ ...mine, status: res.statusCode, body: sent } satisfies Entry), STORED_MS).catch(() => undefined);
      } else void store.release(key, claim).catch(() => undefined);
    });
    res.on('close', () => {
      if (!res.writableFinished) void store.release(key, claim).catch(() => undefined);
    });
    next();
  }
}
