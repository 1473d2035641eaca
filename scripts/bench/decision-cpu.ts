/**
 * Serving's CPU per decision, this build against another build of the platform, in one process:
 *
 *   node --expose-gc dist/scripts/bench/decision-cpu.js --other /path/to/other/checkout/dist [--rounds 40] [--per-round 1000]
 *
 * Each build's own serve handler answers `/adserve/;ID=…;setID=…;type=json` from a snapshot of the
 * same decision data (a zone with two ads, and a zone whose ad carries every kind of rule), with
 * request and response objects in memory: no sockets, no load generator, no other process. Rounds
 * alternate between the builds and the CPU time of each is summed, so what the shared machine does
 * meanwhile falls on both alike. Prints µs per decision for each build and their ratio.
 */
import { EventEmitter } from 'node:events';
import type http from 'node:http';
import path from 'node:path';
import { DecisionEntity, type DeepPartial } from '../../proto/gen/adserver/inventory/v1/decision_data';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const ACCOUNT = 1;
const e = (kind: string, id: number, fields: DeepPartial<DecisionEntity>) => DecisionEntity.fromPartial({ kind, id, account: ACCOUNT, ...fields });

/** Zone 10: two weighted image ads; zone 20: one ad behind every kind of rule the request passes. */
function entities(): DecisionEntity[] {
  const ad = (id: number) => e('image_ad_item', id, { adItem: { width: 300, height: 250, location: 'https://advertiser.example/', creativeUrl: 'https://cdn.example/a.png' } });
  const allWeek = Object.fromEntries(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [d, { ranges: ['00:00:00-24:00:00'] }]));
  return [
    e('standard_zone', 10, { zone: { width: 300, height: 250, dimensions: 'fixed', publisher: 1 } }),
    e('standard_zone', 20, { zone: { width: 300, height: 250, dimensions: 'fixed', publisher: 1 } }),
    e('schedule', 30, { schedule: { startDate: '2020-01-01 00:00:00' } }),
    e('schedule', 31, { schedule: { startDate: '2020-01-01 00:00:00', dayParting: 40 } }),
    e('day_parting', 40, { dayParting: { ranges: allWeek, useMemberTimezone: true, timezone: 'America/New_York' } }),
    e('platform_target', 41, { platformTarget: { platform: 'desktop' } }),
    e('list_target', 42, { listTarget: { dataList: 43, inclusive: false } }),
    e('data_list', 43, { dataList: { key: 'user', values: ['blocked-1', 'blocked-2'] } }),
    e('data_key_target', 44, { dataKeyTarget: { target: '["OR", {"plan": {"=": "gold"}}, {"plan": {"=": "silver"}}]' } }),
    ad(100),
    ad(101),
    ad(102),
    e('placement', 200, { placement: { zoneKind: 'standard_zone', zone: 10, advertisementKind: 'image_ad_item', advertisement: 100, schedule: 30, weight: 1, active: true } }),
    e('placement', 201, { placement: { zoneKind: 'standard_zone', zone: 10, advertisementKind: 'image_ad_item', advertisement: 101, schedule: 30, weight: 3, active: true } }),
    e('placement', 202, {
      placement: {
        zoneKind: 'standard_zone', zone: 20, advertisementKind: 'image_ad_item', advertisement: 102, schedule: 31, weight: 1, active: true,
        platformTarget: 41, listTarget: 42, dataKeyTarget: 44, keywords: 'shoe*, -cheap', keywordsMatchMethod: 'required', frequencyLimit: 1_000_000, frequencyWindowSeconds: 3600,
      },
    }),
  ];
}

/** One build's serve handler over the snapshot, recording nothing. */
export function handlerOf(dist: string, snapshot: DecisionEntity[] = entities(), withDelivery = false): Handler {
  const load = (p: string) => require(path.join(dist, p));
  const store = load('services/serving/decision-store.js');
  const { createServeHandler } = load('services/serving/serve-app.js');
  const { TokenSigner } = load('services/serving/tracking.js');
  const { GeoDatabase } = load('services/serving/targeting/geo.js');
  const { LocalPageMemory } = load('services/serving/targeting/unique-delivery.js');
  const data = { current: store.dataFrom(snapshot) };
  let delivery: unknown;
  if (withDelivery) {
    // Goals kept in process, as on the embedded default; no reporting history.
    const { DeliveryLedger } = load('services/serving/delivery-ledger.js');
    const { MemoryDeliveryStore } = load('services/serving/delivery-store.js');
    delivery = new DeliveryLedger(new MemoryDeliveryStore(), { replica: 'bench', totals: async (_a: number, scopes: { key: string }[]) => ({ counts: scopes.map((x) => ({ key: x.key, impressions: 0, clicks: 0 })) }) });
  }
  return createServeHandler({
    delivery,
    data,
    testData: { current: store.dataFrom([]) },
    testReady: () => true,
    signer: new TokenSigner('bench-secret'),
    events: { push: () => undefined, pending: 0 },
    ready: () => true,
    geo: new GeoDatabase(),
    pages: new LocalPageMemory(),
    secret: 'frequency:bench-secret',
  });
}

export const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const PATHS = {
  'one zone, two ads': `/adserve/;ID=${ACCOUNT};setID=10;type=json`,
  'every kind of rule': `/adserve/;ID=${ACCOUNT};setID=20;type=json;kw=shoes,running;_abdk=${encodeURIComponent('plan:gold,user:u7')}`,
};

/** Answers one request in memory; resolves once the handler ended the response with a 200. */
export function serveOnce(handler: Handler, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = Object.assign(new EventEmitter(), { url, method: 'GET', headers: { 'user-agent': UA, host: 'serve.bench' }, socket: { remoteAddress: '127.0.0.1' } });
    const headers = new Map<string, unknown>();
    const res = Object.assign(new EventEmitter(), {
      statusCode: 200,
      headersSent: false,
      setHeader: (k: string, v: unknown) => headers.set(k.toLowerCase(), v),
      getHeader: (k: string) => headers.get(k.toLowerCase()),
      writeHead(status: number) {
        res.statusCode = status;
        res.headersSent = true;
        return res;
      },
      end(body?: string) {
        res.emit('finish');
        if (res.statusCode !== 200 || !String(body).includes('SUCCESS')) reject(new Error(`answered ${res.statusCode}: ${String(body).slice(0, 200)}`));
        else resolve();
      },
      destroy: () => reject(new Error('destroyed')),
    });
    handler(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse);
  });
}

/** A full collection before each round (node --expose-gc): no round starts with another's garbage; its own young garbage it collects itself. */
const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

export async function cpuOf(handler: Handler, url: string, n: number): Promise<number> {
  collect();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await serveOnce(handler, url);
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

async function main(): Promise<void> {
  const other = flag('other', '');
  if (!other) throw new Error('--other DIST (the dist/ folder of the build to compare with) is required');
  const rounds = Number(flag('rounds', '40'));
  const perRound = Number(flag('per-round', '1000'));
  const builds = { this: handlerOf(path.join(__dirname, '..', '..')), other: handlerOf(path.resolve(other)) };
  for (const [name, url] of Object.entries(PATHS)) {
    // Warm both up (JIT, caches) before measuring.
    for (const h of Object.values(builds)) await cpuOf(h, url, perRound);
    const total = { this: 0, other: 0 };
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      const order = r % 2 ? (['other', 'this'] as const) : (['this', 'other'] as const);
      const round = { this: 0, other: 0 };
      for (const b of order) round[b] = await cpuOf(builds[b], url, perRound);
      total.this += round.this;
      total.other += round.other;
      ratios.push(round.this / round.other);
    }
    // The median of the paired rounds' ratios: a burst of other work on the machine moves one pair, not the figure.
    const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
    const us = (t: number) => t / (rounds * perRound);
    process.stdout.write(`${name}: this build ${us(total.this).toFixed(1)} µs, other ${us(total.other).toFixed(1)} µs of CPU per decision; median ratio of ${rounds} paired rounds ${median.toFixed(3)}x\n`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
