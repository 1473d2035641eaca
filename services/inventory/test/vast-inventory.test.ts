/**
 * The VAST 2/3 inventory of the reference (zones, campaigns, assignments, placements, schedules,
 * channels, media, companions, tracking): each collection's shared behaviour, its reference shapes
 * and the rules particular to video.
 */
import { expectError, newAccount, paramFor, type Client } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';

async function made(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}
const publisher = async (api: Client) => (await made(api, '/v2/publishers', { name: 'Video publisher' })).id as number;
const advertiser = async (api: Client) => (await made(api, '/v2/advertisers', { name: 'Video advertiser' })).id as number;
const adItem = async (api: Client) => (await made(api, '/v2/vast-ad-items', { name: 'Spot', duration: '00:00:15' })).id as number;
const vastZone = async (api: Client) => (await made(api, '/v2/vast-zones', { name: 'Pre-roll', publisher: await publisher(api) })).id as number;
const vastSchedule = async (api: Client) => (await made(api, '/v2/vast-schedules', { start_date: '2030-01-01 00:00:00' })).id as number;
const vastChannel = async (api: Client) => (await made(api, '/v2/vast-channels', { name: 'Sports' })).id as number;

/** The reference types a VAST placement's priority as an integer while naming the tiers: the spec's tier names win. */
const PRIORITY_AS_NAMED = { ignore: ['priority'] };

describeCrud('VAST zones', {
  version: 'v2',
  path: '/v2/vast-zones',
  object: 'vast_zone',
  setup: async (api) => ({ publisher: await publisher(api) }),
  create: (_api, n, s) => ({ name: `Pre-roll ${n}`, publisher: s.publisher, serve_priority_order: 'auction' }),
  update: { name: 'Mid-roll', vast_version: '4.2' },
  invalid: [
    { body: { name: 'Z', publisher: 999999999 }, field: 'publisher' },
    { body: { name: 'Z', serve_priority_order: 'random' }, field: 'serve_priority_order' },
    { body: { name: 'Z', vast_version: '5.0' }, field: 'vast_version' },
    { body: { name: 'Z', rtb_options: { bid_floor: -2 } }, field: 'rtb_options' },
    { body: { name: 'Z', rtb_options: { no_such_option: true } }, field: 'rtb_options' },
  ],
  required: ['name', 'publisher'],
});

describeCrud('VAST campaigns', {
  version: 'v2',
  path: '/v2/vast-campaigns',
  object: 'vast_campaign',
  setup: async (api) => ({ advertiser: await advertiser(api) }),
  create: (_api, n, s) => ({ name: `Launch ${n}`, advertiser: s.advertiser, booking_number: `PO-${n}` }),
  update: { name: 'Relaunch' },
  invalid: [
    { body: { name: 'C', advertiser: 999999999 }, field: 'advertiser' },
    { body: { name: 'C', contract: 5 }, field: 'contract' },
    { body: { name: 'C', targeting_source: 'AD_ITEM' }, field: 'targeting_source' },
  ],
  required: ['name', 'advertiser'],
});

describeCrud('VAST campaign assignments', {
  version: 'v2',
  path: '/v2/vast-campaign-assignments',
  object: 'vast_campaign_assignment',
  setup: async (api) => ({ campaign: (await made(api, '/v2/vast-campaigns', { name: 'C', advertiser: await advertiser(api) })).id }),
  create: async (api, _n, s) => ({ campaign: s.campaign, ad_item: await adItem(api), weight: 3 }),
  update: { weight: 7, active: false },
  invalid: [
    { body: { campaign: 999999999 }, field: 'campaign' },
    { body: { weight: 0 }, field: 'weight' },
    { body: { geo_target: 4 }, field: 'geo_target' },
    { body: { audience_target: 4 }, field: 'audience_target' },
  ],
  required: ['campaign', 'ad_item'],
});

describeCrud('VAST schedules', {
  version: 'v2',
  path: '/v2/vast-schedules',
  object: 'vast_schedule',
  create: (_api, n) => ({ start_date: '2030-01-01 00:00:00', end_date: `2030-0${n + 1}-28 23:59:59`, quota_lifetime: 1000, quota_type: 'views', weight: 2 }),
  update: { day_cap_views_limit: 50, day_cap_type: 'views' },
  derived: ['status', 'pacing'],
  invalid: [
    { body: { start_date: 'soon' }, field: 'start_date' },
    { body: { quota_type: 'completes' }, field: 'quota_type' },
    { body: { day_cap_views_limit: 10 }, field: 'day_cap_type' },
    { body: { day_cap_views_limit: 10, day_cap_clicks_limit: 2, day_cap_type: 'views' }, field: 'day_cap_clicks_limit' },
    { body: { geo_target: 999999999 }, field: 'geo_target' },
  ],
  required: [],
});

describeCrud('VAST channels', {
  version: 'v2',
  path: '/v2/vast-channels',
  object: 'vast_channel',
  create: (_api, n) => ({ name: `Channel ${n}`, priority: 'network' }),
  update: { priority: 'house' },
  invalid: [{ body: { name: 'C', priority: 'urgent' }, field: 'priority' }],
  required: ['name'],
});

describeCrud('VAST channel zone assignments', {
  version: 'v2',
  path: '/v2/vast-channel-zone-assignments',
  object: 'vast_channel_zone_assignment',
  operations: ['list', 'create', 'get', 'delete'],
  setup: async (api) => ({ channel: await vastChannel(api) }),
  create: async (api, _n, s) => ({ vast_channel: s.channel, vast_zone: { id: await vastZone(api) } }),
  update: {},
  invalid: [
    { body: { vast_zone: { id: 999999999 } }, field: 'vast_zone' },
    { body: { vast_zone: 5 }, field: 'vast_zone' },
  ],
  required: ['vast_channel', 'vast_zone'],
});

describeCrud('VAST placements', {
  version: 'v2',
  path: '/v2/vast-placements',
  object: 'vast_placement',
  setup: async (api) => ({ zone: await vastZone(api), schedule: await vastSchedule(api) }),
  create: async (api, _n, s) => ({ advertisement: { id: await adItem(api), type: 'vast_ad_item' }, zone: s.zone, schedule: s.schedule, cost: { cpm: 12.5 } }),
  update: { priority: 'sponsorship', max_frequency: 3, max_frequency_period: 1, max_frequency_type: 'complete' },
  invalid: [
    { body: { advertisement: { id: 1, type: 'image_ad_item' } }, field: 'advertisement' },
    { body: { schedule: 999999999 }, field: 'schedule' },
    { body: { max_frequency_type: 'pause' }, field: 'max_frequency_type' },
    { body: { user_db_user_target: 3 }, field: 'user_db_user_target' },
  ],
  required: ['advertisement', 'schedule'],
});

describeCrud('VAST linear media', {
  version: 'v2',
  path: '/v2/vast-media/linear',
  object: 'vast_media_linear',
  setup: async (api) => ({ adItem: await adItem(api) }),
  create: (_api, n, s) => ({ ad_item: s.adItem, type: 'video/mp4', width: 640 * (n + 1), height: 360 * (n + 1), creative_url: `https://cdn.example.com/spot-${n}.mp4`, min_bitrate: 300, max_bitrate: 1500 }),
  update: { delivery: 'streaming', codec: 'avc1.42E01E' },
  invalid: [
    { body: { type: 'text/html' }, field: 'type' },
    { body: { delivery: 'carrier-pigeon' }, field: 'delivery' },
    { body: { ad_item: 999999999 }, field: 'ad_item' },
  ],
  required: ['ad_item', 'type', 'width', 'height'],
});

describeCrud('VAST non-linear media', {
  version: 'v2',
  path: '/v2/vast-media/non-linear',
  object: 'vast_media_non_linear',
  setup: async (api) => ({ adItem: await adItem(api) }),
  create: (_api, n, s) => ({ ad_item: s.adItem, creative: { type: 'image_url', source: `https://cdn.example.com/overlay-${n}.png` }, width: 480, height: 70, min_suggested_duration: 10 }),
  update: { expanded_width: 640, expanded_height: 360 },
  invalid: [
    { body: { creative: { type: 'gif', source: 'x' } }, field: 'creative' },
    { body: { width: 0 }, field: 'width' },
  ],
  required: ['ad_item', 'creative', 'width', 'height'],
});

describeCrud('VAST companions', {
  version: 'v2',
  path: '/v2/vast-companions',
  object: 'vast_companion',
  setup: async (api) => ({ adItem: await adItem(api) }),
  create: (_api, n, s) => ({ ad_item: s.adItem, resource_type: 'static', type: 'image/png', width: 300, height: 250, content: `https://cdn.example.com/c${n}.png`, location: 'https://adv.example.com/', sequence: 1 }),
  update: { alt_text: 'Shop now', sequence: 2 },
  invalid: [
    { body: { resource_type: 'html', content: null }, field: 'content' },
    { body: { sequence: 6 }, field: 'sequence' },
    { body: { resource_type: 'static', type: 'video/mp4', content: 'https://cdn.example.com/x.png' }, field: 'type' },
  ],
  required: ['ad_item', 'width', 'height'],
});

describeCrud('VAST tracking', {
  version: 'v2',
  path: '/v2/vast-tracking',
  object: 'vast_tracking',
  setup: async (api) => ({ adItem: await adItem(api) }),
  create: (_api, n, s) => ({ ad_item_id: s.adItem, type: 'firstQuartile', link: `https://measure.example.com/q1?n=${n}&cb=[CACHEBUSTING]` }),
  update: { type: 'complete' },
  invalid: [
    { body: { type: 'halfway' }, field: 'type' },
    { body: { link: 'javascript:alert(1)' }, field: 'link' },
  ],
  required: ['ad_item_id', 'type', 'link'],
});

describe('VAST inventory in the reference shapes, with its own rules', () => {
  let api: Client;
  beforeAll(async () => {
    api = (await newAccount()).test;
  });

  test('every collection answers in the reference shape', async () => {
    const item = await adItem(api);
    const zone = await made(api, '/v2/vast-zones', { name: 'Z', publisher: await publisher(api) });
    expectReferenceShape('/v2/vast-zones', 'post', zone);
    expectReferenceShape('/v2/vast-zones/{id}', 'get', (await api.get(`/v2/vast-zones/${zone.id}`)).body);
    expectReferenceShape('/v2/vast-zones', 'get', (await api.get('/v2/vast-zones')).body);
    const campaign = await made(api, '/v2/vast-campaigns', { name: 'C', advertiser: await advertiser(api) });
    expectReferenceShape('/v2/vast-campaigns/{id}', 'get', (await api.get(`/v2/vast-campaigns/${campaign.id}`)).body);
    const assignment = await made(api, '/v2/vast-campaign-assignments', { campaign: campaign.id, ad_item: item });
    expectReferenceShape('/v2/vast-campaign-assignments/{id}', 'get', (await api.get(`/v2/vast-campaign-assignments/${assignment.id}`)).body);
    const schedule = await made(api, '/v2/vast-schedules', { start_at: '2030-01-01T00:00:00-05:00', quota_lifetime: 100, quota_type: 'views' });
    expect(schedule.start_date).toBe('2030-01-01 05:00:00');
    // The reference's "no geo target" for a VAST schedule is 0: taken, and kept as null.
    expect((await made(api, '/v2/vast-schedules', { start_date: '2030-01-01 00:00:00', geo_target: 0 })).geo_target).toBeNull();
    expectReferenceShape('/v2/vast-schedules/{id}', 'get', (await api.get(`/v2/vast-schedules/${schedule.id}`)).body);
    const placement = await made(api, '/v2/vast-placements', { advertisement: { id: campaign.id, type: 'vast_campaign' }, zone: zone.id, schedule: schedule.id });
    expectReferenceShape('/v2/vast-placements/{id}', 'get', (await api.get(`/v2/vast-placements/${placement.id}`)).body, PRIORITY_AS_NAMED);
    const linear = await made(api, '/v2/vast-media/linear', { ad_item: item, type: 'video/webm', width: 1280, height: 720, creative_url: 'https://cdn.example.com/a.webm' });
    expectReferenceShape('/v2/vast-media/linear/{id}', 'get', (await api.get(`/v2/vast-media/linear/${linear.id}`)).body);
    const nonLinear = await made(api, '/v2/vast-media/non-linear', { ad_item: item, creative: { type: 'image_url', source: 'https://cdn.example.com/o.png' }, width: 300, height: 50 });
    expectReferenceShape('/v2/vast-media/non-linear/{id}', 'get', (await api.get(`/v2/vast-media/non-linear/${nonLinear.id}`)).body);
    const media = await api.get(`/v2/vast-media?limit=10`);
    expect(media.body.data.map((m: any) => m.object).sort()).toEqual(['vast_media_linear', 'vast_media_non_linear']);
    expect(media.body.data.map((m: any) => m.is_linear).sort()).toEqual([false, true]);
    // The reference describes every listed media as linear; a non-linear's creative is its object.
    expectReferenceShape('/v2/vast-media', 'get', media.body, { ignore: ['creative'] });
    const companion = await made(api, '/v2/vast-companions', { ad_item: item, resource_type: 'html', width: 300, height: 250, content: '<b>Buy</b>' });
    expectReferenceShape('/v2/vast-companions/{id}', 'get', (await api.get(`/v2/vast-companions/${companion.id}`)).body, { ignore: ['encode_parameters'] });
    const tracking = await made(api, '/v2/vast-tracking', { ad_item_id: item, type: 'mute', link: 'https://measure.example.com/m' });
    expectReferenceShape('/v2/vast-tracking/{id}', 'get', (await api.get(`/v2/vast-tracking/${tracking.id}`)).body);
    const channel = await made(api, '/v2/vast-channels', { name: 'News' });
    const link = await made(api, '/v2/vast-channel-zone-assignments', { vast_channel: channel.id, vast_zone: { id: zone.id } });
    expect(link.vast_zone).toEqual({ id: zone.id, type: 'vast_zone' });
    expectReferenceShape('/v2/vast-channel-zone-assignments/{id}', 'get', (await api.get(`/v2/vast-channel-zone-assignments/${link.id}`)).body);
    const shown = (await api.get(`/v2/vast-channels/${channel.id}`)).body;
    expect(shown.vast_zones).toEqual([{ id: zone.id, name: 'Z', type: 'VAST Zone' }]);
    expectReferenceShape('/v2/vast-channels/{id}', 'get', shown);
  });

  test('a VAST zone has its player tags and conversion tag; a campaign and a placement their conversion tags', async () => {
    const zone = await made(api, '/v2/vast-zones', { name: 'Z', publisher: await publisher(api) });
    const tags = await api.get(`/v2/vast-zones/${zone.id}/tags`);
    expect(tags.status).toBe(200);
    expectReferenceShape('/v2/vast-zones/{id}/tags', 'get', tags.body);
    expect(tags.body.object).toBe('vast_zone_tag');
    expect(tags.body.data.basic).toMatch(new RegExp(`/vast\\.spark\\?setID=${zone.id}&ID=\\d+&rnd=\\[CACHEBUSTING\\]&pageUrl=\\[PAGEURL\\]$`));
    expect(decodeURIComponent(tags.body.data.url_encoded)).toBe(tags.body.data.basic);
    expect(tags.body.data.amp).toContain('rnd=RANDOM');
    const one = await api.get(`/v2/vast-zones/${zone.id}/tags?type=amp&protocol=http`);
    expect(Object.keys(one.body.data)).toEqual(['amp']);
    expect(one.body.data.amp).toMatch(/^http:/);
    paramFor(expectError(await api.get(`/v2/vast-zones/${zone.id}/tags?type=iframe`), 400, 'v2'), 'type');
    expectError(await api.get('/v2/vast-zones/999999999/tags'), 404, 'v2');
    for (const path of [`/v2/vast-zones/${zone.id}`, `/v2/vast-campaigns/${(await made(api, '/v2/vast-campaigns', { name: 'C', advertiser: await advertiser(api) })).id}`]) {
      const tag = await api.get(`${path}/conversion-tag`);
      expect(tag.status).toBe(200);
      expect(tag.body.data.src).toContain('/serve/conversion?');
    }
    expectReferenceShape('/v2/vast-zones/{id}/conversion-tag', 'get', (await api.get(`/v2/vast-zones/${zone.id}/conversion-tag`)).body);
  });

  test('archiving a VAST zone takes its placements along, and unarchive brings them back on request', async () => {
    const zone = await made(api, '/v2/vast-zones', { name: 'Z', publisher: await publisher(api) });
    const placement = await made(api, '/v2/vast-placements', { advertisement: { id: await adItem(api), type: 'vast_ad_item' }, zone: zone.id, schedule: await vastSchedule(api) });
    expect((await api.get(`/v2/vast-zones/${zone.id}/archive`)).status).toBe(200);
    expectError(await api.get(`/v2/vast-placements/${placement.id}`), 404, 'v2');
    expect((await api.get(`/v2/vast-zones/archived/${zone.id}`)).status).toBe(200);
    expect((await api.get(`/v2/vast-zones/archived/${zone.id}/unarchive?include_placements=true`)).status).toBe(200);
    expect((await api.get(`/v2/vast-placements/${placement.id}`)).status).toBe(200);
  });

  test('deleting a VAST ad item deletes its media, companions, tracking, assignments and placements', async () => {
    const item = await adItem(api);
    const linear = await made(api, '/v2/vast-media/linear', { ad_item: item, type: 'video/mp4', width: 640, height: 360, creative_url: 'https://cdn.example.com/a.mp4' });
    const tracking = await made(api, '/v2/vast-tracking', { ad_item_id: item, type: 'start', link: 'https://measure.example.com/s' });
    const placement = await made(api, '/v2/vast-placements', { advertisement: { id: item, type: 'vast_ad_item' }, zone: await vastZone(api), schedule: await vastSchedule(api) });
    expect((await api.del(`/v2/vast-ad-items/${item}`)).status).toBe(200);
    for (const p of [`/v2/vast-media/linear/${linear.id}`, `/v2/vast-tracking/${tracking.id}`, `/v2/vast-placements/${placement.id}`]) expectError(await api.get(p), 404, 'v2');
  });

  test('a placement goes into a zone or onto a channel, not both; a linear file has one source', async () => {
    const schedule = await vastSchedule(api);
    const item = await adItem(api);
    paramFor(expectError(await api.post('/v2/vast-placements', { advertisement: { id: item, type: 'vast_ad_item' }, schedule }), 400, 'v2'), 'zone');
    paramFor(expectError(await api.post('/v2/vast-placements', { advertisement: { id: item, type: 'vast_ad_item' }, schedule, zone: await vastZone(api), channel: await vastChannel(api) }), 400, 'v2'), 'channel');
    paramFor(expectError(await api.post('/v2/vast-media/linear', { ad_item: item, type: 'video/mp4', width: 640, height: 360 }), 400, 'v2'), 'creative');
    paramFor(expectError(await api.post('/v2/vast-placements', { advertisement: { id: item, type: 'vast_ad_item' }, schedule, zone: await vastZone(api), max_frequency: 2 }), 400, 'v2'), 'max_frequency_period');
  });
});
