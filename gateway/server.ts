import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { envInt, envStr } from '../services/shared/config';
import { closeClients } from '../services/shared/grpc/client';
import { log } from '../services/shared/log';
import { startMetricsServer } from '../services/shared/metrics';
import type express from 'express';
import { tracedRequest } from '../services/shared/telemetry';
import { createApp, publicServeHandler, refuseOffServeOrigin, refuseWithoutKey, routeLabel, SERVE_ROUTE, servedOnServeOrigin } from './app';
import { rawPath } from './context';
import { KeyResolver } from './auth';
import { idempotency } from './idempotency';
import { RateLimiter, rateLimit } from './ratelimit';
import { SharedState } from './redis-state';
import { SessionStore } from './settings/sessions';
import { settingsRouter } from './settings/settings-router';
import { trustedProxies } from './serving-proxy';
import { loadTlsCredentials } from './tls';

export interface RunningGateway {
  httpsPort: number;
  httpPort: number;
  /** The serving origin's HTTPS port (ad tags, decisions, beacons, creative files only). */
  serveHttpsPort: number;
  metricsPort: number;
  /** Stops accepting, finishes in-flight requests (up to `graceMs`), closes everything. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Node pauses a connection's parser when a request arrives while the last answer is still buffered
 * above the socket's write high-water mark. Node 20 then fails the request with HPE_PAUSED if more of
 * it was already read (TLS hands over data after the pause) and drops the connection without an
 * answer. A write counts as buffered until the event loop runs its callback, even after the client
 * has read it. With Node's 16 KB mark, a busy gateway dropped a request sent right after a large
 * answer on the same connection: a long list, an error naming long fields. A mark above the answers
 * the API gives keeps the parser running. Node still pauses a client that pipelines without reading.
 */
const SOCKET_WRITE_MARK = 4 * 1024 * 1024;

function raiseWriteMark(sock: Socket): void {
  const state = (sock as Socket & { _writableState?: { highWaterMark: number } })._writableState;
  if (state && state.highWaterMark < SOCKET_WRITE_MARK) state.highWaterMark = SOCKET_WRITE_MARK;
}

/** How long, once stopping, a connection that has not sent its first request may still send one. */
const FIRST_REQUEST_GRACE_MS = 300;

function listen(server: http.Server | https.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
  });
}

export async function startGateway(): Promise<RunningGateway> {
  const resolver = new KeyResolver();
  resolver.start();
  const bodyLimit = envStr('BODY_LIMIT', '1mb')!;
  const shared = new SharedState();
  const limiter = new RateLimiter(shared);
  const app = createApp({
    settings: settingsRouter(new SessionStore(shared), limiter),
    resolver,
    authFailures: limiter,
    trustedProxies: trustedProxies(),
    bodyLimit,
    // Rate limits first: a refused request must not reach (or claim) an idempotency key.
    // RATE_LIMITS=off exists for the bench, which prices the limiter against a gateway without it.
    afterAuth: [...(envStr('RATE_LIMITS', 'on') === 'off' ? [] : [rateLimit(limiter)]), idempotency(shared, bodyLimit)],
    healthDetails: () => shared.details(),
    listening: () => listening && !draining,
  });
  app.set('bodyLimit', bodyLimit);
  const tls = await loadTlsCredentials();
  const host = envStr('GATEWAY_HOST', '0.0.0.0')!;
  let draining = false;
  let listening = false;
  // Requests in flight per connection: on stop, an idle keep-alive connection is closed at once, one
  // that has not sent a request yet gets FIRST_REQUEST_GRACE_MS (a handshake or a request may still be
  // arriving), and the others are closed when their last answer is sent.
  const inFlight = new Map<Socket, number>();
  const served = new WeakSet<Socket>();
  const track = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const sock = req.socket;
    served.add(sock);
    inFlight.set(sock, (inFlight.get(sock) ?? 0) + 1);
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      const left = (inFlight.get(sock) ?? 1) - 1;
      inFlight.set(sock, left);
      if (draining && left === 0) sock.destroySoon();
    };
    res.once('finish', finished);
    res.once('close', finished);
    if (draining) res.setHeader('Connection', 'close');
  };
  // The span is named after the express route that answered, as the metrics' `route` label is.
  const routeOf = (req: http.IncomingMessage) => () => (proxiedToServing.has(req) ? SERVE_ROUTE : routeLabel(req as express.Request));
  const servePublic = publicServeHandler();
  const proxiedToServing = new WeakSet<http.IncomingMessage>();
  const handler: http.RequestListener = (req, res) =>
    tracedRequest(req, res, () => {
      track(req, res);
      if (servePublic(req, res)) proxiedToServing.add(req);
      else app(req, res);
    }, routeOf(req));
  // On the HTTPS listener an API request without a well-formed key is refused before express, and
  // before a span is opened: a flood of them costs no tracing (they are still counted in the metrics).
  const httpsHandler: http.RequestListener = (req, res) => {
    if (refuseWithoutKey(req, res, () => track(req, res))) return;
    tracedRequest(req, res, () => {
      track(req, res);
      if (servePublic(req, res)) proxiedToServing.add(req);
      else app(req, res);
    }, routeOf(req));
  };
  // The serving origin: an origin of its own for every ad document, so a tenant's markup never runs
  // beside the API, the settings page or /docs (defence in depth: ad documents are sandboxed too).
  const serveHandler: http.RequestListener = (req, res) =>
    tracedRequest(req, res, () => {
      track(req, res);
      if (servePublic(req, res)) proxiedToServing.add(req);
      else if (servedOnServeOrigin(rawPath(req))) app(req, res);
      else refuseOffServeOrigin(req, res);
    }, routeOf(req));
  const httpsServer = https.createServer({ cert: tls.cert, key: tls.key }, httpsHandler);
  const serveServer = https.createServer({ cert: tls.cert, key: tls.key }, serveHandler);
  const httpServer = http.createServer({ highWaterMark: SOCKET_WRITE_MARK }, handler);
  const servers = [httpsServer, serveServer, httpServer];
  // The server's highWaterMark option reaches the TCP socket, not the TLS socket requests are read from.
  for (const s of [httpsServer, serveServer]) s.on('secureConnection', (sock: Socket) => raiseWriteMark(sock));
  for (const s of servers) {
    s.headersTimeout = 15_000;
    s.requestTimeout = 30_000;
    s.keepAliveTimeout = 5_000;
  }
  const sockets = new Set<Socket>();
  for (const s of servers) {
    // Node's parser answers requests it cannot read (oversized headers, malformed lines) itself; answer
    // them in the contract's JSON error shape instead of its bare status line.
    s.on('clientError', (err: NodeJS.ErrnoException & { bytesParsed?: number }, sock: Socket) => {
      if (!sock.writable || (err.code === 'ECONNRESET' && !err.bytesParsed)) return sock.destroy();
      const [status, type, message] =
        err.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'request_too_large_error', 'The request headers are too large.']
          : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? [408, 'request_timeout_error', 'The request was not received in time.']
            : [400, 'invalid_request_error', 'The request is not valid HTTP (check the request line, its path and the headers).'];
      // v1 errors carry `status` too (spec 2.1). Which API an unreadable request was for shows only when
      // the chunk being parsed starts it (over TLS a long request line spans several records): a v2 one
      // gets the v2 shape, anything else both members, which v2 clients ignore and v1 clients need.
      const head = ((err as { rawPacket?: Buffer }).rawPacket ?? Buffer.alloc(0)).subarray(0, 32).toString('latin1');
      const v2 = /^[A-Z]+ \/v2\//.test(head);
      const body = JSON.stringify({ object: 'error', type, message, ...(v2 ? {} : { status }), http_status: status });
      sock.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    });
  }
  const trackSocket = (sock: Socket) => {
    sockets.add(sock);
    sock.on('close', () => {
      sockets.delete(sock);
      inFlight.delete(sock);
    });
  };
  // The TLS socket (which requests see) and the TCP socket under it (a handshake in progress).
  httpServer.on('connection', trackSocket);
  for (const s of [httpsServer, serveServer]) {
    s.on('connection', trackSocket);
    s.on('secureConnection', trackSocket);
  }
  const httpsPort = await listen(httpsServer, envInt('GATEWAY_HTTPS_PORT', 8443), host);
  const serveHttpsPort = await listen(serveServer, envInt('GATEWAY_SERVE_PORT', 8444), host);
  const httpPort = await listen(httpServer, envInt('GATEWAY_HTTP_PORT', 8080), host);
  listening = true;
  const metrics = await startMetricsServer(envInt('METRICS_PORT', 9464));
  const metricsPort = (metrics.address() as { port: number }).port;
  log.info('gateway listening', { https_port: httpsPort, serve_https_port: serveHttpsPort, http_port: httpPort, metrics_port: metricsPort, tls_self_signed: tls.selfSigned });

  return {
    httpsPort,
    serveHttpsPort,
    httpPort,
    metricsPort,
    async close(graceMs = 10_000) {
      draining = true;
      const closed = Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
      // Open connections would hold close() open: idle keep-alive ones go now, those that have not sent
      // a request yet after FIRST_REQUEST_GRACE_MS, busy ones after their answer (sent with Connection:
      // close), and whatever is left after graceMs.
      const busy = (sock: Socket): boolean => {
        if ((inFlight.get(sock) ?? 0) > 0) return true;
        // The TCP socket under a TLS one is as busy as the TLS socket.
        for (const s of sockets) if ((s as Socket & { _parent?: Socket })._parent === sock && (busy(s) || !served.has(s))) return true;
        return false;
      };
      const reap = (all: boolean) => {
        for (const sock of sockets) if (!busy(sock) && (all || served.has(sock))) sock.destroy();
      };
      reap(false);
      const fresh = setTimeout(() => reap(true), FIRST_REQUEST_GRACE_MS);
      const timer = setTimeout(() => sockets.forEach((s) => s.destroy()), graceMs);
      await closed;
      clearTimeout(timer);
      clearTimeout(fresh);
      await resolver.stop();
      await shared.close();
      metrics.close();
      closeClients();
    },
  };
}
