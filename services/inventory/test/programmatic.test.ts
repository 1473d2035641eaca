/**
 * Programmatic demand inventory (demand sources and endpoints, PMP deals, OpenRTB native templates,
 * their assets and the native ads of standard zones): each collection's shared behaviour, the
 * reference shapes, and the rules between resources (deals named by zones, what a deletion takes along,
 * a VAST zone's rtb_options, a standard zone's deals and bid budget).
 */
import { expectError, newAccount, paramFor, type Client } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';

async function made(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}
const source = async (api: Client) => (await made(api, '/v2/demand-sources', { name: 'Exchange', network: 'openrtb' })).id as number;
const endpointBody = (sourceId: number, n = 0) => ({
  name: `US West ${n}`,
  demand_source: sourceId,
  default_parameters: { url: `https://rtb.example.com/bid?n=${n}`, seat: 'abc' },
  supported_formats: ['display', 'native'],
});
const endpoint = async (api: Client, sourceId?: number) => (await made(api, '/v2/demand-endpoints', endpointBody(sourceId ?? (await source(api))))).id as number;
const template = async (api: Client) => (await made(api, '/v2/templates/ortb-native', { name: 'Card', html_template: '<div>{{title}}</div>' })).id as number;
const standardZone = async (api: Client, extra: Record<string, unknown> = {}) =>
  (await made(api, '/v2/zones/standard', { name: 'Leaderboard', width: 728, height: 90, ...extra })).id as number;
const vastZone = async (api: Client, extra: Record<string, unknown> = {}) => {
  const publisher = (await made(api, '/v2/publishers', { name: 'Video publisher' })).id;
  return (await made(api, '/v2/vast-zones', { name: 'Pre-roll', publisher, ...extra })).id as number;
};
const deal = async (api: Client) => (await made(api, '/v2/pmp-deals', { name: 'Deal', bid_floor: 1.5 })).id as number;

describeCrud('demand sources', {
  version: 'v2',
  path: '/v2/demand-sources',
  object: 'demand_source',
  create: (_api, n) => ({ name: `Partner ${n}`, network: 'openrtb', spend_limit: 30 + n, spend_limit_period: 'weekly', spend_limit_start: '2030-09-01T12:00:00-08:00' }),
  update: { name: 'Renamed partner', status: 'inactive', spend_limit: 45.5 },
  invalid: [
    { body: { network: 'adsense' }, field: 'network' },
    { body: { status: 'paused' }, field: 'status' },
    { body: { spend_limit: -1 }, field: 'spend_limit' },
    { body: { spend_limit_period: 'daily' }, field: 'spend_limit_period' },
    // A limit needs its period.
    { body: { spend_limit_period: null }, field: 'spend_limit_period' },
    { body: { spend_limit_start: 'next week' }, field: 'spend_limit_start' },
    { body: { spend_limit_start: '2030-02-30T00:00:00Z' }, field: 'spend_limit_start' },
    { body: { spend_limit_end: '2030-08-01T00:00:00Z' }, field: 'spend_limit_end' },
  ],
  required: ['name', 'network'],
});

describeCrud('demand endpoints', {
  version: 'v2',
  path: '/v2/demand-endpoints',
  object: 'demand_endpoint',
  setup: async (api) => ({ source: await source(api), zone: await standardZone(api), vastZone: await vastZone(api) }),
  create: (_api, n, s) => ({ ...endpointBody(s.source, n), filter_type: 'whitelist', filtered_zones: [s.zone], filtered_vast_zones: [s.vastZone] }),
  update: { bid_floor: 0.75, revenue_share: 85, markup_percent: 15, allowed_sizes: ['300x250', '728x90'], priority: 'standard', status: 'inactive' },
  invalid: [
    { body: { demand_source: 999999999 }, field: 'demand_source' },
    { body: { default_parameters: { seat: 'abc' } }, field: 'default_parameters.url' },
    { body: { default_parameters: { url: 'ftp://rtb.example.com/' } }, field: 'default_parameters.url' },
    { body: { default_parameters: { url: '/bid' } }, field: 'default_parameters.url' },
    { body: { default_parameters: 'https://rtb.example.com/' }, field: 'default_parameters' },
    { body: { supported_formats: [] }, field: 'supported_formats' },
    { body: { supported_formats: ['audio'] }, field: 'supported_formats' },
    { body: { supported_formats: ['video', 'video'] }, field: 'supported_formats' },
    { body: { bid_floor: -0.01 }, field: 'bid_floor' },
    { body: { revenue_share: 100.5 }, field: 'revenue_share' },
    { body: { markup_percent: -5 }, field: 'markup_percent' },
    { body: { allowed_sizes: ['300by250'] }, field: 'allowed_sizes' },
    { body: { priority: 'top' }, field: 'priority' },
    { body: { geo_target: 999999999 }, field: 'geo_target' },
    { body: { filter_type: 'some' }, field: 'filter_type' },
    { body: { filtered_zones: [999999999] }, field: 'filtered_zones' },
    { body: { filtered_vast_zones: [999999999] }, field: 'filtered_vast_zones' },
    { body: { native_json_encoded: 'yes' }, field: 'native_json_encoded' },
    { body: { status: 'paused' }, field: 'status' },
  ],
  required: ['name', 'demand_source', 'default_parameters', 'supported_formats'],
});

describeCrud('PMP deals', {
  version: 'v2',
  path: '/v2/pmp-deals',
  object: 'pmp_deal',
  create: (_api, n) => ({ name: `Deal ${n}`, bid_floor: 1.5 + n, whitelist_seats: ['1233-abc', 'abc-1234'] }),
  update: { bid_floor: 2.25, whitelist_seats: ['seat-9'] },
  invalid: [
    { body: { bid_floor: -1 }, field: 'bid_floor' },
    { body: { whitelist_seats: [''] }, field: 'whitelist_seats' },
    { body: { whitelist_seats: 'seat' }, field: 'whitelist_seats' },
    { body: { geo_target: 999999999 }, field: 'geo_target' },
    { body: { audience_target: 5 }, field: 'audience_target' },
  ],
  required: [],
});

describeCrud('ORTB native templates', {
  version: 'v2',
  path: '/v2/templates/ortb-native',
  object: 'ortb_native_template',
  create: (_api, n) => ({ name: `Card ${n}`, html_template: '<div class="ad"><h2>{{title}}</h2><img src="{{image}}"></div>' }),
  update: { name: 'Tile', html_template: '<section>{{title}}</section>' },
  invalid: [
    { body: { html_template: '' }, field: 'html_template' },
    { body: { html_template: 5 }, field: 'html_template' },
    { body: { name: '' }, field: 'name' },
  ],
  required: ['name', 'html_template'],
});

const templateSetup = async (api: Client) => ({ ortb_native_template_id: await template(api) });

describeCrud('ORTB native title assets', {
  version: 'v2',
  path: '/v2/templates/ortb-native/:ortb_native_template_id/assets/title',
  object: 'ortb_native_title_asset',
  setup: templateSetup,
  create: (_api, n) => ({ name: `Headline ${n}`, text_length: 50 + n }),
  update: { text_length: 90 },
  invalid: [
    { body: { text_length: 0 }, field: 'text_length' },
    { body: { text_length: 'long' }, field: 'text_length' },
    { body: { type: 1 }, field: 'type' },
  ],
  required: ['text_length'],
});

describeCrud('ORTB native image assets', {
  version: 'v2',
  path: '/v2/templates/ortb-native/:ortb_native_template_id/assets/image',
  object: 'ortb_native_image_asset',
  setup: templateSetup,
  create: (_api, n) => ({ name: `Main image ${n}`, type: 3, width: 300, height: 250, mimes: ['image/jpeg', 'image/png'] }),
  update: { min_width: 150, min_height: 125 },
  invalid: [
    { body: { type: 2 }, field: 'type' },
    { body: { width: 0 }, field: 'width' },
    { body: { mimes: ['text/html'] }, field: 'mimes' },
  ],
  required: ['type'],
});

describeCrud('ORTB native data assets', {
  version: 'v2',
  path: '/v2/templates/ortb-native/:ortb_native_template_id/assets/data',
  object: 'ortb_native_data_asset',
  setup: templateSetup,
  create: (_api, n) => ({ name: `Sponsor ${n}`, type: 1 + n, text_length: 25 }),
  update: { type: 12 },
  invalid: [
    { body: { type: 0 }, field: 'type' },
    { body: { type: 13 }, field: 'type' },
    { body: { text_length: -1 }, field: 'text_length' },
  ],
  required: ['type'],
});

describeCrud('ORTB native ads of a standard zone', {
  version: 'v2',
  path: '/v2/zones/standard/:zone_id/ortb-native-ads',
  object: 'ortb_native_ad',
  setup: async (api) => ({ zone_id: await standardZone(api), template: await template(api), endpoint: await endpoint(api) }),
  create: (_api, n, s) => ({ ortb_native_template: s.template, demand_endpoint: n === 0 ? s.endpoint : null, context_type: 1, context_sub_type: 10, placement_type: 1 + (n % 4) }),
  update: { context_type: 2, context_sub_type: 20 },
  invalid: [
    { body: { ortb_native_template: 999999999 }, field: 'ortb_native_template' },
    { body: { demand_endpoint: 999999999 }, field: 'demand_endpoint' },
    { body: { context_type: 4 }, field: 'context_type' },
    { body: { context_sub_type: 16 }, field: 'context_sub_type' },
    { body: { placement_type: 5 }, field: 'placement_type' },
  ],
  required: ['ortb_native_template'],
});

describe('programmatic rules and shapes', () => {
  let api: Client;
  beforeAll(async () => {
    api = (await newAccount()).test;
  });

  test('every collection answers in the reference shape', async () => {
    const check = async (path: string, ref: string, body: Record<string, unknown>, update: Record<string, unknown>) => {
      const item = await made(api, path, body);
      expectReferenceShape(ref, 'post', item);
      expectReferenceShape(`${ref}/{id}`, 'get', (await api.get(`${path}/${item.id}`)).body);
      expectReferenceShape(ref, 'get', (await api.get(`${path}?limit=5`)).body);
      const upd = await api.put(`${path}/${item.id}`, update);
      expect(upd.status).toBe(200);
      expectReferenceShape(`${ref}/{id}`, 'put', upd.body);
      return item;
    };
    const src = await check('/v2/demand-sources', '/v2/demand-sources', { name: 'Partner', network: 'pubmatic', spend_limit: 30, spend_limit_period: 'monthly' }, { status: 'inactive' });
    await check('/v2/demand-endpoints', '/v2/demand-endpoints', endpointBody(src.id), { bid_floor: 0.75 });
    await check('/v2/pmp-deals', '/v2/pmp-deals', { name: 'Deal', bid_floor: 1.5, whitelist_seats: ['1233-abc'] }, { name: 'Renamed' });
    const t = await check('/v2/templates/ortb-native', '/v2/templates/ortb-native', { name: 'Card', html_template: '<div>{{title}}</div>' }, { name: 'Tile' });
    const assets = `/v2/templates/ortb-native/${t.id}/assets`;
    const assetsRef = '/v2/templates/ortb-native/{ortb_native_template_id}/assets';
    await check(`${assets}/title`, `${assetsRef}/title`, { name: 'Title', text_length: 50 }, { text_length: 60 });
    await check(`${assets}/image`, `${assetsRef}/image`, { name: 'Icon', type: 1, width: 80, height: 80, mimes: ['image/png'] }, { type: 3 });
    await check(`${assets}/data`, `${assetsRef}/data`, { name: 'CTA', type: 12, text_length: 15 }, { text_length: 20 });
    const zone = await standardZone(api);
    await check(`/v2/zones/standard/${zone}/ortb-native-ads`, '/v2/zones/standard/{zone_id}/ortb-native-ads', { ortb_native_template: t.id, context_type: 1 }, { placement_type: 2 });
  });

  test('defaults follow the reference', async () => {
    const src = await made(api, '/v2/demand-sources', { name: 'Defaults', network: 'smaato' });
    expect(src).toMatchObject({ status: 'active', spend_limit: null, spend_limit_period: null, spend_limit_start: null, spend_limit_end: null });
    const ep = await made(api, '/v2/demand-endpoints', endpointBody(src.id));
    expect(ep).toMatchObject({
      native_json_encoded: false, bid_floor: 0, revenue_share: 100, markup_percent: 0, allowed_sizes: [], priority: 'network', geo_target: null,
      filter_type: 'all', filtered_zones: [], filtered_vast_zones: [], status: 'active',
    });
    const d = await made(api, '/v2/pmp-deals', {});
    expect(d).toMatchObject({ name: null, bid_floor: null, whitelist_seats: [], geo_target: null, audience_target: null, standard_zones: [], vast_zones: [] });
    // The reference's "no geo target" for a deal is 0: taken, and kept as null; a negative id is not.
    expect((await made(api, '/v2/pmp-deals', { geo_target: 0 })).geo_target).toBeNull();
    expect((await api.put(`/v2/pmp-deals/${d.id}`, { geo_target: 0 })).body.geo_target).toBeNull();
    expect(paramFor(expectError(await api.post('/v2/pmp-deals', { geo_target: -1 }), 400, 'v2'), 'geo_target').message).toMatch(/positive id/);
    // A source's network is what it is: the reference's update body has none.
    const res = await api.put(`/v2/demand-sources/${src.id}`, { network: 'openrtb' });
    expect(paramFor(expectError(res, 400, 'v2'), 'network').type).toBe('read_only');
  });

  test('errors say what is wrong with the field', async () => {
    const src = await source(api);
    const noUrl = expectError(await api.post('/v2/demand-endpoints', { ...endpointBody(src), default_parameters: { seat: 'x' } }), 400, 'v2');
    expect(paramFor(noUrl, 'default_parameters.url').message).toMatch(/default_parameters\.url/);
    const audience = expectError(await api.post('/v2/pmp-deals', { audience_target: 3 }), 400, 'v2');
    expect(paramFor(audience, 'audience_target').message).toMatch(/User DB/);
    const period = expectError(await api.post('/v2/demand-sources', { name: 'S', network: 'openrtb', spend_limit: 10 }), 400, 'v2');
    expect(paramFor(period, 'spend_limit_period').type).toBe('missing_field');
    const order = expectError(
      await api.post('/v2/demand-sources', { name: 'S', network: 'openrtb', spend_limit_start: '2030-01-02T00:00:00Z', spend_limit_end: '2030-01-01T00:00:00+01:00' }),
      400,
      'v2',
    );
    expect(paramFor(order, 'spend_limit_end').message).toMatch(/before/);
    // An update is checked against what is stored.
    const s = await made(api, '/v2/demand-sources', { name: 'S', network: 'openrtb', spend_limit_start: '2030-01-02T00:00:00Z' });
    expectError(await api.put(`/v2/demand-sources/${s.id}`, { spend_limit_end: '2030-01-01T00:00:00Z' }), 400, 'v2');
    expect((await api.put(`/v2/demand-sources/${s.id}`, { spend_limit_end: '2030-02-01T00:00:00Z' })).status).toBe(200);
  });

  test('endpoints may only filter zones of the caller', async () => {
    const other = (await newAccount()).test;
    const theirs = await standardZone(other);
    const theirVast = await vastZone(other);
    const src = await source(api);
    const a = expectError(await api.post('/v2/demand-endpoints', { ...endpointBody(src), filtered_zones: [theirs] }), 400, 'v2');
    expect(paramFor(a, 'filtered_zones').message).toContain(String(theirs));
    const b = expectError(await api.post('/v2/demand-endpoints', { ...endpointBody(src), filtered_vast_zones: [theirVast] }), 400, 'v2');
    paramFor(b, 'filtered_vast_zones');
    // A VAST zone is not a standard zone, and the other way round.
    const mine = await vastZone(api);
    paramFor(expectError(await api.post('/v2/demand-endpoints', { ...endpointBody(src), filtered_zones: [mine] }), 400, 'v2'), 'filtered_zones');
    // Nor is another account's source theirs to use.
    paramFor(expectError(await api.post('/v2/demand-endpoints', endpointBody(await source(other))), 400, 'v2'), 'demand_source');
  });

  test("deleting a source deletes its endpoints, and an endpoint's deletion takes its native ads along", async () => {
    const src = await source(api);
    const ep = await endpoint(api, src);
    const zone = await standardZone(api);
    const t = await template(api);
    const ads = `/v2/zones/standard/${zone}/ortb-native-ads`;
    const forEndpoint = await made(api, ads, { ortb_native_template: t, demand_endpoint: ep });
    const forAll = await made(api, ads, { ortb_native_template: t });
    expect((await api.del(`/v2/demand-sources/${src}`)).status).toBe(200);
    expectError(await api.get(`/v2/demand-endpoints/${ep}`), 404, 'v2');
    expectError(await api.get(`${ads}/${forEndpoint.id}`), 404, 'v2');
    expect((await api.get(`${ads}/${forAll.id}`)).body).toMatchObject({ demand_endpoint: null });
  });

  test("a template's assets and ads live under it; deleting it deletes them", async () => {
    const t = await template(api);
    const other = await template(api);
    const title = await made(api, `/v2/templates/ortb-native/${t}/assets/title`, { text_length: 40 });
    expect(title).toMatchObject({ object: 'ortb_native_title_asset', self: `/v2/templates/ortb-native/${t}/assets/title/${title.id}` });
    expect(title).not.toHaveProperty('ortb_native_template');
    // Found under its own template only, and not as another kind of asset.
    expectError(await api.get(`/v2/templates/ortb-native/${other}/assets/title/${title.id}`), 404, 'v2');
    expectError(await api.get(`/v2/templates/ortb-native/${t}/assets/data/${title.id}`), 404, 'v2');
    expect((await api.get(`/v2/templates/ortb-native/${other}/assets/title`)).body.data).toEqual([]);
    expectError(await api.get('/v2/templates/ortb-native/999999999/assets/title'), 404, 'v2');
    const zone = await standardZone(api);
    const ad = await made(api, `/v2/zones/standard/${zone}/ortb-native-ads`, { ortb_native_template: t });
    expect(ad.self).toBe(`/v2/zones/standard/${zone}/ortb-native-ads/${ad.id}`);
    expect((await api.del(`/v2/templates/ortb-native/${t}`)).status).toBe(200);
    expectError(await api.get(`/v2/templates/ortb-native/${t}/assets/title/${title.id}`), 404, 'v2');
    expectError(await api.get(`/v2/zones/standard/${zone}/ortb-native-ads/${ad.id}`), 404, 'v2');
  });

  test("a zone's native ads are found under that zone only and go with it", async () => {
    const t = await template(api);
    const zone = await standardZone(api);
    const otherZone = await standardZone(api);
    const ad = await made(api, `/v2/zones/standard/${zone}/ortb-native-ads`, { ortb_native_template: t });
    expectError(await api.get(`/v2/zones/standard/${otherZone}/ortb-native-ads/${ad.id}`), 404, 'v2');
    expect((await api.get(`/v2/zones/standard/${zone}/ortb-native-ads`)).body.data.map((a: any) => a.id)).toEqual([ad.id]);
    expect((await api.del(`/v2/zones/standard/${zone}`)).status).toBe(200);
    expectError(await api.get(`/v2/zones/standard/${zone}/ortb-native-ads/${ad.id}`), 404, 'v2');
  });

  test('standard zones: pmp_deals of the caller, rtb_placement_id, and the bid budget', async () => {
    const d = await deal(api);
    const zone = await made(api, '/v2/zones/standard', { name: 'Z', width: 300, height: 250 });
    expect(zone).toMatchObject({ pmp_deals: [], rtb_placement_id: null, bid_timeout_ms: 150 });
    const upd = await api.put(`/v2/zones/standard/${zone.id}`, { allow_demand_sources: true, pmp_deals: [d], rtb_placement_id: 'tag-123', bid_timeout_ms: 400 });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ allow_demand_sources: true, pmp_deals: [d], rtb_placement_id: 'tag-123', bid_timeout_ms: 400 });
    const theirs = await deal((await newAccount()).test);
    for (const [body, field] of [
      [{ pmp_deals: [999999999] }, 'pmp_deals'],
      [{ pmp_deals: [theirs] }, 'pmp_deals'],
      [{ pmp_deals: ['1'] }, 'pmp_deals'],
      [{ bid_timeout_ms: 5 }, 'bid_timeout_ms'],
      [{ bid_timeout_ms: 2001 }, 'bid_timeout_ms'],
      [{ rtb_placement_id: 'x'.repeat(256) }, 'rtb_placement_id'],
    ] as const) {
      paramFor(expectError(await api.put(`/v2/zones/standard/${zone.id}`, body), 400, 'v2'), field);
      paramFor(expectError(await api.post('/v2/zones/standard', { name: 'Z', width: 300, height: 250, ...body }), 400, 'v2'), field);
    }
    expect((await api.get(`/v2/zones/standard/${zone.id}`)).body).toEqual(upd.body);
  });

  test('VAST zones take the reference rtb_options, checked member by member', async () => {
    const d = await deal(api);
    const rtb = {
      player_width: 640, player_height: 360, min_duration: 5, max_duration: 30, mime_types: ['video/mp4', 'video/x-flv'], start_delay: 0, linearity: 'linear',
      allow_skip: true, skip_min: 30, skip_after: 10, min_bitrate: 300, max_bitrate: 1500, boxing_allowed: true, iab_categories: ['IAB2', 'IAB7'],
      api_frameworks: ['vpaid1', 'vpaid2'], bundle_id: 'com.example.myapp', bid_floor: 0.5, min_payout: 0.75, private_auction: true, pmp_deals: [d], bid_timeout_ms: 300,
    };
    const id = await vastZone(api, { rtb_options: rtb });
    const zone = (await api.get(`/v2/vast-zones/${id}`)).body;
    expect(zone.rtb_options).toEqual(rtb);
    expectReferenceShape('/v2/vast-zones/{id}', 'get', zone);
    expect((await api.put(`/v2/vast-zones/${id}`, { rtb_options: {} })).body.rtb_options).toEqual({});
    expect((await api.put(`/v2/vast-zones/${id}`, { rtb_options: null })).body.rtb_options).toBeNull();
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ player_size: 640 }, /player_size/],
      [{ min_duration: 30, max_duration: 5 }, /min_duration/],
      [{ min_bitrate: 2000, max_bitrate: 1000 }, /min_bitrate/],
      [{ player_width: 0 }, /player_width/],
      [{ start_delay: -3 }, /start_delay/],
      [{ linearity: 'sometimes' }, /linearity/],
      [{ api_frameworks: ['omid'] }, /api_frameworks/],
      [{ mime_types: ['text/html'] }, /mime_types/],
      [{ bid_floor: -1 }, /bid_floor/],
      [{ min_payout: -1 }, /min_payout/],
      [{ allow_skip: 'yes' }, /allow_skip/],
      [{ pmp_deals: [999999999] }, /pmp_deals/],
      [{ bid_timeout_ms: 5 }, /bid_timeout_ms/],
    ];
    for (const [options, says] of refused) {
      const err = expectError(await api.put(`/v2/vast-zones/${id}`, { rtb_options: options }), 400, 'v2');
      expect(paramFor(err, 'rtb_options').message).toMatch(says);
    }
    expectError(await api.put(`/v2/vast-zones/${id}`, { rtb_options: [] }), 400, 'v2');
  });

  test('a PMP deal shows the standard and VAST zones that name it', async () => {
    const d = await deal(api);
    const unused = await deal(api);
    const z1 = await standardZone(api, { pmp_deals: [d] });
    const z2 = await standardZone(api, { pmp_deals: [unused, d] });
    const v = await vastZone(api, { rtb_options: { pmp_deals: [d] } });
    await standardZone(api);
    const got = (await api.get(`/v2/pmp-deals/${d}`)).body;
    expect(got).toMatchObject({ standard_zones: [z1, z2], vast_zones: [v] });
    expectReferenceShape('/v2/pmp-deals/{id}', 'get', got);
    const listed = (await api.get(`/v2/pmp-deals?id=${d},${unused}`)).body.data;
    expect(listed.find((x: any) => x.id === unused)).toMatchObject({ standard_zones: [z2], vast_zones: [] });
    // Computed: given back, they are ignored.
    expect((await api.put(`/v2/pmp-deals/${d}`, { standard_zones: [], name: 'Kept' })).body).toMatchObject({ name: 'Kept', standard_zones: [z1, z2] });
    // An archived zone no longer offers the deal.
    expect((await api.get(`/v2/zones/standard/${z1}/archive`)).status).toBe(200);
    expect((await api.get(`/v2/pmp-deals/${d}`)).body.standard_zones).toEqual([z2]);
  });

  test('a deleted deal or zone leaves the lists that named it', async () => {
    const d = await deal(api);
    const kept = await deal(api);
    const z = await standardZone(api, { pmp_deals: [d, kept] });
    const archived = await standardZone(api, { pmp_deals: [d] });
    const v = await vastZone(api, { rtb_options: { pmp_deals: [kept, d], bid_floor: 1 } });
    expect((await api.get(`/v2/zones/standard/${archived}/archive`)).status).toBe(200);
    expect((await api.del(`/v2/pmp-deals/${d}`)).status).toBe(200);
    expect((await api.get(`/v2/zones/standard/${z}`)).body.pmp_deals).toEqual([kept]);
    expect((await api.get(`/v2/vast-zones/${v}`)).body.rtb_options).toEqual({ pmp_deals: [kept], bid_floor: 1 });
    expect((await api.get(`/v2/zones/standard/archived/${archived}`)).body.pmp_deals).toEqual([]);
    // What was read can be written back.
    expect((await api.put(`/v2/zones/standard/${z}`, { pmp_deals: (await api.get(`/v2/zones/standard/${z}`)).body.pmp_deals })).status).toBe(200);

    const zone = await standardZone(api);
    const otherZone = await standardZone(api);
    const video = await vastZone(api);
    const ep = await made(api, '/v2/demand-endpoints', { ...endpointBody(await source(api)), filter_type: 'blacklist', filtered_zones: [zone, otherZone], filtered_vast_zones: [video] });
    expect((await api.del(`/v2/zones/standard/${zone}`)).status).toBe(200);
    expect((await api.del(`/v2/vast-zones/${video}`)).status).toBe(200);
    expect((await api.get(`/v2/demand-endpoints/${ep.id}`)).body).toMatchObject({ filtered_zones: [otherZone], filtered_vast_zones: [] });
  });

  test('the OpenAPI document lists the new collections', async () => {
    const doc = (await api.get('/v2/openapi.json')).body;
    for (const p of [
      '/v2/demand-sources', '/v2/demand-sources/{id}', '/v2/demand-endpoints', '/v2/demand-endpoints/{id}', '/v2/pmp-deals', '/v2/pmp-deals/{id}',
      '/v2/templates/ortb-native', '/v2/templates/ortb-native/{id}', '/v2/zones/standard/{zone_id}/ortb-native-ads', '/v2/zones/standard/{zone_id}/ortb-native-ads/{id}',
      ...['title', 'image', 'data'].flatMap((a) => [`/v2/templates/ortb-native/{ortb_native_template_id}/assets/${a}`, `/v2/templates/ortb-native/{ortb_native_template_id}/assets/${a}/{id}`]),
    ]) {
      expect({ path: p, documented: p in doc.paths }).toEqual({ path: p, documented: true });
    }
    const zone = JSON.stringify(doc.components.schemas.standard_zone ?? doc.components.schemas.standard_zone_create);
    expect(zone).toMatch(/extension/);
  });
});
