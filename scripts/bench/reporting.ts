/**
 * `npm run bench:reporting`: reporting's figures, each printed as a ratio of its target.
 * - ingestion: synthetic events loaded through EventIngest.RecordEvents (raw rows + rollups), events/s
 *   against the 20,000 events/s target;
 * - report: p50 of `GET /v2/reports?type=zone&period=day&preset=last-30-days` over all those events in
 *   one account, through the HTTPS gateway and directly over gRPC, against the 100 ms target;
 * - freshness: from recording one decision (through the Redis stream when REDIS_URL is set) to the
 *   report counting it, against the 5 s target.
 * Starts its own platform (on DATABASE_URL when set). The machines are shared and noisy.
 *
 *   npm run bench:reporting -- [--events 1000000] [--reports 30]
 */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import Redis from 'ioredis';
import { EventKind, ServingEvent } from '../../proto/gen/adserver/reporting/v1/events';
import { ReportQuery } from '../../proto/gen/adserver/reporting/v1/reports';
import { closeClients } from '../../services/shared/grpc/client';
import { accounts, eventIngest, reports as reportsApi } from '../../services/shared/grpc/clients';
import { dropSchemas, startPlatform, stopPlatform } from '../../gateway/test/support/platform';
import { loadSyntheticEvents } from './synthetic-events';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const out = (s: string) => process.stdout.write(`${s}\n`);

async function main(): Promise<void> {
  const events = arg('events', 1_000_000);
  const reports = arg('reports', 30);
  out(`starting the platform (${process.env.DATABASE_URL ? 'Postgres' : 'embedded'}${process.env.REDIS_URL ? ', Redis' : ''})...`);
  const { info } = await startPlatform({ LOG_LEVEL: 'error' });
  Object.assign(process.env, info.env);
  const ca = fs.readFileSync(path.join(info.dataDir, 'tls', 'localhost.crt'));
  const agent = new https.Agent({ ca, keepAlive: true });
  const port = Number(info.env.GATEWAY_HTTPS_PORT);
  const get = (key: string, p: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', servername: 'localhost', port, path: p, agent, headers: { Authorization: `Basic ${key}` } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
        })
        .on('error', reject);
    });
  try {
    const acct = await accounts.createAccount({ name: 'reporting bench', email: '', password: '', features: [] });
    await accounts.setAccountLimits({ accountId: acct.account!.id, generalLimit: 0, reportingLimit: 1_000_000 });
    const account = acct.account!.id;

    out(`loading ${events} events into account ${account} (30 days, 20 zones x 5 ad items, batches of 5000, 2 at a time)...`);
    let lastPrint = Date.now();
    const load = await loadSyntheticEvents({ account, events, days: 30, zones: 20, adItems: 5, run: `bench${Date.now().toString(36)}` }, 5000, 2, (done) => {
      if (Date.now() - lastPrint > 10_000) {
        lastPrint = Date.now();
        out(`  ${done} events...`);
      }
    });
    const rate = events / load.seconds;

    const query = '/v2/reports?type=zone&period=day&preset=last-30-days';
    const viaGateway: number[] = [];
    const direct: number[] = [];
    const md = new Metadata();
    md.set('x-account-id', String(account));
    md.set('x-mode', 'live');
    const q = ReportQuery.fromPartial({ type: 'zone', period: 'day', preset: 'last-30-days', details: true });
    let checked = 0;
    for (let i = 0; i < reports + 3; i++) {
      let t0 = process.hrtime.bigint();
      const res = await get(acct.liveKey, query);
      if (res.status !== 200) throw new Error(`report answered ${res.status}: ${JSON.stringify(res.body)}`);
      if (i >= 3) viaGateway.push(Number(process.hrtime.bigint() - t0) / 1e6);
      checked = res.body.data.reduce((s: number, d: any) => s + d.summary.responses + d.summary.impressions + d.summary.clicks + d.summary.conversions, 0);
      t0 = process.hrtime.bigint();
      await reportsApi.getReport(q, { timeoutMs: 60_000, metadata: md });
      if (i >= 3) direct.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

    // Freshness: one decision's response, through the stream when there is one.
    const id = `fresh${Date.now().toString(36)}`;
    const e = ServingEvent.fromPartial({ id: `${id}:response`, kind: EventKind.RESPONSE, occurredAt: new Date().toISOString(), account, zone: 999, adItem: 1 });
    const t0 = Date.now();
    if (process.env.REDIS_URL) {
      const redis = new Redis(process.env.REDIS_URL);
      await redis.xadd(`${info.env.REDIS_KEY_PREFIX}serving-events`, '*', 'e', Buffer.from(ServingEvent.encode(e).finish()));
      redis.disconnect();
    } else {
      await eventIngest.recordEvents({ events: [e] });
    }
    let fresh = NaN;
    while (Date.now() - t0 < 30_000) {
      const res = await get(acct.liveKey, '/v2/reports?type=zone&period=day&preset=last-24-hours&zones=999&financials=false');
      if (res.body.data[0]?.summary.responses === 1) {
        fresh = Date.now() - t0;
        break;
      }
    }

    out('');
    out(`events loaded: ${events} (stored ${load.stored}); the report counted ${checked} of them (rollups cover the last 30 days)`);
    out(`ingestion: ${rate.toFixed(0)} events/s sustained over ${load.seconds.toFixed(1)} s = ${(rate / 20_000).toFixed(2)}x the 20,000 events/s target`);
    out(`report ${query} over ${events} events: p50 ${p50(viaGateway).toFixed(1)} ms through the gateway = ${(p50(viaGateway) / 100).toFixed(2)}x the 100 ms budget; ${p50(direct).toFixed(1)} ms over gRPC (${reports} runs each)`);
    out(`freshness (${process.env.REDIS_URL ? 'Redis stream' : 'RecordEvents'} to /v2/reports): ${fresh} ms = ${(fresh / 5000).toFixed(3)}x the 5 s budget`);
  } finally {
    agent.destroy();
    closeClients();
    await stopPlatform(info.pid);
    await dropSchemas(info.schemaPrefix).catch(() => undefined);
    fs.rmSync(info.dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
