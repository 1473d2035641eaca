/**
 * The bench's moving parts: what a case is, how it is driven (autocannon over HTTPS), and the result
 * every case reports. Cases live in cases/*.ts, one file per group, and are listed in cases/index.ts.
 */
import fs from 'node:fs';
import https from 'node:https';
import autocannon from 'autocannon';
import { watchPauses, type RuntimePauses } from './runtime-pauses';

/** CPU time a process has used so far, in ms, in user and kernel mode, from /proc (Linux); undefined elsewhere. */
export function cpuSplitMs(pid: number): { user: number; sys: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) in clock ticks, 100 per second on Linux.
    return { user: (Number(f[11]) * 1000) / 100, sys: (Number(f[12]) * 1000) / 100 };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used so far, in ms; undefined when it is gone. */
export function cpuMs(pid: number): number | undefined {
  const t = cpuSplitMs(pid);
  return t && t.user + t.sys;
}

/**
 * CPU time of the shared parts a request also costs, in ms: every PostgreSQL process (server and
 * backends), Redis, and this process (autocannon, the load generator). On a shared machine these
 * include other users' work on the same servers: read them as upper bounds.
 */
export function sharedCpuMs(): Record<string, number> {
  const out: Record<string, number> = { postgres: 0, redis: 0, 'client (autocannon)': cpuMs(process.pid) ?? 0 };
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    const group = comm === 'postgres' ? 'postgres' : comm.startsWith('redis-server') ? 'redis' : undefined;
    if (group) out[group] += cpuMs(Number(entry)) ?? 0;
  }
  return out;
}

export interface Target {
  /** The case's req/s must be at least this share of the baseline's (0.25 = 25 %). */
  minRatio?: number;
  /** p99 in ms at most (measured by the case itself, e.g. at half its own maximum rate). */
  maxP99Ms?: number;
}

/** What a case gets to aim at: the running platform, a prepared account and the run's options. */
export interface BenchContext {
  /** HTTPS port of the platform's gateway (production configuration). */
  gatewayPort: number;
  /** Extra gateways in front of the same services, by name ('twin' in the production configuration, 'tracing-off', 'ratelimit-off'). */
  gateways: Record<string, number>;
  /** A test key of an account whose rate limit is raised out of the way. */
  key: string;
  /** Extra accounts' keys, for cases that must not share a budget. */
  newKey(): Promise<{ key: string; accountId: number; liveKey: string }>;
  /** JSON over HTTPS through the gateway, for setting up data. */
  api(method: string, path: string, body?: unknown, key?: string, port?: number): Promise<{ status: number; body: any }>;
  /** Runs SQL on the machine's Postgres with the search path of one service's schema. */
  sql(service: string, text: string, params?: unknown[]): Promise<any[]>;
  env: Record<string, string>;
  /** The platform's Postgres (DATABASE_URL or the embedded server). */
  databaseUrl: string;
  /** The platform's TLS certificate and key, for servers the bench starts beside it. */
  certFile: string;
  keyFile: string;
  /** The platform's processes by name, whose CPU time per request each case reports. */
  pids: Record<string, number>;
  options: RunOptions;
  /** Results of cases already run (a case may derive its figures from another's). */
  results: CaseResult[];
}

export interface RunOptions {
  connections: number;
  durationS: number;
  smoke: boolean;
  /** Rows of one kind in one account for the list-scale cases: the small and the large table. */
  rows: [number, number];
}

export interface LoadSpec {
  port: number;
  method?: string;
  path: string;
  body?: unknown;
  key?: string;
  /** Requests whose status differs count as failures. */
  expectStatus?: number;
  connections?: number;
  durationS?: number;
  /** Plain HTTP instead of HTTPS (the serving process's own listener). */
  plainHttp?: boolean;
}

export interface CaseResult {
  name: string;
  /** The registered case that produced it; set by the runner. */
  caseName?: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  failed: number;
  /**
   * CPU time the platform's processes spent per request, in µs, by process: unlike req/s it hardly
   * depends on what else the shared machine runs, so it compares runs taken at different times.
   */
  cpuUs?: Record<string, number>;
  /** The share of each of our processes' CPU time spent in the kernel (system calls, network). */
  sysShare?: Record<string, number>;
  /** Event-loop delay and GC pauses per process during the case (paced cases). */
  pauses?: Record<string, RuntimePauses>;
  /** Share of the baseline's req/s; set by the runner. */
  ratio?: number;
  target?: Target;
  /** A figure the case reports instead of (or besides) throughput, printed in the notes column. */
  note?: string;
  /** Whether the case met its target, when it has one; set by the runner or the case. */
  met?: boolean;
}

export interface BenchCase {
  name: string;
  target?: Target;
  /** Runs the case; most cases return `load(ctx, {...})`. */
  run(ctx: BenchContext): Promise<CaseResult | CaseResult[]>;
}

/**
 * CPU time each measured process (ours, Postgres, Redis, the load generator) spent per request while
 * `drive` ran, in µs, with each of our processes' kernel share.
 */
async function measured<T extends { total: number }>(ctx: BenchContext, drive: () => Promise<T>): Promise<T & Pick<CaseResult, 'cpuUs' | 'sysShare'>> {
  const before = Object.fromEntries(Object.entries(ctx.pids).map(([k, pid]) => [k, cpuSplitMs(pid)]));
  const sharedBefore = sharedCpuMs();
  const out = await drive();
  const cpuUs: Record<string, number> = {};
  const sysShare: Record<string, number> = {};
  for (const [k, pid] of Object.entries(ctx.pids)) {
    const after = cpuSplitMs(pid);
    const b = before[k];
    if (!after || !b) continue;
    const spent = after.user + after.sys - b.user - b.sys;
    if (spent > 0 && out.total > 0) {
      cpuUs[k] = (spent * 1000) / out.total;
      sysShare[k] = (after.sys - b.sys) / spent;
    }
  }
  for (const [k, after] of Object.entries(sharedCpuMs())) {
    const spent = after - (sharedBefore[k] ?? after);
    if (spent > 0 && out.total > 0) cpuUs[k] = (spent * 1000) / out.total;
  }
  return { ...out, cpuUs, sysShare };
}

function requestHeaders(ctx: BenchContext, spec: LoadSpec): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (spec.key !== '') headers.authorization = `Basic ${spec.key ?? ctx.key}`;
  return headers;
}

/** Drives one endpoint with autocannon for the run's duration (closed loop: as fast as it answers); the status code decides success. */
export async function load(ctx: BenchContext, name: string, spec: LoadSpec): Promise<CaseResult> {
  const expect = spec.expectStatus ?? 200;
  const r = await measured(ctx, async () => {
    const result = await autocannon({
      url: `${spec.plainHttp ? 'http' : 'https'}://127.0.0.1:${spec.port}${spec.path}`,
      servername: 'localhost',
      method: spec.method ?? 'GET',
      headers: requestHeaders(ctx, spec),
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      connections: spec.connections ?? ctx.options.connections,
      duration: spec.durationS ?? ctx.options.durationS,
      timeout: 30,
    });
    const codes = result.statusCodeStats ?? {};
    const total = Object.values(codes).reduce((n, c) => n + c.count, 0);
    return { result, total, good: codes[String(expect)]?.count ?? 0 };
  });
  return {
    cpuUs: r.cpuUs,
    sysShare: r.sysShare,
    name,
    reqPerSec: r.good / (r.result.duration || spec.durationS || ctx.options.durationS),
    p50: r.result.latency.p50,
    p99: r.result.latency.p99,
    failed: r.total - r.good + r.result.errors + r.result.timeouts,
  };
}

/**
 * Sends requests at a steady `rate` (open loop: one every 1/rate s, whether or not earlier ones have
 * been answered) over up to `connections` keep-alive HTTPS connections, and times each from when it
 * was due, so that a request the generator or the server held back counts its wait, after 3 s at the
 * same pace unmeasured (connections opened, the previous case's load drained). For latency below
 * saturation: autocannon's own rate option lets each connection send its per-second quota back to
 * back at the start of every second (bursts at full load), and its latency correction for that mode
 * takes the interval in the wrong unit, adding a sample per millisecond of each response.
 */
export async function paced(ctx: BenchContext, name: string, spec: LoadSpec & { rate: number }): Promise<CaseResult> {
  const expect = spec.expectStatus ?? 200;
  const durationMs = (spec.durationS ?? ctx.options.durationS) * 1000;
  const agent = new https.Agent({ keepAlive: true, maxSockets: spec.connections ?? ctx.options.connections, ca: fs.readFileSync(ctx.certFile) });
  const headers = requestHeaders(ctx, spec);
  const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
  const interval = 1000 / spec.rate;
  /** Sends at the pace for `ms`; resolves with each answer's latency once all are answered. */
  const run = async (ms: number) => {
    const latencies: number[] = [];
    let good = 0;
    let total = 0;
    const inFlight: Promise<void>[] = [];
    const send = (due: number) =>
      new Promise<void>((resolve) => {
        const req = https.request({ host: '127.0.0.1', servername: 'localhost', port: spec.port, method: spec.method ?? 'GET', path: spec.path, agent, headers, timeout: 30_000 }, (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - due);
            total++;
            if (res.statusCode === expect) good++;
            resolve();
          });
        });
        req.on('error', () => {
          total++;
          resolve();
        });
        req.end(body);
      });
    const start = performance.now();
    let sent = 0;
    await new Promise<void>((done) => {
      const timer = setInterval(() => {
        const now = performance.now();
        // Every request due by now (the first at the start), each timed from its own due time. Counting
        // only whole intervals elapsed sent each request one interval after it was due, and that wait
        // (10 ms at 100 req/s) was added to every latency read.
        const elapsed = Math.min(now - start, ms);
        while (sent * interval <= elapsed && sent * interval < ms) inFlight.push(send(start + sent++ * interval));
        if (now >= start + ms) {
          clearInterval(timer);
          done();
        }
      }, 1);
    });
    await Promise.all(inFlight);
    return { latencies: latencies.sort((a, b) => a - b), good, total };
  };
  // Unmeasured first: the connections a steady state needs are opened (TLS handshakes) and the load
  // of the case before has drained.
  await run(ctx.options.smoke ? 500 : 3000);
  // Event-loop delay and GC pauses of the processes on the request's path, over the measured window.
  const endPauses = await watchPauses(ctx, ['gateway', 'accounts', 'inventory']);
  const r = await measured(ctx, () => run(durationMs));
  const pauses = await endPauses();
  agent.destroy();
  const at = (q: number) => (r.latencies.length ? Math.round(r.latencies[Math.min(r.latencies.length - 1, Math.floor(q * r.latencies.length))] * 10) / 10 : NaN);
  return { cpuUs: r.cpuUs, sysShare: r.sysShare, name, reqPerSec: r.good / (durationMs / 1000), p50: at(0.5), p99: at(0.99), failed: r.total - r.good, pauses };
}

/**
 * Two configurations measured in alternating slices (A B, B A, A B) so that a machine whose load
 * drifts during the run weighs on both alike; returns both, each over its whole measured time.
 */
export async function alternate(ctx: BenchContext, names: [string, string], specs: [LoadSpec, LoadSpec], rounds = 3): Promise<[CaseResult, CaseResult]> {
  const slice = Math.max(1, Math.round((ctx.options.durationS * 2) / (rounds * 2)));
  const parts: CaseResult[][] = [[], []];
  // A B, B A, A B...: neither side always runs right after the other.
  for (let i = 0; i < rounds; i++) {
    for (const j of i % 2 ? [1, 0] : [0, 1]) parts[j].push(await load(ctx, names[j], { ...specs[j], durationS: slice }));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const combine = (name: string, rs: CaseResult[]): CaseResult => ({
    name,
    cpuUs: Object.fromEntries([...new Set(rs.flatMap((r) => Object.keys(r.cpuUs ?? {})))].map((k) => [k, rs.reduce((n, r) => n + (r.cpuUs?.[k] ?? 0), 0) / rs.length])),
    sysShare: Object.fromEntries([...new Set(rs.flatMap((r) => Object.keys(r.sysShare ?? {})))].map((k) => [k, rs.reduce((n, r) => n + (r.sysShare?.[k] ?? 0), 0) / rs.length])),
    reqPerSec: rs.reduce((n, r) => n + r.reqPerSec, 0) / rs.length,
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    failed: rs.reduce((n, r) => n + r.failed, 0),
  });
  return [combine(names[0], parts[0]), combine(names[1], parts[1])];
}
