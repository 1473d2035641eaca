import http, { type IncomingMessage } from 'node:http';
import type express from 'express';
import { createProxyMiddleware, fixRequestBody } from 'http-proxy-middleware';
import { describeProxiedRoute } from './api/route-docs';
import { envStr } from '../services/shared/config';
import { internalToken } from '../services/shared/internal-token';
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

/** The ad paths anyone may call: tags, decisions and tracking beacons. */
export function isPublicServePath(path: string): boolean {
  return path === '/adserve' || path.startsWith('/adserve/') || path.startsWith('/serve/');
}

/** `/adserve/...` and `/serve/...`: public, before any key check. */
export function publicServeProxy(): express.RequestHandler {
  return createProxyMiddleware({
    target: target(),
    agent,
    pathFilter: isPublicServePath,
    xfwd: true,
    on: {
      proxyReq: (proxyReq) => {
        // Only the gateway may speak for a tenant: nothing a browser sends is passed on as such.
        for (const h of ['x-account-id', 'x-mode', 'x-internal-token', 'authorization']) proxyReq.removeHeader(h);
      },
      error: (err, _req, res) => {
        log.warn('serving unreachable', { error: (err as Error).message });
        unavailable(res);
      },
    },
  }) as unknown as express.RequestHandler;
}

// /v2/adserve is proxied to serving, outside the route table: its OpenAPI description lives here.
for (const method of ['get', 'post'] as const) {
  describeProxiedRoute({
    method,
    path: '/v2/adserve',
    summary: 'An ad decision for a zone, answered by the serving process (a test key answers from test data and records nothing)',
    tag: 'adserve',
    query: method === 'get' ? { ID: { type: 'integer', description: 'Account id.' }, setID: { type: 'integer', description: 'Zone id.' }, type: { type: 'string', enum: ['json', 'jsonr'] }, size: { type: 'string', description: 'WIDTHxHEIGHT.' } } : undefined,
    body: method === 'post' ? { ID: { type: 'integer' }, setID: { type: 'integer' }, type: { type: 'string', enum: ['json', 'jsonr'] }, size: { type: 'string' } } : undefined,
    response: { schema: { type: 'object', description: 'The decision: `placements` keyed placement_1…, or `{"status":"NO_ADS"}`.' } },
  });
}

/** `/v2/adserve`: after the key check and rate limit; the key's account and mode go with the token. */
export function v2AdserveProxy(): express.RequestHandler {
  return createProxyMiddleware({
    target: target(),
    agent,
    pathFilter: (path: string) => path === '/v2/adserve',
    xfwd: true,
    on: {
      proxyReq: (proxyReq, req: IncomingMessage, res) => {
        proxyReq.removeHeader('authorization');
        const ctx = ctxOf(res as unknown as express.Response);
        proxyReq.setHeader('x-account-id', String(ctx.tenant.accountId));
        proxyReq.setHeader('x-mode', ctx.tenant.mode);
        const token = internalToken();
        if (token) proxyReq.setHeader('x-internal-token', token);
        else proxyReq.removeHeader('x-internal-token');
        // A body another middleware already parsed (idempotency keys) is written again.
        fixRequestBody(proxyReq, req as never);
      },
      error: (err, _req, res) => {
        log.warn('serving unreachable', { error: (err as Error).message });
        unavailable(res);
      },
    },
  }) as unknown as express.RequestHandler;
}
