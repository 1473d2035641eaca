import type http from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { looksLikeApiKey } from '../services/shared/api-keys';
import { countRequest } from '../services/shared/metrics';
import { errorFields, log } from '../services/shared/log';
import { resourceRouter } from './api/resources';
import { authenticate, INVALID_KEY_MESSAGE, keyFromHeader, KeyResolver, MISSING_KEY_MESSAGE } from './auth';
import { rawPath, versionOfPath } from './context';
import type { ApiVersion } from '../services/shared/catalog';
import { ApiError, apiErrors, methodNotSupported } from './errors';
import { checkService, checkServices, eventLoopStall, LIVENESS_MAX_STALL_MS } from './health';
import { DUPLICATE_MEMBER, duplicateMemberError, jsonBody } from './json-body';
import { creativeFile } from './creatives';
import type { RateLimiter } from './ratelimit';
import { isPublicServePath, normalServePath, prepareForServing, publicServeProxy, v2AdserveProxy } from './serving-proxy';
import { docsRouter } from './docs';

export interface GatewayOptions {
  resolver: KeyResolver;
  /** Where failed authentications are counted per client address (unset: not limited). */
  authFailures?: RateLimiter;
  /** express `trust proxy` value: who may set X-Forwarded-Proto (TRUSTED_PROXIES). */
  trustedProxies: string[];
  bodyLimit: string;
  /** Extra middleware between authentication and the API routes (rate limits, idempotency). */
  afterAuth?: express.RequestHandler[];
  /** The API settings page (/settings/api). */
  settings?: express.Router;
  /** Extra details for /healthz. */
  healthDetails?: () => Record<string, unknown>;
  /** False until both listeners are bound, and again once draining (for /readyz). */
  listening?: () => boolean;
}

/**
 * The API application, served on both listeners. API requests are only answered when they arrived
 * over TLS: on the HTTPS listener, or on the plain one from a trusted proxy that says so.
 */
export function createApp(opts: GatewayOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', opts.trustedProxies.length ? opts.trustedProxies : false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    setCommonHeaders(res, req.secure);
    res.on('finish', () => countRequest(routeLabel(req), req.method, res.statusCode, versionOfPath(req.path), started));
    next();
  });

  // The API's own chain, entered straight from the top for /v1 and /v2 paths: a request walks only its
  // own layers instead of every health, settings and docs route first (two dozen layer matches).
  const api = express.Router();
  api.use((req, _res, next) => {
    const version = versionOfPath(req.path)!;
    if (!req.secure) {
      // v1's table has no 403; 400 is its code for a request that cannot be served as made.
      return next(new ApiError(version === 'v2' ? 403 : 400, 'https_required_error', 'API requests must be made over HTTPS.'));
    }
    // Parameters are plain `name=value` pairs: `limit[]=1` or `limit[x]=1` would otherwise be ignored unseen.
    const bracketed = Object.keys(req.query).find((k) => k.includes('[') || k.includes(']'));
    if (bracketed !== undefined) {
      const name = bracketed.replace(/\[.*$/, '').slice(0, 64) || bracketed.slice(0, 64);
      return next(apiErrors.invalid([{ field: name, type: 'invalid_value', message: `'${bracketed.slice(0, 64)}' is not a parameter: give '${name}' once, as a plain name=value pair.` }]));
    }
    next();
  });
  api.use(authenticate(opts.resolver, opts.authFailures));
  for (const mw of opts.afterAuth ?? []) api.use(mw);
  api.use(v2AdserveProxy());
  api.use(jsonBody(opts.bodyLimit));
  api.use(resourceRouter());
  api.use((req, _res, next) => next(apiErrors.notFound(`No route ${req.method} ${req.path.slice(0, 200)}.`)));
  app.use((req, res, next) => {
    const version = versionOfPath(req.path);
    // The OpenAPI documents are public and served by the docs router.
    if (!version || req.path === `/${version}/openapi.json`) return next();
    api(req, res, next);
  });

  // Readiness: this gateway's own state only, so that one failing backend service does not take every
  // gateway pod out of rotation. Listeners up and not draining, and API keys can be checked: accounts
  // answers, or keys resolved recently are still cached.
  app.get('/readyz', async (_req, res) => {
    const listening = opts.listening?.() ?? true;
    const cachedKeys = opts.resolver.cachedKeys();
    const accounts = listening ? await checkService('accounts') : 'unavailable';
    const keys = accounts === 'ok' ? 'ok' : cachedKeys > 0 ? 'cached' : 'unavailable';
    const ok = listening && keys !== 'unavailable';
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', listeners: listening ? 'ok' : 'draining', keys, cached_keys: cachedKeys });
  });

  // Liveness: the event loop still runs timers on time (a blocked loop never answers at all).
  app.get('/livez', (_req, res) => {
    const lag = eventLoopStall();
    const ok = lag < LIVENESS_MAX_STALL_MS;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'stalled', event_loop_stall_ms: Math.round(lag) });
  });

  // Details for people and alerts: every service must answer.
  app.get('/healthz', async (_req, res) => {
    const services = await checkServices();
    const ok = Object.values(services).every((s) => s === 'ok');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', services, ...(opts.healthDetails?.() ?? {}) });
  });

  app
    .route('/creatives/:name')
    .get((req, res, next) => void creativeFile(req, res).catch(next))
    .all(methodNotSupported);
  if (opts.settings) app.use(opts.settings);
  app.use(docsRouter());

  app.use((req, _res, next) => next(apiErrors.notFound(`No route ${req.method} ${req.path.slice(0, 200)}. API paths start with /v1 or /v2.`)));

  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const version = versionOfPath(req.path);
    const apiErr = toApiError(err, req);
    if (apiErr.httpStatus === 500) log.error('request failed', { method: req.method, path: req.path, ...errorFields(err) });
    for (const [k, v] of Object.entries(apiErr.headers ?? {})) res.setHeader(k, v);
    res.status(apiErr.httpStatus).json(apiErr.body(version));
  });
  return app;
}

/** The route template that answered a request (metrics label and span name), or 'unmatched'. */
export function routeLabel(req: Request): string {
  if (req.route?.path) return String(req.route.path);
  // Middleware that answers a path of its own (the /v2/adserve proxy) names it, having no express route.
  const own = req.res?.locals.route;
  return typeof own === 'string' ? own : 'unmatched';
}

/** Headers of every answer the gateway writes itself; HSTS over HTTPS only. */
const COMMON_HEADERS: [string, string][] = [['X-Content-Type-Options', 'nosniff'], ['Cache-Control', 'no-store']];
const HSTS: [string, string] = ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'];

function setCommonHeaders(res: http.ServerResponse, secure: boolean): void {
  for (const [name, value] of COMMON_HEADERS) res.setHeader(name, value);
  if (secure) res.setHeader(...HSTS);
}

/**
 * Ad serving's public paths (tags, decisions, beacons: no key, plain HTTP allowed for tags on http
 * pages), handed to the serving proxy straight from the server's request handler: express's request
 * setup and route scan cost as much as the proxying itself on the busiest path. Returns whether the
 * request was one of them.
 */
export function publicServeHandler(): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const proxy = publicServeProxy() as unknown as (req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void) => void;
  return (req, res) => {
    const path = rawPath(req);
    if (!isPublicServePath(path)) return false;
    const started = process.hrtime.bigint();
    setCommonHeaders(res, (req.socket as { encrypted?: boolean }).encrypted === true);
    res.once('finish', () => countRequest(SERVE_ROUTE, req.method ?? 'GET', res.statusCode, undefined, started));
    if (!normalServePath(path)) {
      const body = JSON.stringify(apiErrors.badRequest("The path must not contain '.' or '..' segments (plain or percent-encoded) or backslashes.").body('v2'));
      res.writeHead(400, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(body);
      return true;
    }
    prepareForServing(req);
    proxy(req, res, (err) => {
      log.error('serve proxy failed', errorFields(err));
      if (!res.headersSent) {
        const body = JSON.stringify(new ApiError(500, 'api_error', 'Internal error; retry in a few minutes.').body('v2'));
        res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(body);
      }
    });
    return true;
  };
}

/** What the serving origin answers besides the serve paths: creative files and its health. */
export function servedOnServeOrigin(path: string): boolean {
  return path.startsWith('/creatives/') || path === '/healthz';
}

/**
 * The serving origin's answer to anything else: it holds ads only, so that no tenant's markup shares an
 * origin with the API, the settings page or /docs.
 */
export function refuseOffServeOrigin(req: http.IncomingMessage, res: http.ServerResponse): void {
  const started = process.hrtime.bigint();
  const body = JSON.stringify(new ApiError(404, 'resource_not_found_error', 'This host serves ads only: the API, /settings/api and /docs are on the API host.').body('v2'));
  setCommonHeaders(res, true);
  res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
  countRequest('unmatched', req.method ?? 'GET', 404, undefined, started);
}

/** The `route` label (and span name) of the public serve paths. */
export const SERVE_ROUTE = '/adserve, /serve/*, /vast*';

/**
 * Refuses an API request over HTTPS that carries no well-formed key, before express sees it: the
 * same answer authentication gives (401 in v1, 403 in v2), at a fraction of the cost, so that floods
 * of keyless or garbage requests stay cheap. `beforeAnswer` runs only when it answers. Returns whether it answered.
 */
export function refuseWithoutKey(req: http.IncomingMessage, res: http.ServerResponse, beforeAnswer?: () => void): boolean {
  const path = rawPath(req);
  const version = versionOfPath(path);
  if (!version) return false;
  // The OpenAPI documents are public.
  if (path === `/${version}/openapi.json`) return false;
  const secret = keyFromHeader(req.headers.authorization);
  if (secret && looksLikeApiKey(secret)) return false;
  const started = process.hrtime.bigint();
  beforeAnswer?.();
  const answer = keyRefusal(version, secret ? INVALID_KEY_MESSAGE : MISSING_KEY_MESSAGE);
  res.writeHead(answer.status, answer.headers);
  res.end(req.method === 'HEAD' ? undefined : answer.body);
  countRequest('unmatched', req.method ?? 'GET', answer.status, version, started);
  return true;
}

interface CannedAnswer {
  status: number;
  /** Names and values in one flat list, as writeHead takes them without building a headers object. */
  headers: string[];
  body: Buffer;
}

const keyRefusals = new Map<string, CannedAnswer>();

/** The refusal of a missing or malformed key, built once per version and message: a flood of them costs no JSON. */
function keyRefusal(version: ApiVersion, message: string): CannedAnswer {
  const key = `${version}\n${message}`;
  let answer = keyRefusals.get(key);
  if (!answer) {
    const err = apiErrors.unauthenticated(version, message);
    const body = Buffer.from(JSON.stringify(err.body(version)));
    // Refused on the HTTPS listener only: the common headers with HSTS.
    const headers = [...COMMON_HEADERS, HSTS].flat();
    for (const [name, value] of Object.entries(err.headers ?? {})) headers.push(name, value);
    headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(body.length));
    answer = { status: err.httpStatus, headers, body };
    keyRefusals.set(key, answer);
  }
  return answer;
}

function toApiError(err: unknown, req: Request): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number; message?: string };
  switch (e?.type) {
    case DUPLICATE_MEMBER:
      return duplicateMemberError(String(e.message));
    case 'entity.parse.failed':
      return apiErrors.badRequest(`The request body is not valid JSON: ${String(e.message).slice(0, 200)}`, 'invalid_json_error');
    case 'entity.too.large':
      return apiErrors.badRequest(`The request body is larger than the ${req.app.get('bodyLimit') ?? 'allowed'} limit.`, 'request_too_large_error');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return apiErrors.badRequest('The request body must be UTF-8 JSON.', 'invalid_json_error');
    case 'request.aborted':
      return apiErrors.badRequest('The request body was not received completely.');
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return apiErrors.badRequest(String(e.message ?? 'Bad request.'));
  return new ApiError(500, 'api_error', 'Internal error; retry in a few minutes.');
}
