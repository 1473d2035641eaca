import dns from 'node:dns';
import net from 'node:net';
import { Counter, Histogram } from 'prom-client';
import { Agent, request } from 'undici';
import { envBool, envInt } from '../../shared/config';
import { errorFields, log } from '../../shared/log';
import { registry } from '../../shared/metrics';

/**
 * HTTP to demand endpoints: bid requests within a deadline, and win, loss and billing notices. One
 * undici Agent keeps a bounded keep-alive pool per endpoint origin (DEMAND_POOL_CONNECTIONS), so a
 * busy zone reuses its connections and a slow endpoint queues only its own requests.
 *
 * Endpoint URLs are the tenants' own: unless DEMAND_ALLOW_PRIVATE_NETWORKS is true, an endpoint on a
 * loopback, private or link-local address (literal or resolved) is refused, so a tenant cannot make
 * the ad server call the platform's internal services.
 */

// The endpoint label is demand_endpoint, not endpoint: prometheus-operator's ServiceMonitor sets the
// target label `endpoint` (the scraped port's name), which would rename ours to exported_endpoint.
export const demandRequests = new Counter({
  name: 'demand_bid_requests_total',
  help: 'OpenRTB bid requests sent to demand endpoints, by demand endpoint id and outcome (bid, no_bid, timeout, error, below_floor, rejected)',
  labelNames: ['demand_endpoint', 'outcome'],
  registers: [registry],
});
export const demandLatency = new Histogram({
  name: 'demand_bid_request_seconds',
  help: 'Time from bid request to answer, by demand endpoint id (timeouts count at the budget)',
  labelNames: ['demand_endpoint'],
  buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1],
  registers: [registry],
});
export const demandNotices = new Counter({
  name: 'demand_notices_total',
  help: 'Win (nurl), billing (burl) and loss (lurl) notices sent to demand, and win notices whose answer is the markup of a bid without adm (nurl_markup), by kind and result (sent, failed, dropped; timeout for nurl_markup past the decision budget)',
  labelNames: ['kind', 'result'],
  registers: [registry],
});

/** Notices in flight at once; beyond it they are dropped (and counted) rather than queued without bound. */
const MAX_NOTICES_IN_FLIGHT = 2000;
const NOTICE_TIMEOUT_MS = 5000;
/** A bid response larger than this is an error (markup of a display ad is a few KB). */
const MAX_ANSWER_BYTES = 256 * 1024;

export interface DemandAnswer {
  status: number;
  body: string;
  ms: number;
}

export class DemandError extends Error {
  constructor(message: string, readonly timedOut = false) {
    super(message);
  }
}

function privateAddress(address: string): boolean {
  const ip = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (net.isIPv4(ip)) {
    const [a, b] = ip.split('.').map(Number);
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  const v6 = ip.toLowerCase();
  return v6 === '::1' || v6 === '::' || v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe80');
}

export class DemandClient {
  private readonly agent: Agent;
  private readonly allowPrivate = envBool('DEMAND_ALLOW_PRIVATE_NETWORKS', false);
  private noticesInFlight = 0;

  constructor() {
    const allowPrivate = this.allowPrivate;
    // Names resolve through a lookup that refuses internal addresses (unless allowed).
    const lookup: typeof dns.lookup = ((hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void) => {
      dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, '', 0);
        const usable = allowPrivate ? addresses : addresses.filter((a) => !privateAddress(a.address));
        if (!usable.length) return callback(Object.assign(new Error(`${hostname} resolves to a private address only`), { code: 'EPRIVATE' }), '', 0);
        if (options.all) return callback(null, usable);
        callback(null, usable[0].address, usable[0].family);
      });
    }) as typeof dns.lookup;
    this.agent = new Agent({
      connections: envInt('DEMAND_POOL_CONNECTIONS', 32, 1),
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      connect: { lookup, timeout: 1000 },
    });
  }

  /** Why an endpoint URL may not be called, or undefined when it may. */
  refusal(url: string): string | undefined {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return 'not a URL';
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'not http(s)';
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (!this.allowPrivate && (host === 'localhost' || (net.isIP(host) && privateAddress(host)))) return 'a private address';
    return undefined;
  }

  /** POSTs a bid request; the answer, or a DemandError when it fails or `signal` aborts it (the deadline). */
  bid(url: string, body: string, signal: AbortSignal): Promise<DemandAnswer> {
    return this.call(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-openrtb-version': '2.6' } }, signal);
  }

  /**
   * GETs a win notice whose answer is the bid's markup (a bid without adm): within the decision's
   * deadline (`signal`), under the same pool, address rules and size bound as a bid request.
   */
  markup(url: string, signal: AbortSignal): Promise<DemandAnswer> {
    return this.call(url, { method: 'GET' }, signal);
  }

  private async call(url: string, options: { method: 'GET' | 'POST'; body?: string; headers?: Record<string, string> }, signal: AbortSignal): Promise<DemandAnswer> {
    const refused = this.refusal(url);
    if (refused) throw new DemandError(`endpoint URL refused: ${refused}`);
    const started = performance.now();
    try {
      const res = await request(url, { ...options, dispatcher: this.agent, signal });
      let size = 0;
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_ANSWER_BYTES) {
          res.body.destroy();
          throw new DemandError(`answer larger than ${MAX_ANSWER_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: res.statusCode, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started };
    } catch (err) {
      if (err instanceof DemandError) throw err;
      if (signal.aborted) throw new DemandError('no answer within the budget', true);
      throw new DemandError((err as Error).message || 'request failed');
    }
  }

  /** Fires a notice (GET) without waiting for it: win, billing or loss. */
  notify(kind: 'nurl' | 'burl' | 'lurl', url: string): void {
    if (!url || this.refusal(url)) {
      if (url) demandNotices.inc({ kind, result: 'failed' });
      return;
    }
    if (this.noticesInFlight >= MAX_NOTICES_IN_FLIGHT) {
      demandNotices.inc({ kind, result: 'dropped' });
      return;
    }
    this.noticesInFlight++;
    request(url, { method: 'GET', dispatcher: this.agent, signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS) })
      .then(async (res) => {
        await res.body.dump();
        demandNotices.inc({ kind, result: res.statusCode < 400 ? 'sent' : 'failed' });
      })
      .catch((err: unknown) => {
        demandNotices.inc({ kind, result: 'failed' });
        log.debug('demand notice failed', { kind, ...errorFields(err) });
      })
      .finally(() => this.noticesInFlight--);
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}
