/**
 * The fixed stack's floor (scripts/bench/stack-floor.ts): a GET by id made of nothing but an HTTPS
 * answer, one grpc-js call and one Postgres lookup by id, then with one Redis script call added (with
 * REDIS_URL), then behind an express route; and an HTTPS answer proxied as the gateway proxies ad
 * decisions to a plain HTTP server answering from memory. What the platform costs above these is its
 * own code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { load, type BenchCase, type BenchContext, type CaseResult } from '../harness';

const ROWS = 1000;

function start(args: string[], env: Record<string, string>): Promise<{ proc: ChildProcess; ports: number[] }> {
  const proc = spawn(process.execPath, [path.join(__dirname, '..', 'stack-floor.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    proc.stdout!.once('data', (c) => resolve({ proc, ports: String(c).trim().split(' ').map(Number) }));
    proc.once('exit', (code) => reject(new Error(`stack floor ${args[0]} exited (${code})`)));
  });
}

async function floor(ctx: BenchContext): Promise<CaseResult[]> {
  const schema = `${ctx.env.DB_SCHEMA_PREFIX ?? ''}inventory`;
  await ctx.sql('inventory', 'create table if not exists bench_floor_items (id integer primary key, doc jsonb not null)');
  await ctx.sql(
    'inventory',
    `insert into bench_floor_items (id, doc) select i, jsonb_build_object('object', 'custom_html_ad_item', 'id', i, 'name', 'Bench ad item', 'height', 250, 'width', 300,
       'custom_html', '<div>bench</div>', 'metadata', '{}'::jsonb, 'created_date', '2026-01-01 00:00:00') from generate_series(1, $1) i on conflict do nothing`,
    [ROWS],
  );
  const service = await start(['service'], { FLOOR_DATABASE_URL: ctx.databaseUrl, FLOOR_SCHEMA: schema });
  const [grpcPort, decisionPort] = service.ports;
  const edge = await start(['edge'], { FLOOR_SERVICE_ADDR: `127.0.0.1:${grpcPort}`, FLOOR_DECISION_ADDR: `127.0.0.1:${decisionPort}`, TLS_CERT_FILE: ctx.certFile, TLS_KEY_FILE: ctx.keyFile });
  const port = edge.ports[0];
  // Measured as processes of their own; the platform's idle processes stay in the figures as they are.
  ctx.pids['floor edge'] = edge.proc.pid!;
  ctx.pids['floor service'] = service.proc.pid!;
  try {
    const id = Math.floor(ROWS / 2);
    await load(ctx, 'warm-up', { port, path: `/express/${id}`, key: '', durationS: ctx.options.smoke ? 1 : 3 });
    const results = [await load(ctx, 'stack floor: HTTPS + one grpc-js call + one pg lookup', { port, path: `/grpc/${id}`, key: '' })];
    // The Redis script call only where the platform's limiter uses Redis too.
    const redis = process.env.REDIS_URL ? ' + one Redis script call' : '';
    if (redis) results.push(await load(ctx, `stack floor: the same${redis}`, { port, path: `/redis/${id}`, key: '' }));
    results.push(await load(ctx, `stack floor: the same${redis} behind an express route`, { port, path: `/express/${id}`, key: '' }));
    // The decision path's floor: the gateway's proxy hop to a server that answers from memory.
    results.push(await load(ctx, 'stack floor: HTTPS proxied (http-proxy-middleware) to a plain HTTP answer', { port, path: '/adserve/;ID=1;setID=1;type=json', key: '' }));
    return results;
  } finally {
    delete ctx.pids['floor edge'];
    delete ctx.pids['floor service'];
    edge.proc.kill('SIGTERM');
    service.proc.kill('SIGTERM');
  }
}

export const stackFloorCases: BenchCase[] = [{ name: 'stack floor', run: floor }];
