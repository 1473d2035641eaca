/**
 * `npm run bench`: the platform's throughput and latency as shares of a bare Node HTTPS server measured
 * in the same run (the machines are shared and noisy: compare ratios, not absolute numbers).
 *
 *   npm run bench -- [--connections 50] [--duration 10] [--rows 1000,1000000] [--only TEXT|TEXT]
 *                    [--smoke] [--label after] [--out BENCHMARKS.md|-] [--json FILE] [--cpu-prof DIR]
 *                    [--env NAME=VALUE,...]   (extra environment for the platform's processes)
 *
 * It starts the platform as `npm start` does, in the production configuration (tracing on with its
 * default sampler, rate limits on, REDIS_URL/DATABASE_URL from the environment), plus two extra
 * gateways in front of the same services (tracing off; rate limiter off) to price those two. Cases
 * come from the registry in cases/. `--smoke` (2 s per case, few rows) is what the test suite runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { closeClients } from '../../services/shared/grpc/client';
import { accounts } from '../../services/shared/grpc/clients';
import { startGatewayProcess, type GatewayProcess } from '../../gateway/test/support/gateway-process';
import { ROOT, dropSchemas, startPlatform, stopPlatform, type PlatformInfo } from '../../gateway/test/support/platform';
import { CASES } from './cases';
import { load, type BenchContext, type CaseResult, type RunOptions } from './harness';
import { renderMarkdown, renderTable, writeSection } from './report';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

export function optionsFromArgs(): RunOptions & { only?: string; label: string; out: string; cpuProf?: string; json?: string; platformEnv: Record<string, string> } {
  const smoke = process.argv.includes('--smoke');
  const rows = (flag('rows') ?? (smoke ? '100,1000' : '1000,1000000')).split(',').map(Number) as [number, number];
  return {
    smoke,
    connections: Number(flag('connections') ?? (smoke ? 10 : 50)),
    durationS: Number(flag('duration') ?? (smoke ? 2 : 10)),
    rows,
    only: flag('only'),
    label: flag('label') ?? (smoke ? 'smoke' : 'latest'),
    out: flag('out') ?? path.join(ROOT, 'BENCHMARKS.md'),
    cpuProf: flag('cpu-prof'),
    json: flag('json'),
    platformEnv: Object.fromEntries((flag('env') ?? '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
  };
}

/** The platform's Postgres: DATABASE_URL, or the embedded server `npm start` ran in the data directory. */
function databaseUrl(info: PlatformInfo): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const pw = fs.readFileSync(path.join(info.dataDir, 'postgres-password'), 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(pw)}@127.0.0.1:${info.env.EMBEDDED_POSTGRES_PORT}/postgres`;
}

function startBaseline(certFile: string, keyFile: string): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, [path.join(__dirname, 'baseline-server.js')], {
    env: { ...process.env, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.once('data', (c) => resolve({ proc, port: Number(String(c).trim()) }));
    proc.once('exit', (code) => reject(new Error(`baseline server exited (${code})`)));
  });
}

/** Resident set size of a process in MB (Linux /proc), or undefined when it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export async function runBench(opts = optionsFromArgs()): Promise<{ results: CaseResult[]; rss: Record<string, number> }> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const about = machine();
  log(`starting the platform (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres'}, ${process.env.REDIS_URL ? 'REDIS_URL' : 'no Redis'})...`);
  const profEnv: Record<string, string> = opts.cpuProf
    ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${path.join(__dirname, 'cpu-profile-preload.js')}`.trim(), CPU_PROF_DIR: path.resolve(opts.cpuProf) }
    : {};
  // Production configuration: tracing on (the test platforms turn it off by default).
  const { info } = await startPlatform({ LOG_LEVEL: 'error', OTEL_SDK_DISABLED: 'false', ...profEnv, ...opts.platformEnv });
  Object.assign(process.env, info.env);
  const certFile = path.join(info.dataDir, 'tls', 'localhost.crt');
  const keyFile = path.join(info.dataDir, 'tls', 'localhost.key');
  const ca = fs.readFileSync(certFile);
  const agent = new https.Agent({ ca, keepAlive: true });
  const gatewayPort = Number(info.env.GATEWAY_HTTPS_PORT);
  const extras: GatewayProcess[] = [];
  let baseline: ChildProcess | undefined;
  const { Client } = await import('pg');
  const db = new Client({ connectionString: databaseUrl(info) });
  await db.connect();
  try {
    const base = await startBaseline(certFile, keyFile);
    baseline = base.proc;
    const tls = { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, LOG_LEVEL: 'error' };
    // The priced configurations are compared with a gateway started the same way, not with the
    // platform's own (started by the launcher), so that only the one setting differs.
    const twin = await startGatewayProcess({ ...tls, OTEL_SDK_DISABLED: 'false' });
    extras.push(twin);
    const tracingOff = await startGatewayProcess({ ...tls, OTEL_SDK_DISABLED: 'true' });
    extras.push(tracingOff);
    const limiterOff = await startGatewayProcess({ ...tls, OTEL_SDK_DISABLED: 'false', RATE_LIMITS: 'off' });
    extras.push(limiterOff);

    const api = (method: string, p: string, body?: unknown, key?: string, port = gatewayPort) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = https.request(
          { host: '127.0.0.1', servername: 'localhost', port, method, path: p, agent, headers: { authorization: `Basic ${key ?? ctx.key}`, 'content-type': 'application/json' } },
          (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            // JSON when it is (the API), else the text (VAST XML).
            res.on('end', () => {
              let parsed: unknown = text || undefined;
              try {
                parsed = text ? JSON.parse(text) : undefined;
              } catch {
                /* not JSON */
              }
              resolve({ status: res.statusCode ?? 0, body: parsed });
            });
          },
        );
        req.on('error', reject);
        if (body !== undefined) req.write(JSON.stringify(body));
        req.end();
      });
    const newKey = async () => {
      const a = await accounts.createAccount({ name: 'bench', email: '', password: '', features: [] });
      // The highest budget set-limits takes: the bench measures the limiter's cost, not its refusals.
      await accounts.setAccountLimits({ accountId: a.account!.id, generalLimit: 1_000_000, reportingLimit: 1_000_000 });
      return { key: a.testKey, accountId: a.account!.id, liveKey: a.liveKey };
    };
    const prefix = info.env.DB_SCHEMA_PREFIX ?? '';
    const sql = async (service: string, text: string, params: unknown[] = []) => {
      await db.query(`set search_path to "${prefix}${service}"`);
      return (await db.query(text, params)).rows;
    };
    const ctx: BenchContext = {
      gatewayPort,
      gateways: { twin: twin.httpsPort, 'tracing-off': tracingOff.httpsPort, 'ratelimit-off': limiterOff.httpsPort },
      key: '',
      newKey,
      api,
      sql,
      env: info.env,
      databaseUrl: databaseUrl(info),
      certFile,
      keyFile,
      pids: {},
      options: opts,
      results: [],
    };
    ctx.key = (await newKey()).key;
    const platformPids = JSON.parse(fs.readFileSync(path.join(info.dataDir, 'pids.json'), 'utf8')) as Record<string, number>;
    ctx.pids = {
      baseline: base.proc.pid!,
      gateway: platformPids.gateway,
      'gateway (twin)': twin.proc.pid!,
      'gateway (tracing off)': tracingOff.proc.pid!,
      'gateway (rate limiter off)': limiterOff.proc.pid!,
      accounts: platformPids.accounts,
      inventory: platformPids.inventory,
      serving: platformPids.serving,
      // Stores the events that decisions and clicks produce.
      reporting: platformPids.reporting,
    };

    // Warm every process (TLS, JIT, pools) before anything is measured.
    // Long enough for V8 to settle on optimised code in each gateway. The extra gateways, warmed 3 s,
    // spent up to twice the CPU per request of the platform's well-used one (a cold JIT is the
    // likely cause, not proven).
    const warm = opts.smoke ? 1 : Math.min(opts.durationS, 5);
    await load(ctx, 'warm-up', { port: base.port, path: '/', key: '', durationS: warm });
    for (const port of [gatewayPort, twin.httpsPort, tracingOff.httpsPort, limiterOff.httpsPort]) {
      await load(ctx, 'warm-up', { port, path: '/v2/ad-items/custom-html?limit=10', durationS: warm });
    }

    const baselineResult = await load(ctx, 'bare HTTPS baseline', { port: base.port, path: '/v2/ad-items/custom-html/1', key: '' });
    baselineResult.ratio = 1;
    ctx.results.push(baselineResult);
    log(`  ${baselineResult.name}: ${baselineResult.reqPerSec.toFixed(0)} req/s`);
    for (const c of CASES) {
      // --only takes one or more name fragments separated by '|'.
      if (opts.only && !opts.only.split('|').some((part) => c.name.includes(part))) continue;
      const out = await c.run(ctx);
      for (const r of Array.isArray(out) ? out : [out]) {
        r.caseName = c.name;
        r.ratio = r.reqPerSec / baselineResult.reqPerSec;
        r.target ??= c.target;
        if (r.met === undefined && r.target) {
          r.met = (r.target.minRatio === undefined || r.ratio >= r.target.minRatio) && (r.target.maxP99Ms === undefined || r.p99 <= r.target.maxP99Ms);
        }
        ctx.results.push(r);
        log(`  ${r.name}: ${r.reqPerSec.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms${r.failed ? `, ${r.failed} failed` : ''}`);
      }
    }

    const rss: Record<string, number> = {};
    const pids = JSON.parse(fs.readFileSync(path.join(info.dataDir, 'pids.json'), 'utf8')) as Record<string, number>;
    for (const [name, pid] of Object.entries(pids)) rss[name === 'start' ? 'launcher' : name] = rssMb(pid) ?? NaN;
    rss['gateway (twin)'] = rssMb(twin.proc.pid!) ?? NaN;
    rss['gateway (tracing off)'] = rssMb(tracingOff.proc.pid!) ?? NaN;
    rss['gateway (rate limiter off)'] = rssMb(limiterOff.proc.pid!) ?? NaN;
    rss['bare HTTPS baseline'] = rssMb(base.proc.pid!) ?? NaN;

    log('');
    log(renderTable(ctx.results, rss));
    if (opts.out !== '-') {
      const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();
      writeSection(opts.out, opts.label, renderMarkdown(ctx.results, rss, { command, opts, machine: about }));
      log(`\nwrote the "${opts.label}" run into ${opts.out}`);
    }
    if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({ results: ctx.results, rss }, null, 2));
    return { results: ctx.results, rss };
  } finally {
    agent.destroy();
    closeClients();
    await db.end().catch(() => undefined);
    baseline?.kill('SIGTERM');
    for (const g of extras) await g.stop().catch(() => null);
    await stopPlatform(info.pid, 30_000, info.dataDir);
    await dropSchemas(info.schemaPrefix).catch(() => undefined);
    fs.rmSync(info.dataDir, { recursive: true, force: true });
  }
}

function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GB RAM, load ${os.loadavg()[0].toFixed(1)} at the start, Node ${process.version}, ${os.type()} ${os.release()}`;
}

if (require.main === module) {
  runBench().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}
