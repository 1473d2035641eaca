/**
 * `npm start`: runs every service and the gateway as child processes on this machine (and, without
 * DATABASE_URL, one embedded PostgreSQL server for all of them), waits until they are healthy, prints
 * where to reach them, restarts a child that dies, and stops them all on SIGINT/SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { SERVICE_DEFAULTS, SERVICE_NAMES, bindHost, dataDir, envInt, envStr, environment, serveBaseUrl, setEnvironment } from '../services/shared/config';
import { closeClients } from '../services/shared/grpc/client';
import { serviceServing } from '../services/shared/grpc/health-probe';
import { ensureInternalToken } from '../services/shared/internal-token';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import { ensureServingSecret } from '../services/serving/tracking';

/** The compiled tree (dist/), where every entry point lives. */
const root = path.resolve(__dirname, '..');
const quiet = envStr('START_QUIET') === '1';

interface Child {
  name: string;
  script: string;
  env: NodeJS.ProcessEnv;
  proc?: ChildProcess;
  restarts: number;
  /** When the current process was launched, to forget old crashes once it has run healthily. */
  launchedAt?: number;
}

/** A child that ran this long is healthy again: its next crash restarts it at once. */
const HEALTHY_RUN_MS = envInt('RESTART_BACKOFF_RESET_MS', 30_000);

function say(msg: string): void {
  if (!quiet) process.stdout.write(`${msg}\n`);
}

function platformEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...environment(), DATA_DIR: dataDir(), INTERNAL_TOKEN: ensureInternalToken(), SERVING_SECRET: ensureServingSecret() };
  // The ad server: public serve paths, reached directly or through the gateway's proxy.
  env.SERVING_ADDR ??= `127.0.0.1:${envInt('SERVING_PORT', 8090)}`;
  for (const name of SERVICE_NAMES) {
    const port = envInt(`${name.toUpperCase()}_GRPC_PORT`, SERVICE_DEFAULTS[name].grpcPort);
    env[`${name.toUpperCase()}_ADDR`] ??= `127.0.0.1:${port}`;
  }
  return env;
}

const baseEnv = platformEnv();
let stopping = false;
let database: EmbeddedPostgres | undefined;
const children: Child[] = [
  ...SERVICE_NAMES.map((name) => ({
    name,
    script: `services/${name}/main.js`,
    env: {
      ...baseEnv,
      GRPC_PORT: String(envInt(`${name.toUpperCase()}_GRPC_PORT`, SERVICE_DEFAULTS[name].grpcPort)),
      METRICS_PORT: String(envInt(`${name.toUpperCase()}_METRICS_PORT`, SERVICE_DEFAULTS[name].metricsPort)),
    },
    restarts: 0,
  })),
  {
    name: 'serving',
    script: 'services/serving/main.js',
    env: { ...baseEnv, SERVING_PORT: String(envInt('SERVING_PORT', 8090)), METRICS_PORT: String(envInt('SERVING_METRICS_PORT', 9469)) },
    restarts: 0,
  },
  { name: 'gateway', script: 'gateway/main.js', env: { ...baseEnv }, restarts: 0 },
];

/** DATA_DIR/pids.json: the current pid of every child, for operators and fault-injection tests. */
function writePids(): void {
  const pids = Object.fromEntries(children.filter((c) => c.proc?.pid).map((c) => [c.name, c.proc!.pid]));
  const file = path.join(baseEnv.DATA_DIR!, 'pids.json');
  try {
    fs.mkdirSync(baseEnv.DATA_DIR!, { recursive: true });
    // Written whole and renamed into place: readers never see half a file.
    fs.writeFileSync(`${file}.tmp`, `${JSON.stringify({ start: process.pid, ...pids })}\n`);
    fs.renameSync(`${file}.tmp`, file);
  } catch {
    /* informational only */
  }
}

/**
 * V8 flags for every child. A young generation of 8 MB semi-spaces instead of V8's 16: the scavenges
 * come twice as often but each is half as long, and on a busy 2-core machine the long ones made the
 * tail (GET by id at half its maximum rate: p99 20 ms and no pause over 10 ms, against 22–53 ms and
 * pauses up to 70 ms with the default; 32 MB read 45 ms; BENCHMARKS.md, eighth session).
 * V8_SEMI_SPACE_MB sets it; 0, or a NODE_OPTIONS that already sets it, leaves V8's own.
 */
function v8Flags(): string[] {
  const mb = envInt('V8_SEMI_SPACE_MB', 8);
  if (mb <= 0 || /semi-space/.test(process.env.NODE_OPTIONS ?? '')) return [];
  return [`--max-semi-space-size=${mb}`];
}

function launch(child: Child): void {
  // Each child in a process group of its own: a Ctrl-C in the terminal (SIGINT to the whole foreground
  // group) reaches the launcher alone, which stops the gateway first, after it drains, then the rest.
  const proc = spawn(process.execPath, [...v8Flags(), path.join(root, child.script)], { env: child.env, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  child.proc = proc;
  child.launchedAt = Date.now();
  writePids();
  proc.on('exit', (code, signal) => {
    if (stopping) return;
    // Back off on a crash loop only: a child that had been running healthily starts over at the shortest delay.
    if (Date.now() - child.launchedAt! >= HEALTHY_RUN_MS) child.restarts = 0;
    child.restarts++;
    const delay = Math.min(250 * 2 ** Math.min(child.restarts - 1, 6), 10_000);
    say(`${child.name} exited (${signal ?? code}); restarting in ${delay} ms`);
    setTimeout(() => !stopping && launch(child), delay);
  });
}

/**
 * What an earlier start on this DATA_DIR left: refuses to run beside a launcher that is still alive, and
 * stops the children of one that was killed (they would hold the ports and answer health checks).
 */
function clearLeftovers(): void {
  let previous: Record<string, number>;
  try {
    previous = JSON.parse(fs.readFileSync(path.join(baseEnv.DATA_DIR!, 'pids.json'), 'utf8'));
  } catch {
    return;
  }
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (previous.start && previous.start !== process.pid && alive(previous.start)) {
    throw new Error(`another npm start (pid ${previous.start}) is running on ${baseEnv.DATA_DIR}: stop it first, or use another DATA_DIR`);
  }
  for (const [name, pid] of Object.entries(previous)) {
    if (name === 'start' || !alive(pid)) continue;
    let cmdline = '';
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmdline.includes(root)) continue;
    say(`${name} (pid ${pid}) was left running by an earlier start; stopping it`);
    process.kill(pid, 'SIGKILL');
  }
}

/** Every port a child will listen on, with the variable that sets it and the address it binds. */
function portsNeeded(): { port: number; what: string; variable: string; host: string }[] {
  const out: { port: number; what: string; variable: string; host: string }[] = [];
  const local = bindHost();
  for (const c of children) {
    if (c.name === 'gateway') {
      const host = envStr('GATEWAY_HOST', '0.0.0.0')!;
      out.push({ port: envInt('GATEWAY_HTTPS_PORT', 8443), what: 'the gateway (HTTPS)', variable: 'GATEWAY_HTTPS_PORT', host });
      out.push({ port: envInt('GATEWAY_HTTP_PORT', 8080), what: 'the gateway (HTTP)', variable: 'GATEWAY_HTTP_PORT', host });
      out.push({ port: envInt('GATEWAY_SERVE_PORT', 8444), what: 'the gateway (serving origin)', variable: 'GATEWAY_SERVE_PORT', host });
      out.push({ port: envInt('METRICS_PORT', 9464), what: 'the gateway (metrics)', variable: 'METRICS_PORT', host: '0.0.0.0' });
    } else if (c.name === 'serving') {
      out.push({ port: Number(c.env.SERVING_PORT), what: 'serving', variable: 'SERVING_PORT', host: local });
      out.push({ port: Number(c.env.METRICS_PORT), what: 'serving (metrics)', variable: 'SERVING_METRICS_PORT', host: '0.0.0.0' });
    } else {
      out.push({ port: Number(c.env.GRPC_PORT), what: c.name, variable: `${c.name.toUpperCase()}_GRPC_PORT (or GRPC_BASE_PORT)`, host: local });
      out.push({ port: Number(c.env.METRICS_PORT), what: `${c.name} (metrics)`, variable: `${c.name.toUpperCase()}_METRICS_PORT`, host: '0.0.0.0' });
    }
  }
  return out.filter((p) => p.port > 0);
}

function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/**
 * Refuses to start when a port the platform needs is taken: a child could not bind it, and a health
 * check on it would reach whatever holds it (another platform's gateway, reporting "up" for us).
 * Ports held by an earlier start's children, just stopped, get a moment to be released.
 */
async function checkPorts(): Promise<void> {
  for (const p of portsNeeded()) {
    let free = await portFree(p.port, p.host);
    for (let i = 0; !free && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 100));
      free = await portFree(p.port, p.host);
    }
    if (!free) throw new Error(`port ${p.port} for ${p.what} is taken by another program: stop it, or set ${p.variable} to a free port`);
  }
}

function httpHealthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (stopping) return;
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become healthy within ${timeoutMs / 1000} s`);
}

async function stop(signal: string, exitCode = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`\n${signal}: stopping the platform...`);
  const gateway = children.find((c) => c.name === 'gateway')!;
  // Gateway first, so no request reaches a service that is already gone; the database last.
  await terminate([gateway]);
  // Serving next, while reporting still takes the events it flushes.
  const serving = children.find((c) => c.name === 'serving')!;
  await terminate([serving]);
  await terminate(children.filter((c) => c !== gateway && c !== serving));
  closeClients();
  await database?.stop();
  say('stopped.');
  process.exit(exitCode);
}

function terminate(list: Child[]): Promise<unknown> {
  return Promise.all(
    list.map(
      (c) =>
        new Promise<void>((resolve) => {
          const p = c.proc;
          if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
          const kill = setTimeout(() => p.kill('SIGKILL'), 15_000);
          p.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          p.kill('SIGTERM');
        }),
    ),
  );
}

async function main(): Promise<void> {
  setEnvironment(baseEnv);
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  clearLeftovers();
  await checkPorts();
  if (!envStr('DATABASE_URL')) {
    const started = Date.now();
    database = await startEmbeddedPostgres({ dataDir: baseEnv.DATA_DIR!, port: envInt('EMBEDDED_POSTGRES_PORT', 54329), say });
    say(`embedded PostgreSQL ready on 127.0.0.1:${database.port} (${Date.now() - started} ms)`);
    for (const c of children) c.env.DATABASE_URL = database.url;
  }
  for (const c of children.filter((c) => c.name !== 'gateway')) launch(c);
  await Promise.all(
    SERVICE_NAMES.map((n) =>
      waitFor(n, async () => {
        const child = children.find((c) => c.name === n)!;
        // A service that cannot start (its port taken, its database unreachable) would only loop.
        if (child.restarts >= 3) throw new Error(`${n} exited ${child.restarts} times while starting (see its log above); if its port ${child.env.GRPC_PORT} is taken, set GRPC_BASE_PORT`);
        return serviceServing(n);
      }),
    ),
  );
  await waitFor('serving', () => httpHealthy(envInt('SERVING_PORT', 8090)));
  launch(children.find((c) => c.name === 'gateway')!);
  const httpPort = envInt('GATEWAY_HTTP_PORT', 8080);
  const gateway = children.find((c) => c.name === 'gateway')!;
  await waitFor('gateway', async () => {
    if (gateway.restarts >= 3) throw new Error(`gateway exited ${gateway.restarts} times while starting (see its log above); are its ports ${httpPort} and ${envInt('GATEWAY_HTTPS_PORT', 8443)} taken?`);
    return httpHealthy(httpPort);
  });
  const httpsPort = envInt('GATEWAY_HTTPS_PORT', 8443);
  say(
    [
      '',
      'Ad serving platform is up.',
      `  API (HTTPS):   https://localhost:${httpsPort}/v1/...  and  /v2/...`,
      `  Plain HTTP:    http://localhost:${httpPort}  (only /healthz; API calls are refused)`,
      `  Health:        http://localhost:${httpPort}/healthz`,
      `  Metrics:       http://localhost:${envInt('METRICS_PORT', 9464)}/metrics`,
      `  Ad serving:    ${serveBaseUrl()}/adserve/;ID=…;setID=…;type=json  (the origin ad tags point at; serving itself: http://${baseEnv.SERVING_ADDR})`,
      `  Services:      ${SERVICE_NAMES.map((n) => `${n} ${baseEnv[`${n.toUpperCase()}_ADDR`]}`).join(', ')}`,
      `  Data:          ${baseEnv.DATA_DIR}${database ? ` (embedded PostgreSQL on 127.0.0.1:${database.port}, data in ${database.dir})` : ' (Postgres from DATABASE_URL)'}`,
      '',
      'Create an account and its keys:  npm run admin -- create-account --name "My Company"',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  process.stderr.write(`start failed: ${(err as Error).message}\n`);
  void stop('error', 1);
});
