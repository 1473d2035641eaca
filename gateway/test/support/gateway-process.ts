/**
 * An extra gateway replica (node dist/gateway/main.js) in front of the test platform's services, on its
 * own ports: for tests of state shared between replicas, of Redis outages and of graceful shutdown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, gatewayHealthy, ROOT } from './platform';

export interface GatewayProcess {
  proc: ChildProcess;
  httpsPort: number;
  httpPort: number;
  metricsPort: number;
  output(): string;
  /** SIGTERM, then the exit code (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<number | null>;
}

export async function startGatewayProcess(extraEnv: Record<string, string> = {}): Promise<GatewayProcess> {
  // A port picked as free can be taken (an outgoing connection's ephemeral port) before the gateway
  // binds it: then it starts again on fresh ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startGatewayProcessOnce(extraEnv);
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test((err as Error).message)) throw err;
    }
  }
}

async function startGatewayProcessOnce(extraEnv: Record<string, string>): Promise<GatewayProcess> {
  const httpsPort = await freePort();
  const httpPort = await freePort();
  const metricsPort = await freePort();
  const servePort = await freePort();
  let out = '';
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist/gateway/main.js')], {
    env: { ...process.env, ...extraEnv, GATEWAY_HTTPS_PORT: String(httpsPort), GATEWAY_HTTP_PORT: String(httpPort), GATEWAY_SERVE_PORT: String(servePort), METRICS_PORT: String(metricsPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const until = Date.now() + 30_000;
  // 503 is fine too: the gateway is up even when a dependency is not.
  while (![200, 503].includes(await gatewayHealthy(httpPort))) {
    if (proc.exitCode !== null || Date.now() > until) {
      proc.kill('SIGKILL');
      throw new Error(`extra gateway did not start:\n${out.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    proc,
    httpsPort,
    httpPort,
    metricsPort,
    output: () => out,
    async stop(timeoutMs = 15_000) {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Runs `fn` over `items` with at most `n` at once, keeping the order of results. */
export async function pool<T, R>(n: number, items: T[], fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

export function readPids(dataDir: string): Record<string, number> {
  return JSON.parse(fs.readFileSync(path.join(dataDir, 'pids.json'), 'utf8'));
}
