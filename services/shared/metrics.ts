import http from 'node:http';
import client from 'prom-client';
import { bindHost } from './config';
import { log } from './log';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export const grpcServerHandled = new client.Counter({
  name: 'grpc_server_handled_total',
  help: 'gRPC calls completed by this server, by gRPC service, method and status code.',
  // grpc_* names, not `service`: Prometheus adds its own `service` label to every scraped target.
  labelNames: ['grpc_service', 'grpc_method', 'grpc_code'] as const,
  registers: [registry],
});

export const grpcServerLatency = new client.Histogram({
  name: 'grpc_server_handling_seconds',
  help: 'Time to handle a gRPC call.',
  labelNames: ['grpc_service', 'grpc_method'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const grpcClientHandled = new client.Counter({
  name: 'grpc_client_handled_total',
  help: 'gRPC calls made by this process, by target service, method and status code.',
  labelNames: ['grpc_service', 'grpc_method', 'grpc_code'] as const,
  registers: [registry],
});

export const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by route template, method, status code and API version.',
  labelNames: ['route', 'method', 'code', 'version'] as const,
  registers: [registry],
});

export const httpLatency = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time to answer an HTTP request.',
  labelNames: ['route', 'method', 'code', 'version'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Each label set's counter and histogram children, bound once: a labels object is hashed on every call otherwise. */
const requestSeries = new Map<string, { count: client.Counter.Internal; latency: client.Histogram.Internal<string> }>();

/** One answered HTTP request: `http_requests_total` and `http_request_duration_seconds`, timed from `started` (hrtime); no version is `none`. */
export function countRequest(route: string, method: string, code: number, version: string | undefined, started: bigint): void {
  version ??= 'none';
  const k = `${route} ${method} ${code} ${version}`;
  let series = requestSeries.get(k);
  if (!series) {
    const labels = { route, method, code: String(code), version };
    series = { count: httpRequests.labels(labels), latency: httpLatency.labels(labels) };
    requestSeries.set(k, series);
  }
  series.count.inc();
  series.latency.observe(Number(process.hrtime.bigint() - started) / 1e9);
}

export interface PoolReader {
  /** The service owning the pool (label `pool`). */
  service: string;
  read(): { used: number; free: number } | undefined;
}
const poolReaders: PoolReader[] = [];

/** Database pools report their usage when Prometheus scrapes, not on a timer. */
export function registerPool(reader: PoolReader): void {
  poolReaders.push(reader);
}

new client.Gauge({
  name: 'db_pool_used',
  help: 'Database connections in use.',
  labelNames: ['pool'] as const,
  registers: [registry],
  collect() {
    for (const r of poolReaders) {
      const v = r.read();
      if (v) this.set({ pool: r.service }, v.used);
    }
  },
});

new client.Gauge({
  name: 'db_pool_free',
  help: 'Idle database connections.',
  labelNames: ['pool'] as const,
  registers: [registry],
  collect() {
    for (const r of poolReaders) {
      const v = r.read();
      if (v) this.set({ pool: r.service }, v.free);
    }
  },
});

/** Serves /metrics on its own port, away from API traffic. */
export function startMetricsServer(port: number, host = bindHost()): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    if (req.url === '/metrics') {
      res.setHeader('Content-Type', registry.contentType);
      res.end(await registry.metrics());
    } else {
      res.statusCode = 404;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ object: 'error', type: 'not_found', message: 'Only /metrics is served here.', http_status: 404 }));
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      log.info('metrics listening', { port: (server.address() as { port: number }).port });
      resolve(server);
    });
  });
}
