/**
 * `npm run bench`: what the gateway costs on top of the services. Starts the platform (embedded, or on
 * DATABASE_URL), then runs the same operations through the HTTPS gateway and directly against the
 * owning service's gRPC API, in the same run, and reports each gateway figure as a ratio of its
 * direct baseline. The machines are shared and noisy: compare ratios, not absolute numbers.
 *
 *   npm run bench -- [--requests 400] [--concurrency 16]
 */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { AccountsClient } from '../../proto/gen/adserver/accounts/v1/accounts';
import { call, clientFor, closeClients } from '../../services/shared/grpc/client';
import { resourcesApi } from '../../services/shared/grpc/resources-api';
import { startPlatform, stopPlatform, dropSchemas } from '../../gateway/test/support/platform';

interface Result {
  name: string;
  ok: number;
  failed: number;
  seconds: number;
  p50: number;
  p99: number;
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

async function measure(name: string, total: number, concurrency: number, op: (i: number) => Promise<boolean>): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  let ok = 0;
  let failed = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = process.hrtime.bigint();
        const good = await op(i).catch(() => false);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (good) ok++;
        else failed++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { name, ok, failed, seconds, p50: pct(50), p99: pct(99) };
}

async function main(): Promise<void> {
  const total = arg('requests', 400);
  const concurrency = arg('concurrency', 16);
  process.stdout.write(`starting the platform (${process.env.DATABASE_URL ? 'Postgres' : 'embedded'})...\n`);
  const { info } = await startPlatform({ LOG_LEVEL: 'error' });
  Object.assign(process.env, info.env);
  const ca = fs.readFileSync(path.join(info.dataDir, 'tls', 'localhost.crt'));
  const agent = new https.Agent({ ca, keepAlive: true, maxSockets: concurrency });
  const port = Number(info.env.GATEWAY_HTTPS_PORT);
  const http = (key: string, method: string, p: string, body?: unknown) =>
    new Promise<number>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(
        { host: '127.0.0.1', servername: 'localhost', port, method, path: p, agent, headers: { Authorization: `Basic ${key}`, 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  const newAccount = () =>
    call<unknown, { account: { id: number }; testKey: string }>('accounts', clientFor('accounts', AccountsClient), 'createAccount', { name: 'bench', email: '', password: '', features: [] }, new Metadata());
  const tenantMd = (accountId: number) => {
    const md = new Metadata();
    md.set('x-account-id', String(accountId));
    md.set('x-mode', 'test');
    return md;
  };
  const resources = (accountId: number) => resourcesApi('accounts', tenantMd(accountId));
  try {
    // Separate accounts per scenario keep each within the per-account rate limit.
    const a1 = await newAccount();
    const a2 = await newAccount();
    const a3 = await newAccount();
    const pub = await resources(a1.account.id).create({ kind: 'publisher', attributes: { name: 'Bench publisher' } });
    const pub2 = await resources(a2.account.id).create({ kind: 'publisher', attributes: { name: 'Bench publisher' } });
    // Warm both paths (TLS sessions, channels, JIT).
    for (let i = 0; i < 50; i++) {
      await http(a2.testKey, 'GET', `/v1/publishers/${pub2.id}`);
      await resources(a1.account.id).get({ kind: 'publisher', id: pub.id });
    }
    const results: Result[] = [];
    results.push(await measure('retrieve: gRPC direct', total, concurrency, async () => !!(await resources(a1.account.id).get({ kind: 'publisher', id: pub.id }))));
    results.push(await measure('retrieve: HTTPS gateway', total, concurrency, async () => (await http(a2.testKey, 'GET', `/v1/publishers/${pub2.id}`)) === 200));
    results.push(
      await measure('create: gRPC direct', total, concurrency, async (i) => !!(await resources(a1.account.id).create({ kind: 'publisher', attributes: { name: `P${i}` } }))),
    );
    results.push(await measure('create: HTTPS gateway', total, concurrency, async (i) => (await http(a3.testKey, 'POST', '/v1/publishers', { name: `P${i}` })) === 200));
    process.stdout.write(`\n${total} requests per scenario, concurrency ${concurrency}\n`);
    process.stdout.write(`${'scenario'.padEnd(26)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'failed'.padStart(8)}\n`);
    for (const r of results) {
      process.stdout.write(`${r.name.padEnd(26)}${(r.ok / r.seconds).toFixed(0).padStart(9)}${r.p50.toFixed(2).padStart(9)}${r.p99.toFixed(2).padStart(9)}${String(r.failed).padStart(8)}\n`);
    }
    for (const op of ['retrieve', 'create']) {
      const d = results.find((r) => r.name === `${op}: gRPC direct`)!;
      const g = results.find((r) => r.name === `${op}: HTTPS gateway`)!;
      process.stdout.write(`${op}: gateway throughput = ${((g.ok / g.seconds) / (d.ok / d.seconds)).toFixed(2)}x of direct gRPC; p50 latency = ${(g.p50 / d.p50).toFixed(2)}x\n`);
    }
  } finally {
    agent.destroy();
    closeClients();
    await stopPlatform(info.pid, 30_000, info.dataDir);
    await dropSchemas(info.schemaPrefix).catch(() => undefined);
    fs.rmSync(info.dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
