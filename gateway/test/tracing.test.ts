/**
 * One request is one trace: the gateway's span, the accounts service's gRPC span and (on Postgres)
 * the database spans share a trace id when exported over OTLP, so an SRE can follow it end to end; an
 * ad decision's trace runs from the gateway through serving into inventory.
 */
import http from 'node:http';
import { freePort } from './support/platform';
import { startOwnPlatform, type OwnPlatform } from './support/own-platform';

interface SpanSeen {
  service: string;
  traceId: string;
  name: string;
  attributes: Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('OpenTelemetry traces', () => {
  const spans: SpanSeen[] = [];
  let collector: http.Server;
  let p: OwnPlatform;

  beforeAll(async () => {
    // A minimal OTLP/HTTP (JSON) trace receiver.
    collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        try {
          for (const rs of JSON.parse(body).resourceSpans ?? []) {
            const service = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue;
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                const attributes = Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value ?? {})[0]]));
                spans.push({ service, traceId: s.traceId, name: s.name, attributes });
              }
            }
          }
        } catch {
          /* not JSON: ignored */
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{}');
      });
    });
    const port = await freePort();
    await new Promise<void>((r) => collector.listen(port, '127.0.0.1', () => r()));
    p = await startOwnPlatform({
      OTEL_SDK_DISABLED: 'false',
      // The default parent-based ratio sampler, recording every new trace so the one request is seen.
      OTEL_TRACES_SAMPLER_ARG: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
  }, 200_000);

  afterAll(async () => {
    await p?.stop();
    collector?.close();
  }, 60_000);

  test('a create through the gateway is one trace across gateway, accounts and the database', async () => {
    const api = (await p.newAccount()).test;
    const res = await api.post('/v1/publishers', { name: 'Traced' });
    expect(res.status).toBe(200);
    const isCreate = (s: SpanSeen) => s.service === 'adserver-accounts' && /Resources\/Create$/.test(s.name);
    const deadline = Date.now() + 20_000;
    while (!spans.some(isCreate) && Date.now() < deadline) await sleep(200);
    const serverSpan = spans.find(isCreate);
    expect(serverSpan).toBeDefined();
    await sleep(500);
    const trace = spans.filter((s) => s.traceId === serverSpan!.traceId);
    const services = new Set(trace.map((s) => s.service));
    expect(services).toContain('adserver-gateway');
    expect(services).toContain('adserver-accounts');
    expect(trace.some((s) => s.service === 'adserver-gateway' && /POST/.test(s.name))).toBe(true);
    // The embedded default is a real PostgreSQL too, so the insert shows up in the same trace in both modes.
    const isDb = (s: SpanSeen) => (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'postgresql';
    expect(trace.some((s) => s.service === 'adserver-accounts' && isDb(s) && s.name.startsWith('pg.query:INSERT'))).toBe(true);
  }, 60_000);

  test('an ad decision through the gateway is one trace across gateway and serving, answered from memory', async () => {
    // A test key's decision reads the test snapshot serving keeps in memory: no call to inventory.
    const account = await p.newAccount();
    const res = await account.test.get(`/v2/adserve?ID=${account.id}&setID=999999&type=json`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'NO_ADS', test: true });
    const isServing = (s: SpanSeen) => s.service === 'adserver-serving' && s.name === 'GET v2-adserve';
    const deadline = Date.now() + 20_000;
    while (!spans.some(isServing) && Date.now() < deadline) await sleep(200);
    const servingSpan = spans.find(isServing);
    expect(servingSpan).toBeDefined();
    expect(servingSpan!.attributes['http.response.status_code']).toBe(200);
    await sleep(500);
    const trace = spans.filter((s) => s.traceId === servingSpan!.traceId);
    // The gateway's server span, named after the route; serving's continues it through the proxy's traceparent.
    expect(trace.some((s) => s.service === 'adserver-gateway' && s.name === 'GET /v2/adserve')).toBe(true);
    expect(trace.filter((s) => s.service === 'adserver-inventory')).toEqual([]);
  }, 60_000);
});
