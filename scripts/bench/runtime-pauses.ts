/**
 * Event-loop delay and garbage collection in the platform's processes during a measured window, read
 * from each process's own `/metrics` (prom-client's default metrics): tail latency that comes from a
 * stalled loop or collector pauses shows here, apart from the time requests spend in real work.
 *
 * prom-client resets its event-loop delay histogram (perf_hooks.monitorEventLoopDelay) on every
 * collection, so a scrape right before the window starts the measurement and one right after reads it.
 * The GC histogram is cumulative: the window's pauses are the difference of the two scrapes.
 */
import http from 'node:http';
import type { BenchContext } from './harness';

export interface RuntimePauses {
  /**
   * Event-loop delay over the window: how late the 10 ms timer of monitorEventLoopDelay (prom-client's
   * resolution) fired, so the resolution itself is taken off what the histogram records.
   */
  loopP99Ms: number;
  loopMaxMs: number;
  /** Collector pauses in the window: their count, total time and how many lasted over 10 ms. */
  gcCount: number;
  gcMs: number;
  gcOver10Ms: number;
}

/** prom-client's eventLoopMonitoringPrecision: the histogram records intervals of at least this. */
const LOOP_RESOLUTION_MS = 10;

/** The metrics port of each of the platform's processes this module can read, by process name. */
function metricsPorts(ctx: BenchContext): Record<string, number> {
  const e = ctx.env;
  const ports: Record<string, string | undefined> = {
    gateway: e.METRICS_PORT,
    accounts: e.ACCOUNTS_METRICS_PORT,
    inventory: e.INVENTORY_METRICS_PORT,
    serving: e.SERVING_METRICS_PORT,
    reporting: e.REPORTING_METRICS_PORT,
  };
  return Object.fromEntries(Object.entries(ports).filter(([, p]) => p).map(([name, p]) => [name, Number(p)]));
}

function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/metrics', timeout: 5000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve(text));
      })
      .on('error', reject)
      .on('timeout', function (this: http.ClientRequest) {
        this.destroy(new Error('metrics scrape timed out'));
      });
  });
}

/** The sum of every sample of `name` whose labels contain `labelPart` (all samples when omitted). */
export function sampleSum(text: string, name: string, labelPart = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (labelPart && !rest.includes(labelPart)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

interface GcReading {
  count: number;
  seconds: number;
  within10Ms: number;
}

const gcOf = (text: string): GcReading => ({
  count: sampleSum(text, 'nodejs_gc_duration_seconds_count'),
  seconds: sampleSum(text, 'nodejs_gc_duration_seconds_sum'),
  within10Ms: sampleSum(text, 'nodejs_gc_duration_seconds_bucket', 'le="0.01"'),
});

/**
 * Starts watching the processes named (every readable one when omitted); the returned function ends
 * the window and gives each process's pauses. A process whose metrics cannot be read is left out.
 */
export async function watchPauses(ctx: BenchContext, names?: string[]): Promise<() => Promise<Record<string, RuntimePauses>>> {
  const ports = Object.entries(metricsPorts(ctx)).filter(([name]) => !names || names.includes(name));
  const before = new Map<string, GcReading>();
  await Promise.all(
    ports.map(async ([name, port]) => {
      try {
        before.set(name, gcOf(await scrape(port)));
      } catch {
        /* unreadable: left out */
      }
    }),
  );
  return async () => {
    const out: Record<string, RuntimePauses> = {};
    await Promise.all(
      ports.map(async ([name, port]) => {
        const start = before.get(name);
        if (!start) return;
        try {
          const text = await scrape(port);
          const end = gcOf(text);
          const count = end.count - start.count;
          out[name] = {
            loopP99Ms: Math.max(0, sampleSum(text, 'nodejs_eventloop_lag_p99_seconds') * 1000 - LOOP_RESOLUTION_MS),
            loopMaxMs: Math.max(0, sampleSum(text, 'nodejs_eventloop_lag_max_seconds') * 1000 - LOOP_RESOLUTION_MS),
            gcCount: count,
            gcMs: (end.seconds - start.seconds) * 1000,
            gcOver10Ms: count - (end.within10Ms - start.within10Ms),
          };
        } catch {
          /* unreadable: left out */
        }
      }),
    );
    return out;
  };
}

/** One line per process: `gateway loop p99 12.1 ms, max 30.2 ms, GC 41 pauses 55 ms (2 over 10 ms)`. */
export function describePauses(pauses: Record<string, RuntimePauses>): string {
  return Object.entries(pauses)
    .map(([name, p]) => `${name} loop delay p99 ${p.loopP99Ms.toFixed(1)} ms, max ${p.loopMaxMs.toFixed(1)} ms, GC ${p.gcCount} pauses ${p.gcMs.toFixed(0)} ms (${p.gcOver10Ms} over 10 ms)`)
    .join('; ');
}
