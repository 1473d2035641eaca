/**
 * Ad decisions: `/adserve/;ID=…;setID=…;type=json` of a live zone with one ad, answered from the
 * serving process's memory, measured on serving's own plain HTTP listener and through the gateway's
 * HTTPS proxy. Each counts a response event too, as real traffic does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { load, type BenchCase, type BenchContext } from '../harness';

let zonePath: Promise<string> | undefined;

/** Polls the serving process until `path` serves an ad; answers `path`. */
async function servedAt(ctx: BenchContext, path: string, what: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const res = await ctx.api('GET', path, undefined, '');
    if (res.body?.status === 'SUCCESS') return path;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} never reached the serving process`);
}

/** A new account's live zone with one image ad placed on a schedule made of `schedule`; answers its decision path once it serves. */
async function placedZone(ctx: BenchContext, name: string, schedule: Record<string, unknown>): Promise<string> {
  const { accountId, liveKey } = await ctx.newKey();
  const zone = (await ctx.api('POST', '/v2/zones/standard', { name, width: 300, height: 250 }, liveKey)).body;
  const item = (await ctx.api('POST', '/v2/ad-items/image', { name: 'Bench ad', width: 300, height: 250, creative_url: 'https://cdn.example/bench.png', location: 'https://advertiser.example/' }, liveKey)).body;
  const made = (await ctx.api('POST', '/v2/schedules', schedule, liveKey)).body;
  const placed = await ctx.api('POST', '/v2/placements', { zone: { id: zone.id, type: 'standard_zone' }, advertisement: { id: item.id, type: 'image_ad_item' }, schedule: made.id }, liveKey);
  if (placed.status !== 200) throw new Error(`bench placement failed: ${JSON.stringify(placed.body)}`);
  return servedAt(ctx, `/adserve/;ID=${accountId};setID=${zone.id};type=json`, name);
}

const at = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** A live zone with one placed ad item, set up once and waited for on the serving process. */
function decisionPath(ctx: BenchContext): Promise<string> {
  zonePath ??= placedZone(ctx, 'Bench zone', { start_date: at(Date.now() - 86_400_000) });
  return zonePath;
}

let targetedPath: Promise<string> | undefined;

/**
 * The same decision with every kind of rule active on the candidate: geo, day-parting, platform,
 * keywords, postal code, list and data-key targets, a frequency cap and unique delivery, answered for a
 * request that passes them all (issue target: at least 80 % of the rule-free decision's throughput).
 */
function targetedDecisionPath(ctx: BenchContext): Promise<string> {
  targetedPath ??= (async () => {
    const { accountId, liveKey } = await ctx.newKey();
    const post = async (path: string, body: unknown) => {
      const res = await ctx.api('POST', path, body, liveKey);
      if (res.status !== 200) throw new Error(`bench setup ${path} failed: ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const allWeek = Object.fromEntries(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [d, ['00:00:00-24:00:00']]));
    const dayParting = await post('/v2/day-parting', { name: 'Always', use_member_timezone: true, timezone: 'America/New_York', ranges: allWeek });
    const schedule = await post('/v2/schedules', { start_date: '2020-01-01 00:00:00', day_parting_id: dayParting.id });
    const zone = await post('/v2/zones/standard', { name: 'Bench targeted zone', width: 300, height: 250, unique_delivery: true });
    const item = await post('/v2/ad-items/image', { name: 'Bench ad', width: 300, height: 250, creative_url: 'https://cdn.example/bench.png', location: 'https://advertiser.example/' });
    const geo = await post('/v2/geo-targets', { name: 'US', areas: [{ country: 'US' }] });
    const platform = await post('/v2/platform-targets', { name: 'Desktop', platform: 'desktop' });
    const postal = await post('/v2/postal-code-targets', { label: 'Not here', inclusive: false, locations: [{ country: 'JP', postal_codes: ['770-0806'] }] });
    const list = await post('/v2/data-lists', { label: 'Blocked', key: 'user', values: ['blocked-1', 'blocked-2'] });
    const listTarget = await post('/v2/list-targets', { label: 'Not blocked', inclusive: false, data_list: list.id });
    await post('/v2/data-keys', { name: 'plan', type: 'STRING' });
    const dataKey = await post('/v2/data-key-targets', { name: 'Paying', target: '["OR", {"plan": {"=": "gold"}}, {"plan": {"=": "silver"}}]' });
    await post('/v2/placements', {
      zone: { id: zone.id, type: 'standard_zone' },
      advertisement: { id: item.id, type: 'image_ad_item' },
      schedule: schedule.id,
      geo_target: geo.id,
      platform_target: platform.id,
      postal_code_target: postal.id,
      list_target: listTarget.id,
      data_key_target_id: dataKey.id,
      keywords: 'shoe*, -cheap',
      keywords_match_method: 'required',
      per_user_view_limit: 1000000,
      per_user_view_period: 1,
    });
    const ua = encodeURIComponent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36');
    const path = `/adserve/;ID=${accountId};setID=${zone.id};type=json;ip=8.8.8.8;ua=${ua};kw=shoes,running;_abdk=${encodeURIComponent('plan:gold,user:u7')}`;
    return servedAt(ctx, path, 'the targeted bench zone (GeoIP database, stream)');
  })();
  return targetedPath;
}

let goalsPath: Promise<string> | undefined;

/**
 * The plain decision's zone and ad again, placed on a schedule with a lifetime quota, a day cap and
 * smooth delivery whose limits no bench run reaches (issue target: at least 0.9x the plain decision).
 */
function goalDecisionPath(ctx: BenchContext): Promise<string> {
  goalsPath ??= placedZone(ctx, 'Bench goals zone', {
    start_date: at(Date.now() - 86_400_000), end_date: at(Date.now() + 3_600_000), quota_lifetime: 2_000_000_000, quota_type: 'views',
    day_cap_limit: 2_000_000_000, day_cap_type: 'views', delivery_method: 'smooth',
  });
  return goalsPath;
}

let vastPath: Promise<string> | undefined;

/**
 * A VAST zone with one video ad (two renditions and a companion, each a part the document names) on a
 * schedule like the plain decision's: `/vast.spark` answers it as VAST 4.2 (issue target: at least 0.8x
 * the display decision of the same run).
 */
function vastDecisionPath(ctx: BenchContext): Promise<string> {
  vastPath ??= (async () => {
    const { accountId, liveKey } = await ctx.newKey();
    const post = async (path: string, body: unknown) => {
      const res = await ctx.api('POST', path, body, liveKey);
      if (res.status !== 200) throw new Error(`bench setup ${path} failed: ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const publisher = await post('/v2/publishers', { name: 'Bench video publisher' });
    const zone = await post('/v2/vast-zones', { name: 'Bench pre-roll', publisher: publisher.id, vast_version: '4.2' });
    const item = await post('/v2/vast-ad-items', { name: 'Bench spot', duration: '00:00:15', skippable: true, skip_duration: '00:00:05', location: 'https://advertiser.example/' });
    await post('/v2/vast-media/linear', { ad_item: item.id, type: 'video/mp4', width: 1280, height: 720, creative_url: 'https://cdn.example/bench-720.mp4' });
    await post('/v2/vast-media/linear', { ad_item: item.id, type: 'video/webm', width: 640, height: 360, creative_url: 'https://cdn.example/bench-360.webm' });
    await post('/v2/vast-companions', { ad_item: item.id, width: 300, height: 250, content: 'https://cdn.example/bench.png', location: 'https://advertiser.example/' });
    const schedule = await post('/v2/vast-schedules', { start_date: at(Date.now() - 86_400_000) });
    await post('/v2/vast-placements', { zone: zone.id, advertisement: { id: item.id, type: 'vast_ad_item' }, schedule: schedule.id });
    const path = `/vast.spark?setID=${zone.id}&ID=${accountId}`;
    for (let i = 0; i < 100; i++) {
      const res = await ctx.api('GET', path, undefined, '');
      if (typeof res.body === 'string' && res.body.includes('<Ad ')) return path;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the VAST bench zone never reached the serving process');
  })();
  return vastPath;
}

let demandPath: Promise<string> | undefined;

/** A loopback OpenRTB bidder that answers every bid request with a bid after `delayMs`. */
function startBidder(delayMs: number): Promise<string> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.end();
      const id = (JSON.parse(body) as { id: string }).id;
      setTimeout(() => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ id, cur: 'USD', seatbid: [{ seat: 'bench', bid: [{ id: 'b', impid: '1', price: 2.5, w: 300, h: 250, adm: '<div>bench bid</div>' }] }] }));
      }, delayMs);
    });
  });
  server.unref();
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/bid`)));
}

/**
 * The plain decision's zone shape with programmatic demand: one demand endpoint that bids after 20 ms
 * (and no placement), so every decision waits for a real HTTP bid over the keep-alive pool.
 */
function demandDecisionPath(ctx: BenchContext): Promise<string> {
  demandPath ??= (async () => {
    const { accountId, liveKey } = await ctx.newKey();
    const post = async (path: string, body: unknown) => {
      const res = await ctx.api('POST', path, body, liveKey);
      if (res.status !== 200) throw new Error(`bench setup ${path} failed: ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const url = await startBidder(20);
    const zone = await post('/v2/zones/standard', { name: 'Bench programmatic zone', width: 300, height: 250, allow_demand_sources: true, bid_floor: 1 });
    const source = await post('/v2/demand-sources', { name: 'Bench demand', network: 'openrtb' });
    await post('/v2/demand-endpoints', { name: 'Bench bidder', demand_source: source.id, default_parameters: { url }, supported_formats: ['display'] });
    return servedAt(ctx, `/adserve/;ID=${accountId};setID=${zone.id};type=json`, 'the programmatic bench zone');
  })();
  return demandPath;
}

const DISPLAY_DECISION = 'ad decision: serving direct (plain HTTP)';
const DEMAND_DECISION = 'ad decision with one demand endpoint bidding in 20 ms: serving direct';

export const servingCases: BenchCase[] = [
  {
    name: DISPLAY_DECISION,
    run: async (ctx) => load(ctx, DISPLAY_DECISION, { port: Number(ctx.env.SERVING_PORT), path: await decisionPath(ctx), key: '', plainHttp: true }),
  },
  {
    name: 'VAST decision (4.2, linear and companion): serving direct',
    async run(ctx) {
      const r = await load(ctx, 'VAST decision (4.2, linear and companion): serving direct', { port: Number(ctx.env.SERVING_PORT), path: await vastDecisionPath(ctx), key: '', plainHttp: true });
      // Judged against the display decision measured just before it in this run.
      const display = ctx.results.find((x) => x.name === DISPLAY_DECISION);
      if (display?.reqPerSec) {
        const ratio = r.reqPerSec / display.reqPerSec;
        r.note = `${ratio.toFixed(2)}x the display decision (target 0.8x)`;
        r.met = ratio >= 0.8;
      }
      return r;
    },
  },
  {
    name: DEMAND_DECISION,
    async run(ctx) {
      const r = await load(ctx, DEMAND_DECISION, { port: Number(ctx.env.SERVING_PORT), path: await demandDecisionPath(ctx), key: '', plainHttp: true });
      // Beside the direct decision of this run: the bid's 20 ms bound each decision's latency.
      const display = ctx.results.find((x) => x.name === DISPLAY_DECISION);
      if (display?.reqPerSec) r.note = `${(r.reqPerSec / display.reqPerSec).toFixed(2)}x the direct decision's throughput; p50 ${r.p50} ms against its ${display.p50} ms`;
      return r;
    },
  },
  {
    name: 'ad decision with every kind of rule: serving direct',
    run: async (ctx) => load(ctx, 'ad decision with every kind of rule: serving direct', { port: Number(ctx.env.SERVING_PORT), path: await targetedDecisionPath(ctx), key: '', plainHttp: true }),
  },
  {
    name: 'ad decision with quota, day cap and pacing: serving direct',
    run: async (ctx) => load(ctx, 'ad decision with quota, day cap and pacing: serving direct', { port: Number(ctx.env.SERVING_PORT), path: await goalDecisionPath(ctx), key: '', plainHttp: true }),
  },
  {
    name: 'ad decision: through the gateway (HTTPS proxy)',
    run: async (ctx) => load(ctx, 'ad decision: through the gateway (HTTPS proxy)', { port: ctx.gatewayPort, path: await decisionPath(ctx), key: '' }),
  },
];
