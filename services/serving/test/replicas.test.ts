/**
 * Several replicas: a second inventory process on the same database and a second serving process fed
 * by it. A change made through the API (reaching inventory replica A) stops the ad within 1 s on the
 * serving process fed by replica B too; a serving process that loses inventory keeps serving and
 * catches up on reconnect; a crash of serving loses at most its event buffer (measured).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { newAccount, type TestAccount } from '../../../gateway/test/support/api';
import { freePort, ROOT, type PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl } from '../../../gateway/test/support/service-replica';
import { closeServeAgent, reportedEvents, serveGet, within, zoneWithCampaign } from './serving-fixtures';

const maybe = test;
const info = () => JSON.parse(process.env.TEST_PLATFORM!) as PlatformInfo;

/** A process of the shared platform's code on its database (embedded or DATABASE_URL). */
function startChild(script: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [path.join(ROOT, 'dist', script)], {
    env: { ...process.env, ...info().env, DATABASE_URL: platformDatabaseUrl(info()), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function stopChild(p: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.once('exit', () => resolve());
    p.kill(signal);
  });
}

let acct: TestAccount;
let fx: Awaited<ReturnType<typeof zoneWithCampaign>>;
let inventoryB: ChildProcess | undefined;
let servingB: ChildProcess | undefined;
let inventoryBEnv: Record<string, string>;
let servingBEnv: Record<string, string>;
const servingA = () => `http://127.0.0.1:${process.env.SERVING_PORT}`;
const servingBUrl = () => `http://127.0.0.1:${servingBEnv.SERVING_PORT}`;
const listed = async (base: string) =>
  Object.values((await serveGet(base, `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=jsonr`).catch(() => ({ body: {} as any }))).body?.placements ?? {}).map((x: any) => Number(x.banner_id));

beforeAll(async () => {
  acct = await newAccount();
  fx = await zoneWithCampaign(acct.live, [1, 1]);
  const grpcPort = await freePort();
  inventoryBEnv = { GRPC_PORT: String(grpcPort), METRICS_PORT: String(await freePort()) };
  inventoryB = startChild('services/inventory/main.js', inventoryBEnv);
  servingBEnv = { SERVING_PORT: String(await freePort()), METRICS_PORT: String(await freePort()), INVENTORY_ADDR: `127.0.0.1:${grpcPort}` };
  servingB = startChild('services/serving/main.js', servingBEnv);
  await within(30_000, async () => (await listed(servingBUrl())).length === 2, 200);
}, 60_000);

afterAll(async () => {
  closeServeAgent();
  await stopChild(servingB);
  await stopChild(inventoryB);
});

maybe('a pause through the API stops the ad within 1 s on both serving processes (one fed by another inventory replica)', async () => {
  const [a, b] = await Promise.all([listed(servingA()), listed(servingBUrl())]);
  expect(a.sort()).toEqual(fx.items.map((i) => i.id).sort());
  expect(b.sort()).toEqual(a.sort());
  const started = Date.now();
  expect((await acct.live.put(`/v2/campaign-assignments/${fx.assignments[0].id}`, { active: false })).status).toBe(200);
  const gone = (base: string) => within(1000, async () => !(await listed(base)).includes(fx.items[0].id));
  await Promise.all([gone(servingA()), gone(servingBUrl())]);
  expect(Date.now() - started).toBeLessThan(1500); // 1 s after the API answered, plus the PUT itself
  expect(await listed(servingBUrl())).toEqual([fx.items[1].id]);
});

maybe('without inventory a serving process keeps its last snapshot, and catches up when inventory is back', async () => {
  await stopChild(inventoryB);
  // Still serving what it held.
  expect(await listed(servingBUrl())).toEqual([fx.items[1].id]);
  // A change made meanwhile (through replica A) ...
  expect((await acct.live.put(`/v2/campaign-assignments/${fx.assignments[0].id}`, { active: true })).status).toBe(200);
  await new Promise((r) => setTimeout(r, 500));
  expect(await listed(servingBUrl())).toEqual([fx.items[1].id]);
  // ... arrives once replica B is back (on the same port).
  inventoryB = startChild('services/inventory/main.js', inventoryBEnv);
  await within(30_000, async () => (await listed(servingBUrl())).length === 2, 100);
  // A deleted ad item stops serving too.
  expect((await acct.live.del(`/v2/ad-items/image/${fx.items[1].id}`)).status).toBe(200);
  await within(1000, async () => !(await listed(servingBUrl())).includes(fx.items[1].id));
}, 60_000);

test('a crash of serving loses at most its event buffer (measured)', async () => {
  // Decisions answered by serving B until it is killed with SIGKILL mid-stream.
  const answered = new Set<string>();
  let running = true;
  const worker = async () => {
    while (running) {
      const res = await serveGet(servingBUrl(), `/serve/json?account=${acct.id}&zone=${fx.zone.id}`).catch(() => undefined);
      if (!res) return;
      const t = res.body?.placements?.placement_1?.accupixel_url;
      if (t) answered.add(JSON.parse(Buffer.from(decodeURIComponent(new URL(t).searchParams.get('t')!).split('.')[0], 'base64url').toString())[1]);
    }
  };
  const workers = Array.from({ length: 8 }, worker);
  await new Promise((r) => setTimeout(r, 1500));
  // What serving holds at the kill: its buffer gauge (plus up to 4 batches of 500 in flight).
  const metrics = await serveGet(`http://127.0.0.1:${servingBEnv.METRICS_PORT}`, '/metrics');
  const buffered = Number(/^serving_events_buffered (\d+)/m.exec(metrics.text)?.[1] ?? NaN);
  servingB!.kill('SIGKILL');
  running = false;
  await Promise.all(workers);
  // What reporting stored of them, once what serving handed over is ingested.
  let stored = new Set<string>();
  let previous = -1;
  await within(15_000, async () => {
    stored = new Set((await reportedEvents(info(), acct.id)).filter((e) => e.kind === 1).map((e) => e.decision));
    const settled = stored.size === previous;
    previous = stored.size;
    return settled && stored.size > 0;
  }, 1000);
  const lost = [...answered].filter((d) => !stored.has(d)).length;
  process.stderr.write(`serving crash (${process.env.REDIS_URL ? 'Redis stream' : 'gRPC batches'}): ${answered.size} responses answered in 1.5 s, ${lost} of their events lost, ${buffered} buffered just before the kill\n`);
  expect(answered.size).toBeGreaterThan(100);
  // What was lost is what serving held: its buffer, the batches in flight, what came in meanwhile.
  expect(Number.isFinite(buffered)).toBe(true);
  expect(lost).toBeLessThanOrEqual(buffered + 4 * 500 + 200);
}, 60_000);

test('a serving process without any snapshot yet is not ready (healthz 503) and serves nothing', async () => {
  const port = await freePort();
  const lonely = startChild('services/serving/main.js', { SERVING_PORT: String(port), METRICS_PORT: String(await freePort()), INVENTORY_ADDR: `127.0.0.1:${await freePort()}` });
  try {
    const base = `http://127.0.0.1:${port}`;
    await within(15_000, async () => (await serveGet(base, '/healthz').catch(() => ({ status: 0 }))).status !== 0, 100);
    const health = await serveGet(base, '/healthz');
    expect(health.status).toBe(503);
    expect(health.body.status).toBe('loading decision data');
    expect((await serveGet(base, `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json`)).body).toEqual({ status: 'NO_ADS' });
    expect((await serveGet(servingA(), '/healthz')).status).toBe(200);
  } finally {
    await stopChild(lonely);
  }
}, 30_000);

test('a graceful stop (SIGTERM) under load loses no event of an answered request', async () => {
  const port = await freePort();
  const serving = startChild('services/serving/main.js', { SERVING_PORT: String(port), METRICS_PORT: String(await freePort()) });
  const base = `http://127.0.0.1:${port}`;
  await within(15_000, async () => (await serveGet(base, '/healthz').catch(() => ({ status: 0 }))).status === 200, 100);
  const answered = new Set<string>();
  let running = true;
  const worker = async () => {
    while (running) {
      const res = await serveGet(base, `/serve/json?account=${acct.id}&zone=${fx.zone.id}`).catch(() => undefined);
      if (!res) return;
      const t = res.body?.placements?.placement_1?.accupixel_url;
      if (t) answered.add(JSON.parse(Buffer.from(decodeURIComponent(new URL(t).searchParams.get('t')!).split('.')[0], 'base64url').toString())[1]);
    }
  };
  const workers = Array.from({ length: 8 }, worker);
  await new Promise((r) => setTimeout(r, 1000));
  const exited = new Promise<number | null>((r) => serving.once('exit', (code) => r(code)));
  serving.kill('SIGTERM');
  expect(await exited).toBe(0);
  running = false;
  await Promise.all(workers);
  let missing: string[] = [];
  await within(15_000, async () => {
    const stored = new Set((await reportedEvents(info(), acct.id)).filter((e) => e.kind === 1).map((e) => e.decision));
    missing = [...answered].filter((d) => !stored.has(d));
    return missing.length === 0;
  }, 500).catch(() => undefined);
  expect(answered.size).toBeGreaterThan(100);
  expect(missing).toEqual([]);
}, 60_000);

/** A serving process of the shared platform's inventory, started now (so its snapshot is taken now). */
async function freshServing(): Promise<{ base: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = startChild('services/serving/main.js', { SERVING_PORT: String(port), METRICS_PORT: String(await freePort()) });
  const base = `http://127.0.0.1:${port}`;
  await within(15_000, async () => (await serveGet(base, '/healthz').catch(() => ({ status: 0 }))).status === 200, 100);
  return { base, stop: () => stopChild(child) };
}

/** A decision on serving A and a click on it: the decision id and the click cookie. */
async function clickedAd(own: TestAccount, zone: number) {
  const serve = () => serveGet(servingA(), `/serve/json?account=${own.id}&zone=${zone}`);
  await within(20_000, async () => (await serve()).body?.status === 'SUCCESS', 100);
  const p = (await serve()).body.placements.placement_1;
  const click = new URL(p.redirect_url);
  const clicked = await serveGet(servingA(), `${click.pathname}${click.search}`);
  const cookie = ([] as string[]).concat(clicked.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).find((c) => c.startsWith('adsrv_c='))!;
  expect(cookie).toBeDefined();
  const decision = JSON.parse(Buffer.from(decodeURIComponent(new URL(p.accupixel_url).searchParams.get('t')!).split('.')[0], 'base64url').toString())[1] as string;
  return { serve, clickPath: `${click.pathname}${click.search}`, cookie, decision };
}

const conversionsOf = async (account: number) => {
  await new Promise((r) => setTimeout(r, 1000));
  return (await reportedEvents(info(), account)).filter((e) => e.kind === 4).map((e) => ({ decision: e.decision, ad_item_id: Number(e.ad_item_id) }));
};

test("a serving process started after a campaign was archived still holds its ad item for the clicks' 30 days: a click on an earlier ad redirects, its conversion counts", async () => {
  const own = await newAccount();
  const mine = await zoneWithCampaign(own.live, [1]);
  const ad = await clickedAd(own, mine.zone.id);
  expect((await own.live.get(`/v2/campaigns/standard/${mine.campaign.id}/archive`)).status).toBe(200);
  await within(20_000, async () => (await ad.serve()).body?.status === 'NO_ADS', 100);
  const fresh = await freshServing();
  try {
    const again = await serveGet(fresh.base, ad.clickPath);
    expect(again.status).toBe(302);
    expect(again.headers.location).toBe('https://advertiser.example/landing/ad0');
    expect((await serveGet(fresh.base, `/serve/conversion?account=${own.id}&type=image_ad_item&id=${mine.items[0].id}&ref=o1`, { Cookie: ad.cookie })).status).toBe(200);
    await within(20_000, async () => (await reportedEvents(info(), own.id)).some((e) => e.kind === 4), 200);
    expect(await conversionsOf(own.id)).toEqual([{ decision: ad.decision, ad_item_id: mine.items[0].id }]);
  } finally {
    await fresh.stop();
  }
}, 60_000);

test('an ad item nothing names (its assignment deleted) is not held by a serving process started since; a conversion after a click on it still counts, one without a click records nothing', async () => {
  const own = await newAccount();
  const mine = await zoneWithCampaign(own.live, [1]);
  const ad = await clickedAd(own, mine.zone.id);
  expect((await own.live.del(`/v2/campaign-assignments/${mine.assignments[0].id}`)).status).toBe(200);
  await within(20_000, async () => (await ad.serve()).body?.status === 'NO_ADS', 100);
  const fresh = await freshServing();
  try {
    const conv = (ref: string, headers: Record<string, string> = {}) => serveGet(fresh.base, `/serve/conversion?account=${own.id}&type=image_ad_item&id=${mine.items[0].id}&ref=${ref}`, headers);
    expect((await conv('after-click', { Cookie: ad.cookie })).status).toBe(200);
    expect((await conv('no-click')).status).toBe(200);
    await within(20_000, async () => (await reportedEvents(info(), own.id)).some((e) => e.kind === 4), 200);
    expect(await conversionsOf(own.id)).toEqual([{ decision: ad.decision, ad_item_id: mine.items[0].id }]);
  } finally {
    await fresh.stop();
  }
}, 60_000);
