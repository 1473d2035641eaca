/**
 * Delivery goals through the real platform: schedules made through the API, ads asked of the serving
 * process, impressions and clicks fired at its tracking URLs, counts kept by its counters and by
 * reporting. A second serving process checks that a goal holds across replicas (with Redis) and across
 * a restart (counters seeded from reporting).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { newAccount, type TestAccount } from '../../../gateway/test/support/api';
import { freePort, ROOT, type PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl } from '../../../gateway/test/support/service-replica';
import { closeServeAgent, reportedEvents, serveGet, within, zoneWithCampaign } from './serving-fixtures';

const info = () => JSON.parse(process.env.TEST_PLATFORM!) as PlatformInfo;
const servingA = () => `http://127.0.0.1:${process.env.SERVING_PORT}`;
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
const IMPRESSION = 2;

let acct: TestAccount;
let fx: Awaited<ReturnType<typeof zoneWithCampaign>>;

beforeAll(async () => {
  acct = await newAccount();
  fx = await zoneWithCampaign(acct.live, [1]);
});

afterAll(() => closeServeAgent());

/** An image ad placed in the fixture's zone at a tier, on a schedule of its own with `goal`. */
async function placed(priority: string, goal: Record<string, unknown>) {
  const schedule = await acct.live.post('/v2/schedules', { start_date: yesterday(), ...goal });
  expect(schedule.status).toBe(200);
  const item = await acct.live.post('/v2/ad-items/image', { name: `${priority} ad`, width: 300, height: 250, creative_url: 'https://cdn.example/s.png', location: 'https://advertiser.example/s', advertiser: fx.advertiser.id });
  expect(item.status).toBe(200);
  const p = await acct.live.post('/v2/placements', { zone: { id: fx.zone.id, type: 'standard_zone' }, advertisement: { id: item.body.id, type: 'image_ad_item' }, schedule: schedule.body.id, priority });
  expect(p.status).toBe(200);
  return { schedule: schedule.body, item: item.body, placement: p.body };
}

/** Waits until serving holds the placement with its goals (decision data applies within 1 s). */
async function goalsInForce(zone: number, placement: number, rule: string) {
  await within(3000, async () => {
    const debug = await acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${zone}&type=json&debug=1`);
    if (process.env.DEBUG_GOALS) console.log(JSON.stringify(debug.body));
    const entries: { placement: number; goals?: { rule: string }[] }[] = [...(debug.body.eligible ?? []), ...(debug.body.excluded ?? [])];
    return entries.some((e) => e.placement === placement && e.goals?.some((g) => g.rule === rule));
  }, 50);
}

const ask = async (base = servingA()) => (await serveGet(base, `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json`)).body;
/** A tracking URL (it names SERVE_BASE_URL) fired at a serving process directly. */
const fire = (url: string, base = servingA()) => {
  const u = new URL(url);
  return serveGet(base, `${u.pathname}${u.search}`);
};

test('a lifetime quota of views: the sponsor serves until exactly N impressions are counted, then the lower tier; the schedule says quota_reached', async () => {
  const sponsor = await placed('sponsorship', { quota_lifetime: 4, quota_type: 'views' });
  await goalsInForce(fx.zone.id, sponsor.placement.id, 'quota');
  const served: string[] = [];
  for (let i = 0; i < 12; i++) {
    const body = await ask();
    const p = body.placements.placement_1;
    served.push(p.banner_id);
    // Only rendered sponsor ads count: fire their impression URL, twice (a replay counts once).
    if (p.banner_id === String(sponsor.item.id)) {
      await fire(p.accupixel_url);
      await fire(p.accupixel_url);
    }
  }
  expect(served.filter((id) => id === String(sponsor.item.id))).toHaveLength(4);
  expect(served.slice(-4).every((id) => id === String(fx.items[0].id))).toBe(true);
  // Reporting counted the same four impressions.
  await within(3000, async () => (await reportedEvents(info(), acct.id)).filter((e) => e.kind === IMPRESSION && Number(e.ad_item_id) === sponsor.item.id).length === 4);
  // Decision debug names the rule.
  const debug = await acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${fx.zone.id}&type=json&debug=1`);
  expect(debug.body.excluded).toContainEqual(expect.objectContaining({ placement: sponsor.placement.id, rule: 'quota' }));
  // The schedule's status reads the same count, within 1 s.
  await within(1000, async () => (await acct.live.get(`/v2/schedules/${sponsor.schedule.id}`)).body.status === 'quota_reached');
  await acct.live.put(`/v2/placements/${sponsor.placement.id}`, { active: false });
});

test('a day cap of clicks stops the placement after that many clicks, and NO_ADS once every ad is exhausted', async () => {
  const own = await zoneWithCampaign(acct.live, [1]);
  // The campaign's only placement gets a day cap of 2 clicks on its schedule.
  expect((await acct.live.put(`/v2/schedules/${own.schedule.id}`, { day_cap_limit: 2, day_cap_type: 'clicks' })).status).toBe(200);
  await goalsInForce(own.zone.id, own.placement.id, 'day_cap');
  const askOwn = async () => (await serveGet(servingA(), `/adserve/;ID=${acct.id};setID=${own.zone.id};type=json`)).body;
  let clicks = 0;
  await within(3000, async () => {
    const body = await askOwn();
    if (body.status === 'NO_ADS') return true;
    const click = await fire(body.placements.placement_1.redirect_url);
    expect(click.status).toBe(302);
    clicks++;
    return false;
  }, 10);
  expect(clicks).toBe(2);
  expect((await askOwn()).status).toBe('NO_ADS');
});

test('status follows the schedule window: queued before its start, expired after its end (endOnDate), active with endOnQuota until the quota is met', async () => {
  const future = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
  const queued = await acct.live.post('/v2/schedules', { start_date: future });
  expect(queued.body.status).toBe('queued');
  const expired = await acct.live.post('/v2/schedules', { start_date: '2020-01-01 00:00:00', end_date: '2020-02-01 00:00:00' });
  expect(expired.body.status).toBe('expired');
  const onQuota = await acct.live.post('/v2/schedules', { start_date: '2020-01-01 00:00:00', end_date: '2020-02-01 00:00:00', quota_lifetime: 5, quota_type: 'views', under_delivery_behaviour: 'endOnQuota' });
  expect(onQuota.body.status).toBe('active');
  const list = await acct.live.get('/v2/schedules?limit=100');
  expect(list.body.data.find((s: { id: number }) => s.id === expired.body.id).status).toBe('expired');
});

test('start_at and end_at with their time zones set the window; start_date answers in UTC; smooth schedules show their pace', async () => {
  const made = await acct.live.post('/v2/schedules', { start_at: '2026-01-01T09:00:00-05:00', start_at_timezone: 'America/New_York', end_at: '2026-01-15T17:00:00Z', end_at_timezone: 'Europe/Paris' });
  expect(made.status).toBe(200);
  expect(made.body).toMatchObject({ start_date: '2026-01-01 14:00:00', start_at: '2026-01-01T09:00:00-05:00', end_date: '2026-01-15 17:00:00', end_at: '2026-01-15T18:00:00+01:00', status: 'expired' });
  const byDate = await acct.live.post('/v2/schedules', { start_date: '2026-07-01 12:00:00', start_at_timezone: 'America/New_York' });
  expect(byDate.body).toMatchObject({ start_at: '2026-07-01T08:00:00-04:00', end_at: null });
  const moved = await acct.live.put(`/v2/schedules/${byDate.body.id}`, { start_at: '2026-07-02T00:00:00+02:00' });
  expect(moved.body).toMatchObject({ start_date: '2026-07-01 22:00:00', start_at: '2026-07-01T18:00:00-04:00' });
  const clash = await acct.live.post('/v2/schedules', { start_date: '2026-01-01 00:00:00', start_at: '2026-01-01T09:00:00-05:00' });
  expect(clash.status).toBe(400);
  expect(clash.body.parameters).toEqual([expect.objectContaining({ field: 'start_date' })]);
  const badZone = await acct.live.post('/v2/schedules', { start_at_timezone: 'Mars/Olympus' });
  expect(badZone.body.parameters).toEqual([expect.objectContaining({ field: 'start_at_timezone' })]);
  const badAt = await acct.live.post('/v2/schedules', { start_at: '2026-01-01 09:00' });
  expect(badAt.body.parameters).toEqual([expect.objectContaining({ field: 'start_at' })]);

  // Half of a smooth window gone and nothing delivered: behind its pace.
  const at = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  const smooth = await acct.live.post('/v2/schedules', { start_date: at(Date.now() - 3_600_000), end_date: at(Date.now() + 3_600_000), quota_lifetime: 1000, quota_type: 'views', delivery_method: 'smooth' });
  expect(smooth.body.pacing).toEqual({ expected: expect.any(Number), delivered: 0, behind: true });
  expect(Math.abs(smooth.body.pacing.expected - 500)).toBeLessThanOrEqual(2);
  expect((await acct.live.get(`/v2/schedules/${made.body.id}`)).body.pacing).toBeNull();
});

describe('a second serving process', () => {
  let servingB: ChildProcess | undefined;
  let env: Record<string, string>;
  const start = async () => {
    env = { SERVING_PORT: String(await freePort()), METRICS_PORT: String(await freePort()) };
    servingB = spawn(process.execPath, [path.join(ROOT, 'dist/services/serving/main.js')], {
      env: { ...process.env, ...info().env, DATABASE_URL: platformDatabaseUrl(info()), ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await within(30_000, async () => (await serveGet(`http://127.0.0.1:${env.SERVING_PORT}`, '/healthz').catch(() => ({ status: 0 }))).status === 200, 200);
  };
  const stop = () => new Promise<void>((resolve) => {
    if (!servingB || servingB.exitCode !== null) return resolve();
    servingB.once('exit', () => resolve());
    servingB.kill('SIGTERM');
  });
  afterAll(stop);

  test('two replicas with shared counters never pass a quota together (Redis), and a restarted one remembers it', async () => {
    const goal = 30;
    const own = await zoneWithCampaign(acct.live, [1]);
    expect((await acct.live.put(`/v2/schedules/${own.schedule.id}`, { quota_lifetime: goal, quota_type: 'views' })).status).toBe(200);
    await goalsInForce(own.zone.id, own.placement.id, 'quota');
    await start();
    const bases = [servingA(), `http://127.0.0.1:${env.SERVING_PORT}`];
    const shared = !!process.env.REDIS_URL;
    let impressions = 0;
    if (shared) {
      // Both replicas at once, each impression fired at the other replica, until the goal is met
      // (the last views may wait for shares held by decisions in flight).
      const until = Date.now() + 40_000;
      await Promise.all(
        [0, 1, 2, 3].map(async (worker) => {
          while (impressions < goal && Date.now() < until) {
            const body = (await serveGet(bases[worker % 2], `/adserve/;ID=${acct.id};setID=${own.zone.id};type=json`)).body;
            if (body.status !== 'SUCCESS') {
              await new Promise((r) => setTimeout(r, 50));
              continue;
            }
            impressions++;
            await fire(body.placements.placement_1.accupixel_url, bases[(worker + 1) % 2]);
          }
        }),
      );
      // Neither replica serves it any more.
      for (const base of bases) expect((await serveGet(base, `/adserve/;ID=${acct.id};setID=${own.zone.id};type=json`)).body.status).toBe('NO_ADS');
      // The contract's bound: one in-flight decision per replica past the goal. One loaded CI run served
      // 31 of 30; a claim that travelled while its replica spent the old grant could hold too little
      // (fixed: the unspent grant goes with the claim as in flight), not proven to be that run's cause.
      expect(impressions).toBeGreaterThanOrEqual(goal);
      expect(impressions).toBeLessThanOrEqual(goal + 1);
    } else {
      // One replica per process without Redis: serve the goal on A, then B (a fresh process) starts
      // from reporting's count.
      for (let i = 0; i < goal + 10; i++) {
        const body = (await serveGet(bases[0], `/adserve/;ID=${acct.id};setID=${own.zone.id};type=json`)).body;
        if (body.status !== 'SUCCESS') continue;
        impressions++;
        await fire(body.placements.placement_1.accupixel_url);
      }
      expect(impressions).toBe(goal);
    }
    await within(5000, async () => (await reportedEvents(info(), acct.id)).filter((e) => e.kind === IMPRESSION && Number(e.ad_item_id) === own.items[0].id).length === impressions);
    // A restarted process (or a new one) keeps the goal: its counter is shared, or seeded from reporting.
    await stop();
    await start();
    const body = (await serveGet(`http://127.0.0.1:${env.SERVING_PORT}`, `/adserve/;ID=${acct.id};setID=${own.zone.id};type=json`)).body;
    expect(body.status).toBe('NO_ADS');
  }, 90_000);
});
