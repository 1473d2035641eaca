/**
 * Header bidding through the gateway's serving origin over HTTPS, as Prebid.js's `adbutler` adapter
 * asks it (`/adserve/;ID=…;type=hbr;setID=…;pid=…;place=…;kw=undefined;`, with the page's Origin):
 * the bid's values (the placement's CPM, the ad's size, its markup, signed tracking pixels), the no-bid
 * answer, CORS for a credentialed request from any origin, and a bid that counts a response but no
 * impression until its pixel fires, then exactly one.
 */
import { newAccount, request, type TestAccount } from '../../../gateway/test/support/api';
import { reportedEvents, within, zoneWithCampaign } from './serving-fixtures';

const ORIGIN = 'https://publisher.example';
let acct: TestAccount;
let fx: Awaited<ReturnType<typeof zoneWithCampaign>>;

/** A GET on the gateway's serving origin (GATEWAY_SERVE_PORT), from a page of `origin`. */
const serve = (path: string, origin = ORIGIN) => request('GET', path, undefined, { port: Number(process.env.GATEWAY_SERVE_PORT), headers: origin ? { Origin: origin } : {} });
/** The adapter's request for a zone: every parameter written, an absent keyword as `kw=undefined`. */
const bidPath = (zone: number, pid = 4242, place = 0) => `/adserve/;ID=${acct.id};type=hbr;setID=${zone};pid=${pid};place=${place};kw=undefined;?`;
/** Whether serving has the zone's ad (decision debug through the account's key, which records nothing). */
const eligible = async (zone: number) => ((await acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${zone}&type=json&debug=1`)).body?.eligible ?? []).length > 0;
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

beforeAll(async () => {
  acct = await newAccount();
  fx = await zoneWithCampaign(acct.live, [1]);
  const put = await acct.live.put(`/v2/ad-items/image/${fx.items[0].id}`, { tracking_pixel: 'https://pixels.example/seen?ad=1' });
  expect(put.status).toBe(200);
  await within(5000, async () => (await acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${fx.zone.id}&type=json&debug=1`)).body?.eligible?.[0]?.ad_item === fx.items[0].id, 50);
  // The item's tracking pixel reaches serving with the item.
  await within(5000, async () => (await acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${fx.zone.id}&type=json`)).body?.placements?.placement_1?.tracking_pixel === 'https://pixels.example/seen?ad=1', 50);
});

test("a bid: the placement's CPM, the ad's size and markup, its signed impression pixel and the item's own, the advertiser", async () => {
  const res = await serve(bidPath(fx.zone.id, 4242, 1));
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const item = fx.items[0];
  expect(res.body).toEqual({
    status: 'SUCCESS',
    account_id: acct.id,
    zone_id: fx.zone.id,
    place: 1,
    placement_id: fx.placement.id,
    banner_id: item.id,
    cpm: 2.5,
    width: 300,
    height: 250,
    ad_code: expect.any(String),
    tracking_pixels: [expect.stringMatching(/^https:\/\/serve\.example\.test\/serve\/imp\?t=[\w%.-]+$/), 'https://pixels.example/seen?ad=1'],
    advertiser: { id: fx.advertiser.id, name: '', domain: '' },
  });
  // The linked image, clicking through the signed click URL; the pixels are not in the markup (the adapter adds them).
  expect(res.body.ad_code).toContain('<img src="https://cdn.example/ad0.png" width="300" height="250"');
  expect(res.body.ad_code).toMatch(/<a href="https:\/\/serve\.example\.test\/serve\/click\?t=[^"]+" target="_blank">/);
  expect(res.body.ad_code).not.toContain('pixels.example');
  // The pixel's token is signed: altered, it counts nothing.
  const imp = pathOf(res.body.tracking_pixels[0]);
  const forged = await serve(imp.replace(/t=(.{12})/, (_m, s: string) => `t=${s.split('').reverse().join('')}`));
  expect(forged.status).toBe(400);
  // A keyword the adapter passes on is read (no placement of this zone targets keywords).
  const kw = await serve(`/adserve/;ID=${acct.id};type=hbr;setID=${fx.zone.id};pid=4242;place=2;kw=shoes;`);
  expect(kw.body).toMatchObject({ status: 'SUCCESS', cpm: 2.5, place: 2 });
});

test('a placement priced by conversion bids its effective CPM (the prior CVR of 0.01 % before it has impressions)', async () => {
  const other = await zoneWithCampaign(acct.live, [1]);
  const put = await acct.live.put(`/v2/placements/${other.placement.id}`, { cost: { cpm: null, cpa: 5 } });
  expect({ status: put.status, cost: put.body.cost }).toMatchObject({ status: 200, cost: { cpa: 5 } });
  expect(put.body.cost.cpm ?? null).toBeNull();
  let bid: any;
  await within(5000, async () => (bid = (await serve(bidPath(other.zone.id))).body).status === 'SUCCESS' && bid.cpm !== 2.5, 50);
  // CPA × CVR × 1000 = 5 × 0.0001 × 1000.
  expect(bid).toMatchObject({ placement_id: other.placement.id, cpm: 0.5 });
});

test('no eligible ad: the no-bid answer, the same for an unknown zone or account', async () => {
  for (const path of [
    `/adserve/;ID=${acct.id};type=hbr;setID=999999999;pid=1;place=0;kw=undefined;`,
    `/adserve/;ID=999999999;type=hbr;setID=${fx.zone.id};pid=1;place=0;kw=undefined;`,
  ]) {
    const res = await serve(path);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'NO_ELIGIBLE_ADS', account_id: Number(/ID=(\d+)/.exec(path)![1]), zone_id: Number(/setID=(\d+)/.exec(path)![1]), place: 0 });
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
  }
  // A zone whose only placement is paused bids nothing.
  const paused = await zoneWithCampaign(acct.live, [1]);
  await within(5000, () => eligible(paused.zone.id), 50);
  expect((await acct.live.put(`/v2/placements/${paused.placement.id}`, { active: false })).status).toBe(200);
  await within(5000, async () => !(await eligible(paused.zone.id)), 50);
  expect((await serve(bidPath(paused.zone.id))).body).toMatchObject({ status: 'NO_ELIGIBLE_ADS', zone_id: paused.zone.id });
  // An invalid request is a 400 the page can read.
  const bad = await serve(`/adserve/;ID=${acct.id};type=hbr;pid=1;place=0;`);
  expect(bad.status).toBe(400);
  expect(bad.body.parameters[0].field).toBe('setID');
  expect(bad.headers['access-control-allow-origin']).toBe(ORIGIN);
});

test('CORS for a credentialed request: any page origin is echoed with credentials allowed; the JSON form keeps *', async () => {
  for (const origin of [ORIGIN, 'http://127.0.0.1:5173', 'https://news.example.co.uk']) {
    const res = await serve(bidPath(fx.zone.id), origin);
    expect(res.body.status).toBe('SUCCESS');
    expect(res.headers['access-control-allow-origin']).toBe(origin);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(String(res.headers.vary)).toMatch(/\bOrigin\b/);
  }
  const json = await serve(`/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json`);
  expect(json.headers['access-control-allow-origin']).toBe('*');
  expect(json.headers['access-control-allow-credentials']).toBeUndefined();
});

test('a bid counts a response and no impression; its pixel counts exactly one impression, however often it fires', async () => {
  const info = JSON.parse(process.env.TEST_PLATFORM!);
  const res = await serve(bidPath(fx.zone.id, 777, 0));
  expect(res.body.status).toBe('SUCCESS');
  const imp = pathOf(res.body.tracking_pixels[0]);
  const decision = JSON.parse(Buffer.from(decodeURIComponent(new URL(res.body.tracking_pixels[0]).searchParams.get('t')!).split('.')[0], 'base64url').toString())[1];
  const kinds = async () => (await reportedEvents(info, acct.id)).filter((e) => e.decision === decision).map((e) => e.id.split(':')[1]).sort();
  await within(10_000, async () => (await kinds()).includes('response'), 100);
  // Nothing rendered it yet: another second brings no impression.
  await new Promise((r) => setTimeout(r, 1000));
  expect(await kinds()).toEqual(['response']);
  for (let i = 0; i < 3; i++) {
    const gif = await serve(imp);
    expect(gif.status).toBe(200);
    expect(gif.headers['content-type']).toBe('image/gif');
  }
  await within(10_000, async () => (await kinds()).includes('impression'), 100);
  await new Promise((r) => setTimeout(r, 500));
  expect(await kinds()).toEqual(['impression', 'response']);
});
