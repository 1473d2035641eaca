/**
 * Decisions of the serving process against the shared platform: weighted shares, a pause reaching
 * serving within 1 s, test data never served publicly, /v2/adserve with live and test keys, and the
 * errors of every public path.
 */
import { expectError, newAccount, type TestAccount } from '../../../gateway/test/support/api';
import { closeServeAgent, reportedEvents, serveGet, within, zoneWithCampaign } from './serving-fixtures';

const serving = () => `http://127.0.0.1:${process.env.SERVING_PORT}`;
let acct: TestAccount;
let fx: Awaited<ReturnType<typeof zoneWithCampaign>>;
const WEIGHTS = [1, 3, 6];

beforeAll(async () => {
  acct = await newAccount();
  fx = await zoneWithCampaign(acct.live, WEIGHTS);
  // The new zone reaches serving through the decision stream.
  await within(5000, async () => (await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json`)).body?.status === 'SUCCESS');
});
afterAll(() => closeServeAgent());

test('weighted random: 10,000 decisions follow the assignment weights within 2 points', async () => {
  const counts = new Map<string, number>();
  const N = 10_000;
  let next = 0;
  const worker = async () => {
    while (next < N) {
      next++;
      const res = await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json;size=300x250`);
      const id = res.body.placements.placement_1.banner_id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const total = WEIGHTS.reduce((a, b) => a + b, 0);
  for (const [i, w] of WEIGHTS.entries()) {
    const share = (counts.get(String(fx.items[i].id)) ?? 0) / N;
    expect(Math.abs(share - w / total)).toBeLessThan(0.02);
  }
}, 120_000);

test('the JSON answer: placement_1 with string values, jsonr ranks every eligible ad, a size that fits nothing is NO_ADS', async () => {
  const one = await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json;rf=1`);
  expect(one.status).toBe(200);
  expect(one.body.status).toBe('SUCCESS');
  const p = one.body.placements.placement_1;
  for (const k of ['banner_id', 'width', 'height', 'alt_text', 'accompanied_html', 'target', 'tracking_pixel', 'body', 'redirect_url', 'refresh_url', 'refresh_time', 'image_url', 'accupixel_url', 'eligible_url', 'viewable_url', 'is_redirectable']) {
    expect(typeof p[k]).toBe('string');
  }
  expect(p).toMatchObject({ width: '300', height: '250', is_redirectable: '1' });
  expect(p.image_url).toMatch(/^https:\/\/cdn\.example\/ad\d\.png$/);
  // The query form answers the same way.
  const q = await serveGet(serving(), `/adserve?ID=${acct.id}&setID=${fx.zone.id}&type=json`);
  expect(q.body.status).toBe('SUCCESS');
  const ranked = await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=jsonr`);
  const ids = Object.values(ranked.body.placements).map((x: any) => Number(x.banner_id));
  expect(ids).toEqual([fx.items[2].id, fx.items[1].id, fx.items[0].id]);
  expect((await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json;size=728x90`)).body).toEqual({ status: 'NO_ADS' });
  // Unknown zone or account: the same NO_ADS, so ids cannot be probed.
  expect((await serveGet(serving(), `/adserve/;ID=${acct.id};setID=999999999;type=json`)).body).toEqual({ status: 'NO_ADS' });
  expect((await serveGet(serving(), `/adserve/;ID=999999999;setID=${fx.zone.id};type=json`)).body).toEqual({ status: 'NO_ADS' });
});

test('a click counts once per decision (a repeated click too) and lands on the location with extra; a forged click redirects nowhere and counts nothing', async () => {
  const res = await serveGet(serving(), `/serve/json?account=${acct.id}&zone=${fx.zone.id}&extra=${encodeURIComponent('utm_source=news&x=1')}`);
  const p = res.body.placements.placement_1;
  const path = new URL(p.redirect_url).pathname + new URL(p.redirect_url).search;
  const click = await serveGet(serving(), path);
  expect(click.status).toBe(302);
  const item = fx.items.find((i) => String(i.id) === p.banner_id);
  expect(click.headers.location).toBe(`${item.location}?utm_source=news&x=1`);
  const forged = await serveGet(serving(), path.replace(/t=([^&]{10})/, 't=AAAAAAAAAA'));
  expect(forged.status).toBe(400);
  expect(forged.headers.location).toBeUndefined();
  const imp = await serveGet(serving(), new URL(p.accupixel_url).pathname + new URL(p.accupixel_url).search);
  expect(imp.status).toBe(200);
  expect(imp.headers['content-type']).toBe('image/gif');
  // Reporting stored the decision's response, impression and click once each (through the Redis
  // stream with REDIS_URL, else gRPC batches), the forged click nothing.
  const decision = JSON.parse(Buffer.from(decodeURIComponent(new URL(p.redirect_url).searchParams.get('t')!).split('.')[0], 'base64url').toString())[1];
  let kinds: string[] = [];
  // The weighted-share test just sent 10,000 responses ahead of these: under a loaded CI machine
  // reporting may take a while to work through them (freshness itself is tested in reporting's suite).
  await within(30_000, async () => {
    kinds = (await reportedEvents(JSON.parse(process.env.TEST_PLATFORM!), acct.id)).filter((e) => e.decision === decision).map((e) => e.id.split(':')[1]).sort();
    return kinds.length >= 3;
  }, 200);
  await serveGet(serving(), path);
  await new Promise((r) => setTimeout(r, 500));
  kinds = (await reportedEvents(JSON.parse(process.env.TEST_PLATFORM!), acct.id)).filter((e) => e.decision === decision).map((e) => e.id.split(':')[1]).sort();
  expect(kinds).toEqual(['click', 'impression', 'response']);
});

test('pausing an assignment stops its ad within 1 s; resuming brings it back', async () => {
  const paused = fx.items[2].id;
  const listed = async () => Object.values((await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=jsonr`)).body.placements ?? {}).map((x: any) => Number(x.banner_id));
  const put = await acct.live.put(`/v2/campaign-assignments/${fx.assignments[2].id}`, { active: false });
  expect(put.status).toBe(200);
  const took = await within(1000, async () => !(await listed()).includes(paused));
  expect(took).toBeLessThan(1000);
  expect(await listed()).toEqual([fx.items[1].id, fx.items[0].id]);
  expect((await acct.live.put(`/v2/campaign-assignments/${fx.assignments[2].id}`, { active: true })).status).toBe(200);
  await within(1000, async () => (await listed()).includes(paused));
});

test('test-mode data is never served publicly; a test key answers from test data with inert tracking', async () => {
  const tfx = await zoneWithCampaign(acct.test, [1]);
  await new Promise((r) => setTimeout(r, 600));
  expect((await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${tfx.zone.id};type=json`)).body).toEqual({ status: 'NO_ADS' });
  expect((await serveGet(serving(), `/serve/iframe?account=${acct.id}&zone=${tfx.zone.id}`)).text).not.toContain('cdn.example');
  const t = await acct.test.get(`/v2/adserve?ID=${acct.id}&setID=${tfx.zone.id}&type=json`);
  expect(t.status).toBe(200);
  expect(t.body).toMatchObject({ status: 'SUCCESS', test: true, placements: { placement_1: { banner_id: String(tfx.items[0].id) } } });
  // Its click answers nothing and goes nowhere.
  const link = new URL(t.body.placements.placement_1.redirect_url);
  const click = await serveGet(serving(), link.pathname + link.search);
  expect(click.status).toBe(204);
  // The live key answers the live decision (POST with a JSON body too).
  const live = await acct.live.post('/v2/adserve', { ID: acct.id, setID: fx.zone.id, type: 'json' });
  expect(live.status).toBe(200);
  expect(live.body.status).toBe('SUCCESS');
  expect(live.body.test).toBeUndefined();
  expect(fx.items.map((i) => String(i.id))).toContain(live.body.placements.placement_1.banner_id);
  // The live key does not see the test zone.
  expect((await acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${tfx.zone.id}&type=json`)).body).toEqual({ status: 'NO_ADS' });
  // Test conversion tags record nothing and answer the pixel.
  const conv = await serveGet(serving(), `/serve/conversion?account=${acct.id}&type=image_ad_item&id=${tfx.items[0].id}&test=1`);
  expect(conv.status).toBe(200);
});

test('errors of every public path', async () => {
  const bad = async (path: string, status: number, field?: string) => {
    const res = await serveGet(serving(), path);
    expect({ path, status: res.status }).toEqual({ path, status });
    expect(res.body).toMatchObject({ object: 'error', http_status: status });
    expect(res.body.message.length).toBeGreaterThan(10);
    if (field) expect(res.body.parameters[0].field).toBe(field);
  };
  await bad(`/adserve/;setID=1;type=json`, 400, 'ID');
  await bad(`/adserve/;ID=1;type=json`, 400, 'setID');
  await bad(`/adserve/;ID=1;setID=1`, 400, 'type');
  await bad(`/adserve/;ID=1;setID=1;type=xml`, 400, 'type');
  await bad(`/adserve/;ID=abc;setID=1;type=json`, 400, 'ID');
  await bad(`/adserve/;ID=1;setID=1;type=json;size=big`, 400, 'size');
  await bad(`/adserve/;ID=1;setID=%zz;type=json`, 400, 'setID');
  for (const form of ['json', 'iframe', 'js', 'image']) {
    await bad(`/serve/${form}?zone=1`, 400, 'account');
    await bad(`/serve/${form}?account=1`, 400, 'zone');
    await bad(`/serve/${form}?account=1&zone=1&click=${'x'.repeat(3000)}`, 400, 'click');
  }
  await bad(`/serve/click?t=nope`, 400);
  await bad(`/serve/click`, 400, 'account');
  await bad(`/serve/imp?t=nope.nope`, 400);
  await bad(`/serve/imp`, 400);
  await bad(`/serve/view?t=x`, 400);
  await bad(`/serve/conversion?type=image_ad_item&id=1`, 400, 'account');
  await bad(`/serve/conversion?account=1&type=zone&id=1`, 400, 'type');
  await bad(`/serve/conversion?account=1&type=image_ad_item`, 400, 'id');
  await bad(`/serve/conversion?account=1&type=image_ad_item&id=1&value=lots`, 400, 'value');
  await bad(`/serve/nothing`, 404);
  // /v2/adserve straight at serving (without the gateway's token) is refused.
  await bad(`/v2/adserve?ID=1&setID=1&type=json`, 403);
  // Methods other than GET on the public paths.
  const post = await acct.live.request('POST', '/adserve/;ID=1;setID=1;type=json', {}, { port: Number(process.env.GATEWAY_HTTPS_PORT) });
  expect(post.status).toBe(501);
  // Through the gateway: /v2/adserve needs a key, the key's own account, and valid parameters.
  const { request } = await import('../../../gateway/test/support/api');
  expectError(await request('GET', `/v2/adserve?ID=${acct.id}&setID=1&type=json`), 403, 'v2');
  expect((await acct.live.get(`/v2/adserve?ID=${acct.id + 1}&setID=1&type=json`)).body.parameters[0].field).toBe('ID');
  expectError(await acct.live.get(`/v2/adserve?ID=${acct.id}&type=json`), 400, 'v2');
  expectError(await acct.live.post('/v2/adserve', undefined, { raw: '{nope' }), 400, 'v2');
  expectError(await acct.live.post('/v2/adserve', [1, 2]), 400, 'v2');
  expectError(await acct.live.request('DELETE', '/v2/adserve'), 501, 'v2');
  // The public paths through the gateway answer as serving does.
  const viaGateway = await acct.live.get(`/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json`);
  expect(viaGateway.body.status).toBe('SUCCESS');
  // Tracking URLs name the serving origin ad tags use (SERVE_BASE_URL), whichever host answered.
  expect(viaGateway.body.placements.placement_1.redirect_url.startsWith(`${process.env.SERVE_BASE_URL}/serve/click?t=`)).toBe(true);
});

test('ending the schedule, then archiving the publisher, stop the zone serving within 1 s', async () => {
  const own = await zoneWithCampaign(acct.live, [1]);
  const json = async () => (await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${own.zone.id};type=json`)).body.status;
  await within(2000, async () => (await json()) === 'SUCCESS');
  const past = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
  expect((await acct.live.put(`/v2/schedules/${own.schedule.id}`, { end_date: past })).status).toBe(200);
  expect(await within(1000, async () => (await json()) === 'NO_ADS')).toBeLessThan(1000);
  expect((await acct.live.put(`/v2/schedules/${own.schedule.id}`, { end_date: null })).status).toBe(200);
  await within(1000, async () => (await json()) === 'SUCCESS');
  // The publisher's archive takes its zones along: the zone stops serving.
  expect((await acct.live.get(`/v1/publishers/${own.publisher.id}/archive`)).status).toBe(200);
  expect(await within(1000, async () => (await json()) === 'NO_ADS')).toBeLessThan(1000);
});

test('priority tiers on real serving: only the highest tier with an eligible ad serves, and a lower tier takes over within 1 s', async () => {
  // The campaign of `fx` serves in this zone at the default tier (standard); a heavier house ad and a
  // light sponsorship ad join it.
  const own = await zoneWithCampaign(acct.live, [5]);
  const add = async (name: string, priority: string, weight: number) => {
    const item = await acct.live.post('/v2/ad-items/image', { name, width: 300, height: 250, creative_url: `https://cdn.example/${name}.png`, location: `https://advertiser.example/${name}` });
    expect(item.status).toBe(200);
    const p = await acct.live.post('/v2/placements', {
      zone: { id: own.zone.id, type: 'standard_zone' }, advertisement: { id: item.body.id, type: 'image_ad_item' }, schedule: own.schedule.id, priority, weight,
    });
    expect(p.status).toBe(200);
    return { item: item.body, placement: p.body };
  };
  const house = await add('house', 'house', 1000);
  const sponsor = await add('sponsor', 'sponsorship', 1);
  const served = async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) seen.add((await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${own.zone.id};type=json`)).body.placements?.placement_1?.banner_id);
    return seen;
  };
  await within(5000, async () => (await served()).has(String(sponsor.item.id)));
  expect([...(await served())]).toEqual([String(sponsor.item.id)]);
  // jsonr lists every eligible ad, highest tier first.
  const ranked = await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${own.zone.id};type=jsonr`);
  expect(Object.values(ranked.body.placements).map((x: any) => Number(x.banner_id))).toEqual([sponsor.item.id, own.items[0].id, house.item.id]);
  // The decision debug names the rule that left the lower tiers out.
  const debug = await acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${own.zone.id}&type=json&debug=1`);
  expect(debug.body.excluded).toEqual(expect.arrayContaining([expect.objectContaining({ ad_item: house.item.id, rule: 'priority' })]));
  // Pausing the sponsorship hands the zone to the standard tier, never to the heavier house ad.
  expect((await acct.live.put(`/v2/placements/${sponsor.placement.id}`, { active: false })).status).toBe(200);
  await within(1000, async () => !(await served()).has(String(sponsor.item.id)));
  expect([...(await served())]).toEqual([String(own.items[0].id)]);
  // With the standard placement paused too, the house ad serves.
  expect((await acct.live.put(`/v2/placements/${own.placement.id}`, { active: false })).status).toBe(200);
  await within(1000, async () => (await served()).has(String(house.item.id)));
}, 60_000);
