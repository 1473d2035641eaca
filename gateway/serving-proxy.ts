import http, { type IncomingMessage } from 'node:http';
import type express from 'express';
import { createProxyMiddleware, fixRequestBody } from 'http-proxy-middleware';
import proxyaddr from 'proxy-addr';
import { describeProxiedRoute } from './api/route-docs';
import { envStr } from '../services/shared/config';
import { internalToken } from '../services/shared/internal-token';
import { injectTraceContext } from '../services/shared/telemetry';
import { log } from '../services/shared/log';
import { ctxOf } from './context';
import { apiErrors } from './errors';

/**
 * The gateway's side of ad serving: the public serve paths (no key) and /v2/adserve (with a key) are
 * answered by the serving process (SERVING_ADDR), reached through http-proxy-middleware.
 */
const target = () => `http://${envStr('SERVING_ADDR', '127.0.0.1:8090')}`;
/** Connections to serving are kept open: a new one per ad request costs more than the decision. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 10_000 });

function unavailable(res: unknown): void {
  const r = res as http.ServerResponse;
  if (!r || typeof r.setHeader !== 'function' || r.headersSent) return void (r as { destroy?: () => void })?.destroy?.();
  const err = apiErrors.unavailable('The ad server is unavailable; retry shortly.');
  const body = JSON.stringify(err.body('v2'));
  for (const [k, v] of Object.entries(err.headers ?? {})) r.setHeader(k, v);
  r.statusCode = 503;
  r.setHeader('Content-Type', 'application/json; charset=utf-8');
  r.setHeader('Content-Length', Buffer.byteLength(body));
  r.end(body);
}

/** The proxies whose X-Forwarded-* headers the gateway believes (TRUSTED_PROXIES, comma-separated). */
export function trustedProxies(): string[] {
  return (envStr('TRUSTED_PROXIES', '') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

let trust: ((addr: string, i: number) => boolean) | undefined;
const trusts = () => (trust ??= proxyaddr.compile(trustedProxies()));

/** Headers only the gateway sets on a request to serving; `expect` too, which http-proxy would otherwise act on. */
const GATEWAY_ONLY_HEADERS = ['x-account-id', 'x-mode', 'x-internal-token', 'authorization', 'expect', 'forwarded'];
const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port'];

/**
 * Sets the headers serving reads on the incoming request itself, before the proxy copies them: the
 * proxy's own `proxyReq` hook is skipped for some requests (`Expect: 100-continue`, which Node has
 * already answered). Nothing a client sends speaks for a tenant; X-Forwarded-* are kept only from a
 * trusted proxy, and then carry the client address it vouches for (the proxy adds the peer's).
 */
export function prepareForServing(req: IncomingMessage, tenant?: { accountId: number; mode: string }): void {
  const h = req.headers;
  for (const name of GATEWAY_ONLY_HEADERS) delete h[name];
  // Serving's span continues the gateway's (a client's own trace context was the gateway span's parent).
  delete h.traceparent;
  delete h.tracestate;
  injectTraceContext(h);
  if (trusts()(req.socket.remoteAddress ?? '', 0)) {
    h['x-forwarded-for'] = proxyaddr(req, trusts());
  } else {
    for (const name of FORWARDED_HEADERS) delete h[name];
  }
  if (!tenant) return;
  h['x-account-id'] = String(tenant.accountId);
  h['x-mode'] = tenant.mode;
  const token = internalToken();
  if (token) h['x-internal-token'] = token;
}

/**
 * A serve path as the client wrote it must be the one routed: `/serve/../v2/adserve` would pass the
 * public path check here and reach another route once serving's URL parser resolves the dot segments
 * (which it also finds written `%2e`, and behind a backslash, which it reads as a slash). Returns
 * whether the path has none. Encoded slashes stay: `/adserve/;ua=Mozilla%2F5.0…` carries them in its
 * parameters, and no parser treats them as separators.
 */
export function normalServePath(path: string): boolean {
  if (path.includes('\\')) return false;
  return !path.split('/').some((seg) => {
    const dots = seg.replace(/%2e/gi, '.');
    return dots === '.' || dots === '..';
  });
}

/** The ad paths anyone may call: tags, decisions and tracking beacons, and video players' VAST and its tracking. */
export function isPublicServePath(path: string): boolean {
  return path === '/adserve' || path.startsWith('/adserve/') || path.startsWith('/serve/') || path === '/vast.spark' || path.startsWith('/vast/');
}

/** `/adserve/...`, `/serve/...`, `/vast.spark` and `/vast/...`: public, before any key check. */
export function publicServeProxy(): express.RequestHandler {
  return createProxyMiddleware({
    target: target(),
    agent,
    pathFilter: isPublicServePath,
    xfwd: true,
    on: {
      error: (err, _req, res) => {
        log.warn('serving unreachable', { error: (err as Error).message });
        unavailable(res);
      },
    },
  }) as unknown as express.RequestHandler;
}

// /v2/adserve is proxied to serving, outside the route table: its OpenAPI description lives here.
const DEBUG = 'Decision debug: `{"object":"decision_debug","eligible":[…],"excluded":[{"placement","ad_item","rule","detail"}]}`, '
  + 'with goals and pacing. A live zone that asks programmatic demand adds `auction`: `timeout_ms`, `endpoints` '
  + '(each asked: `demand_endpoint`, `demand_source`, `format`, `outcome` bid/no_bid/timeout/error/below_floor/rejected, '
  + '`price` and `currency` when it bid, `deal`, `latency_ms`, `won`, `loss_reason` (OpenRTB) for a bid that lost) and `winner` '
  + '(`{"type":"demand",…,"price"}`, `{"type":"placement",…,"ecpm"}` or null). The endpoints are really asked (with OpenRTB `test: 1`), '
  + 'but a debug decision serves no ad and records nothing: no event, no win, loss or billing notice.';
for (const method of ['get', 'post'] as const) {
  describeProxiedRoute({
    method,
    path: '/v2/adserve',
    summary: 'An ad decision for a zone, answered by the serving process (a test key answers from test data and records nothing)',
    tag: 'adserve',
    query: method === 'get' ? { ID: { type: 'integer', description: 'Account id.' }, setID: { type: 'integer', description: 'Zone id.' }, type: { type: 'string', enum: ['json', 'jsonr'] }, size: { type: 'string', description: 'WIDTHxHEIGHT.' }, debug: { type: 'boolean', description: DEBUG } } : undefined,
    body: method === 'post' ? { ID: { type: 'integer' }, setID: { type: 'integer' }, type: { type: 'string', enum: ['json', 'jsonr'] }, size: { type: 'string' }, debug: { type: 'boolean' } } : undefined,
    response: { schema: { type: 'object', description: `The decision: \`placements\` keyed placement_1…, or \`{"status":"NO_ADS"}\`; with \`debug\`, the decision debug. ${DEBUG}` } },
  });
}

/** `/v2/adserve`: after the key check and rate limit; the key's account and mode go with the token. */
export function v2AdserveProxy(): express.RequestHandler {
  const proxy = createProxyMiddleware({
    target: target(),
    agent,
    pathFilter: (path: string) => path === '/v2/adserve',
    xfwd: true,
    on: {
      proxyReq: (proxyReq, req: IncomingMessage) => {
        // A body another middleware already parsed (idempotency keys) is written again.
        fixRequestBody(proxyReq, req as never);
      },
      error: (err, _req, res) => {
        log.warn('serving unreachable', { error: (err as Error).message });
        unavailable(res);
      },
    },
  }) as unknown as express.RequestHandler;
  return (req, res, next) => {
    if (req.path !== '/v2/adserve') return next();
    res.locals.route = '/v2/adserve';
    prepareForServing(req, ctxOf(res).tenant);
    return proxy(req, res, next);
  };
}
