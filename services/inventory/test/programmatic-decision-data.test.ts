/**
 * The decision data of programmatic demand: stored attributes projected by inventory
 * (toDecisionEntity), then held by the serving path's store (dataFrom) and read through the accessors
 * the auction uses. No services: rows in, typed entities and lookups out.
 */
import type { Json } from '../../shared/catalog';
import { DECISION_KINDS, toDecisionEntity } from '../decision-data';
import { dataFrom } from '../../serving/decision-store';

const ACCOUNT = 7;
const OTHER = 8;

function project(kind: string, id: number, attributes: Record<string, Json>, account = ACCOUNT) {
  const e = toDecisionEntity({ id, account_id: account, kind, mode: 'live', attributes, archived_at: null });
  expect(e).toBeDefined();
  return e!;
}

test('the new kinds are sent to the serving path', () => {
  for (const kind of ['demand_source', 'demand_endpoint', 'pmp_deal', 'ortb_native_template', 'ortb_native_title_asset', 'ortb_native_image_asset', 'ortb_native_data_asset', 'ortb_native_ad']) {
    expect(DECISION_KINDS.has(kind)).toBe(true);
  }
});

test('standard zones carry their demand fields, money as exact decimal text', () => {
  const z = project('standard_zone', 1, {
    name: 'Z', dimensions: 'fixed', width: 300, height: 250, allow_demand_sources: true, bid_floor: 0.1, min_payout: 0.75, pmp_deals: [4, 5],
    rtb_placement_id: 'tag-1', iab_categories: ['IAB1'], auction_tie_break: 'SCORE', bid_timeout_ms: 400,
  }).zone!;
  expect(z).toMatchObject({
    allowDemand: true, bidFloor: '0.1', minPayout: '0.75', pmpDeals: [4, 5], rtbPlacementId: 'tag-1', iabCategories: ['IAB1'], auctionTieBreak: 'SCORE',
    privateAuction: false, bidTimeoutMs: 400, player: undefined,
  });
  // No floor (null or 0) is ''; a zone stored before these fields existed asks nothing and waits the default.
  const old = project('standard_zone', 2, { name: 'Old', dimensions: 'fixed', width: 300, height: 250, bid_floor: 0, min_payout: null }).zone!;
  expect(old).toMatchObject({ allowDemand: false, bidFloor: '', minPayout: '', pmpDeals: [], rtbPlacementId: '', bidTimeoutMs: 150, auctionTieBreak: 'RANDOM' });
  expect(project('email_zone', 3, { name: 'E', width: 600, height: 200 }).zone).toMatchObject({ allowDemand: false, bidTimeoutMs: 150 });
});

test("VAST zones ask demand when rtb_options is a non-empty object, with its player", () => {
  const rtb = {
    player_width: 640, player_height: 360, min_duration: 5, max_duration: 30, mime_types: ['video/mp4'], start_delay: -1, linearity: 'linear',
    allow_skip: true, skip_min: 30, skip_after: 10, min_bitrate: 300, max_bitrate: 1500, boxing_allowed: true, iab_categories: ['IAB2'],
    api_frameworks: ['vpaid2'], bundle_id: 'com.example.app', bid_floor: 2.5, min_payout: 1, private_auction: true, pmp_deals: [9], bid_timeout_ms: 250,
  };
  const z = project('vast_zone', 10, { name: 'V', publisher: 1, rtb_options: rtb }).zone!;
  expect(z).toMatchObject({ allowDemand: true, bidFloor: '2.5', minPayout: '1', pmpDeals: [9], iabCategories: ['IAB2'], privateAuction: true, bidTimeoutMs: 250 });
  expect(z.player).toEqual({
    width: 640, height: 360, minDuration: 5, maxDuration: 30, mimeTypes: ['video/mp4'], startDelay: -1, linearity: 'linear', allowSkip: true, skipMin: 30,
    skipAfter: 10, minBitrate: 300, maxBitrate: 1500, boxingAllowed: true, apiFrameworks: ['vpaid2'], bundleId: 'com.example.app',
  });
  for (const none of [null, {}]) {
    expect(project('vast_zone', 11, { name: 'V', publisher: 1, rtb_options: none }).zone).toMatchObject({ allowDemand: false, pmpDeals: [], player: undefined });
  }
  expect(project('vast_zone', 12, { name: 'V', publisher: 1, rtb_options: { pmp_deals: [3] } }).zone).toMatchObject({ allowDemand: true, bidTimeoutMs: 150 });
});

test('sources, endpoints, deals, templates, assets and native ads, held and looked up by account', () => {
  const entities = [
    project('demand_source', 20, { name: 'S', network: 'openrtb', status: 'active', spend_limit: 30, spend_limit_period: 'weekly', spend_limit_start: '2030-01-01T00:00:00Z', spend_limit_end: null }),
    project('demand_source', 21, { name: 'Off', network: 'pubmatic', status: 'inactive', spend_limit: null }),
    project('demand_endpoint', 31, {
      name: 'E2', demand_source: 21, default_parameters: { url: 'https://b.example/bid' }, supported_formats: ['video'], bid_floor: null, revenue_share: 100, markup_percent: 0,
      status: 'inactive',
    }),
    project('demand_endpoint', 30, {
      name: 'E1', demand_source: 20, default_parameters: { url: 'https://a.example/bid?x=1', seat: 'abc' }, supported_formats: ['display', 'native'], native_json_encoded: true,
      bid_floor: 0.75, revenue_share: 85.5, markup_percent: 15, allowed_sizes: ['300x250'], priority: 'standard', geo_target: 44, filter_type: 'whitelist',
      filtered_zones: [1], filtered_vast_zones: [10], status: 'active',
    }),
    project('demand_endpoint', 32, { name: 'Theirs', demand_source: 99, default_parameters: { url: 'https://c.example/' }, supported_formats: ['display'] }, OTHER),
    project('pmp_deal', 40, { name: 'Deal', bid_floor: 1.5, whitelist_seats: ['seat-1'], geo_target: null, audience_target: null }),
    project('ortb_native_template', 50, { name: 'Card', html_template: '<div>{{title}}</div>' }),
    project('ortb_native_image_asset', 52, { ortb_native_template: 50, name: 'Main', type: 3, width: 300, height: 250, min_width: null, min_height: null, mimes: ['image/png'] }),
    project('ortb_native_title_asset', 51, { ortb_native_template: 50, name: 'Title', text_length: 50 }),
    project('ortb_native_data_asset', 53, { ortb_native_template: 50, name: 'CTA', type: 12, text_length: 15 }),
    project('ortb_native_ad', 60, { zone: 1, ortb_native_template: 50, demand_endpoint: 30, context_type: 1, context_sub_type: 10, placement_type: 2 }),
    project('ortb_native_ad', 61, { zone: 1, ortb_native_template: 50, demand_endpoint: null, context_type: null, context_sub_type: null, placement_type: null }),
    project('ortb_native_ad', 62, { zone: 2, ortb_native_template: 50 }),
  ];
  const data = dataFrom(entities);

  expect(data.demandEndpoints(ACCOUNT).map((e) => e.id)).toEqual([30, 31]);
  const [first, second] = data.demandEndpoints(ACCOUNT);
  expect(first).toEqual({
    id: 30,
    account: ACCOUNT,
    endpoint: {
      source: 20, url: 'https://a.example/bid?x=1', parametersJson: JSON.stringify({ url: 'https://a.example/bid?x=1', seat: 'abc' }), supportedFormats: ['display', 'native'],
      nativeJsonEncoded: true, bidFloor: '0.75', revenueShare: '85.5', markupPercent: '15', allowedSizes: ['300x250'], priority: 'standard', geoTarget: 44,
      filterType: 'whitelist', filteredZones: [1], filteredVastZones: [10], active: true,
    },
  });
  expect(second.endpoint).toMatchObject({ bidFloor: '', revenueShare: '100', markupPercent: '0', priority: 'network', filterType: 'all', active: false });
  expect(data.demandEndpoints(OTHER).map((e) => e.id)).toEqual([32]);
  expect(data.demandEndpoints(999)).toEqual([]);

  expect(data.demandSource(ACCOUNT, 20)).toEqual({
    network: 'openrtb', active: true, spendLimit: '30', spendLimitPeriod: 'weekly', spendLimitStart: '2030-01-01T00:00:00Z', spendLimitEnd: '',
  });
  expect(data.demandSource(ACCOUNT, 21)).toMatchObject({ active: false, spendLimit: '' });
  expect(data.demandSource(OTHER, 20)).toBeUndefined();

  expect(data.pmpDeal(ACCOUNT, 40)).toEqual({ name: 'Deal', bidFloor: '1.5', whitelistSeats: ['seat-1'], geoTarget: 0 });
  expect(data.pmpDeal(OTHER, 40)).toBeUndefined();

  expect(data.ortbNativeTemplate(ACCOUNT, 50)).toEqual({ htmlTemplate: '<div>{{title}}</div>' });
  expect(data.ortbNativeAssets(ACCOUNT, 50).map((a) => [a.id, a.asset.asset])).toEqual([[51, 'title'], [52, 'image'], [53, 'data']]);
  expect(data.ortbNativeAssets(ACCOUNT, 50)[1].asset).toEqual({
    template: 50, asset: 'image', type: 3, textLength: 0, width: 300, height: 250, minWidth: 0, minHeight: 0, mimes: ['image/png'], name: 'Main',
  });
  expect(data.ortbNativeAssets(OTHER, 50)).toEqual([]);

  expect(data.ortbNativeAds(ACCOUNT, 1)).toEqual([
    { id: 60, ad: { zone: 1, template: 50, demandEndpoint: 30, contextType: 1, contextSubType: 10, placementType: 2 } },
    { id: 61, ad: { zone: 1, template: 50, demandEndpoint: 0, contextType: 0, contextSubType: 0, placementType: 0 } },
  ]);
  expect(data.ortbNativeAds(ACCOUNT, 2).map((a) => a.id)).toEqual([62]);
  expect(data.ortbNativeAds(OTHER, 1)).toEqual([]);
});

test('changes keep the lookups in step: an update replaces, a removal drops', () => {
  const endpoint = (id: number, url: string) =>
    project('demand_endpoint', id, { name: 'E', demand_source: 20, default_parameters: { url }, supported_formats: ['display'], status: 'active' });
  const data = dataFrom([endpoint(30, 'https://a.example/'), project('ortb_native_ad', 60, { zone: 1, ortb_native_template: 50 }), project('ortb_native_title_asset', 51, { ortb_native_template: 50, text_length: 5 })]);
  expect(data.demandEndpoints(ACCOUNT).map((e) => e.endpoint.url)).toEqual(['https://a.example/']);
  data.apply({ reset: false, upserts: [endpoint(30, 'https://b.example/'), endpoint(33, 'https://c.example/')], removals: [] });
  expect(data.demandEndpoints(ACCOUNT).map((e) => [e.id, e.endpoint.url])).toEqual([[30, 'https://b.example/'], [33, 'https://c.example/']]);
  // An asset moved to another template leaves the first one's list.
  data.apply({ reset: false, upserts: [project('ortb_native_title_asset', 51, { ortb_native_template: 55, text_length: 5 })], removals: [] });
  expect(data.ortbNativeAssets(ACCOUNT, 50)).toEqual([]);
  expect(data.ortbNativeAssets(ACCOUNT, 55).map((a) => a.id)).toEqual([51]);
  data.apply({
    reset: false,
    upserts: [],
    removals: [{ kind: 'demand_endpoint', id: 30, account: ACCOUNT }, { kind: 'ortb_native_ad', id: 60, account: ACCOUNT }],
  });
  expect(data.demandEndpoints(ACCOUNT).map((e) => e.id)).toEqual([33]);
  expect(data.ortbNativeAds(ACCOUNT, 1)).toEqual([]);
  data.apply({ reset: true, upserts: [], removals: [] });
  expect(data.demandEndpoints(ACCOUNT)).toEqual([]);
});

test('amounts too small for plain notation are still written out in decimals', () => {
  expect(project('pmp_deal', 41, { bid_floor: 1e-7 }).pmpDeal!.bidFloor).toBe('0.0000001');
  expect(project('pmp_deal', 42, { bid_floor: 1.2345678e-7 }).pmpDeal!.bidFloor).toBe('0.00000012345678');
  expect(project('demand_source', 43, { network: 'openrtb', spend_limit: 1e21 }).demandSource!.spendLimit).toBe('1000000000000000000000');
});
