import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';

async function mediaGroup(api: Client, name = 'Group') {
  const res = await api.post('/v2/media-groups', { name });
  expect(res.status).toBe(200);
  return res.body.id as number;
}

async function schedule(api: Client) {
  const res = await api.post('/v2/schedules', { start_date: '2030-01-01 00:00:00', end_date: '2030-12-31 23:59:59' });
  expect(res.status).toBe(200);
  return res.body.id as number;
}

async function zone(api: Client) {
  const res = await api.post('/v2/zones/standard', { name: 'Zone', width: 300, height: 250 });
  expect(res.status).toBe(200);
  return res.body.id as number;
}

async function customHtml(api: Client) {
  const res = await api.post('/v2/ad-items/custom-html', { name: 'Ad', width: 300, height: 250, custom_html: '<b>ad</b>' });
  expect(res.status).toBe(200);
  return res.body.id as number;
}

describeCrud('media groups', {
  version: 'v2',
  path: '/v2/media-groups',
  object: 'media_group',
  create: (_api, n) => ({ name: `Media group ${n}` }),
  update: { name: 'Renamed group', is_default: true },
  invalid: [
    { body: { name: '' }, field: 'name' },
    { body: { is_default: 'yes' }, field: 'is_default' },
  ],
  required: ['name'],
});

const creativeInvalid = [
  { body: { group: 999999999 }, field: 'group' },
  { body: { group: 'g' }, field: 'group' },
  { body: { file_url: 'not-a-url' }, field: 'file_url' },
  { body: { file_size: -1 }, field: 'file_size' },
];

for (const [segment, object, extra, update] of [
  ['image', 'image_creative', { width: 300, height: 250, mime_type: 'image/png' }, { name: 'Renamed image', width: 320 }],
  ['video', 'video_creative', { width: 640, height: 360, duration: 15, video_data_rate: 800 }, { duration: 30, name: 'Longer' }],
  ['audio', 'audio_creative', { duration: 30, audio_data_rate: 128 }, { audio_data_rate: 256 }],
  ['rich-media', 'rich_media_creative', { has_click_macro: true }, { has_click_macro: false, description: 'zip' }],
] as const) {
  describeCrud(`${segment} creatives`, {
    version: 'v2',
    path: `/v2/creatives/${segment}`,
    object,
    setup: async (api) => ({ group: await mediaGroup(api) }),
    create: (_api, n, setup) => ({ group: setup.group, name: `Creative ${n}`, file_url: `https://cdn.example.com/${segment}/${n}`, file_name: `${n}.bin`, file_size: 1000 + n, ...extra }),
    update,
    invalid: [...creativeInvalid, ...(segment === 'audio' ? [{ body: { duration: 'long' }, field: 'duration' }] : [])],
    required: ['group', 'file_url'],
  });
}

const templateBody = (n: number) => ({
  name: `Template ${n}`,
  raw_html: '<h1>[%title%]</h1><a href="[%url%]">Buy</a>',
  variables: [
    { name: 'Title', placeholder: '[%title%]', type: 'text', max_length: 50 },
    { name: 'Link', placeholder: '[%url%]', type: 'url', optional: true },
  ],
});

describeCrud('native templates', {
  version: 'v2',
  path: '/v2/templates/native',
  object: 'native_template',
  create: (_api, n) => templateBody(n),
  update: { name: 'Renamed template', raw_html: '<p>[%title%]</p>' },
  invalid: [
    { body: { raw_html: '' }, field: 'raw_html' },
    { body: { variables: [{ name: 'x', placeholder: '[%x%]', type: 'colour' }] }, field: 'variables' },
    { body: { variables: [{ name: 'x', type: 'text' }] }, field: 'variables' },
    { body: { variables: [{ name: 'a', placeholder: '[%a%]', type: 'text' }, { name: 'b', placeholder: '[%a%]', type: 'text' }] }, field: 'variables' },
    { body: { variables: [{ name: 'd', placeholder: '[%d%]', type: 'dropdown' }] }, field: 'variables' },
  ],
  required: ['name', 'raw_html', 'variables'],
});

describeCrud('schedules', {
  version: 'v2',
  path: '/v2/schedules',
  object: 'schedule',
  create: (_api, n) => ({ start_date: `2030-01-0${n + 1} 00:00:00`, end_date: '2030-02-01 00:00:00', quota_lifetime: 10000, quota_type: 'views' }),
  update: { delivery_method: 'smooth', day_cap_limit: 100, day_cap_type: 'clicks' },
  derived: ['pacing', 'status'],
  invalid: [
    { body: { start_date: '2030-01-01' }, field: 'start_date' },
    { body: { end_date: '2030-02-30 00:00:00' }, field: 'end_date' },
    { body: { delivery_method: 'fast' }, field: 'delivery_method' },
    { body: { quota_type: 'impressions' }, field: 'quota_type' },
    { body: { end_date: '2000-01-01 00:00:00' }, field: 'end_date' },
  ],
  required: [],
});

describeCrud('placements', {
  version: 'v2',
  path: '/v2/placements',
  object: 'placement',
  setup: async (api) => ({ zone: await zone(api), schedule: await schedule(api), ad: await customHtml(api) }),
  create: (_api, n, s) => ({
    advertisement: { id: s.ad, type: 'custom_html_ad_item' },
    zone: { id: s.zone, type: 'standard_zone' },
    schedule: s.schedule,
    channel: null,
    weight: n + 1,
    cost: { cpm: 1.25 },
  }),
  update: { active: false, priority: 'sponsorship', keywords: 'shoes, sale' },
  invalid: [
    { body: { advertisement: { id: 999999999, type: 'custom_html_ad_item' } }, field: 'advertisement' },
    { body: { advertisement: { id: 1, type: 'banana' } }, field: 'advertisement' },
    { body: { zone: { id: 999999999, type: 'standard_zone' } }, field: 'zone' },
    { body: { schedule: 999999999 }, field: 'schedule' },
    { body: { channel: 5 }, field: 'channel' },
    { body: { priority: 'urgent' }, field: 'priority' },
    { body: { serve_method: 'lottery' }, field: 'serve_method' },
    { body: { share_of_voice: 101 }, field: 'share_of_voice' },
    { body: { payout: { type: 'flat' } }, field: 'payout' },
  ],
  required: ['advertisement', 'zone', 'schedule'],
});

describeCrud('VAST ad items', {
  version: 'v2',
  path: '/v2/vast-ad-items',
  object: 'vast_ad_item',
  create: (_api, n) => ({ name: `VAST ${n}`, duration: '00:00:15', location: 'https://adv.example.com/v', skippable: true, skip_duration: '00:00:05' }),
  update: { companion_display: 'all', skip_duration: '25%' },
  invalid: [
    { body: { duration: '15s' }, field: 'duration' },
    { body: { skip_duration: '150%' }, field: 'skip_duration' },
    { body: { encode_parameters: 'base64' }, field: 'encode_parameters' },
    { body: { companion_display: 'some' }, field: 'companion_display' },
    { body: { use_wrapper: true }, field: 'wrapper_url' },
    { body: { companions: ['a'] }, field: 'companions' },
  ],
  required: ['name', 'duration'],
});

describe('v2 inventory group specifics', () => {
  let acct: TestAccount;
  let api: Client;
  beforeAll(async () => {
    acct = await newAccount();
    api = acct.test;
  });

  test('responses fit the reference OpenAPI schemas', async () => {
    const group = await api.post('/v2/media-groups', { name: 'Ref' });
    expectReferenceShape('/v2/media-groups', 'post', group.body);
    expectReferenceShape('/v2/media-groups/{id}', 'get', (await api.get(group.body.self)).body);
    expectReferenceShape('/v2/media-groups', 'get', (await api.get('/v2/media-groups')).body);
    for (const [segment, extra] of [['image', { width: 1, height: 1 }], ['video', { duration: 5 }], ['audio', { duration: 5 }], ['rich-media', {}]] as const) {
      const c = await api.post(`/v2/creatives/${segment}`, { group: group.body.id, name: 'c', file_url: 'https://cdn.example.com/f', ...extra });
      expect(c.status).toBe(200);
      expectReferenceShape(`/v2/creatives/${segment}/{id}`, 'get', c.body);
      expectReferenceShape(`/v2/creatives/${segment}`, 'get', (await api.get(`/v2/creatives/${segment}`)).body);
    }
    const t = await api.post('/v2/templates/native', templateBody(1));
    expectReferenceShape('/v2/templates/native/{id}', 'get', t.body);
    expectReferenceShape('/v2/templates/native', 'get', (await api.get('/v2/templates/native')).body);
    const s = await api.post('/v2/schedules', {});
    expectReferenceShape('/v2/schedules/{id}', 'get', s.body);
    expectReferenceShape('/v2/schedules', 'get', (await api.get('/v2/schedules')).body);
    const p = await api.post('/v2/placements', { advertisement: { id: await customHtml(api), type: 'custom_html_ad_item' }, zone: { id: await zone(api), type: 'standard_zone' }, schedule: s.body.id });
    expect(p.status).toBe(200);
    expectReferenceShape('/v2/placements/{id}', 'get', p.body);
    expectReferenceShape('/v2/placements', 'get', (await api.get('/v2/placements')).body);
    const v = await api.post('/v2/vast-ad-items', { name: 'V', duration: '00:00:30' });
    expectReferenceShape('/v2/vast-ad-items/{id}', 'get', v.body);
    const tag = await api.get(`${v.body.self}/conversion-tag?protocol=http`);
    expect(tag.body).toMatchObject({ object: 'conv_tag', url: `${v.body.self}/conversion-tag`, data: { src: expect.stringMatching(/^http:\/\/.*type=vast_ad_item&id=\d+/) } });
    expectReferenceShape('/v2/vast-ad-items/{id}/conversion-tag', 'get', tag.body);
    expectError(await api.get('/v2/vast-ad-items/999999999/conversion-tag'), 404, 'v2');
    expectReferenceShape('/v2/vast-ad-items', 'get', (await api.get('/v2/vast-ad-items')).body);
  });

  test('schedule defaults: start at midnight today, no end, default delivery', async () => {
    const s = await api.post('/v2/schedules', {});
    const today = new Date().toISOString().slice(0, 10);
    expect(s.body).toMatchObject({ object: 'schedule', start_date: `${today} 00:00:00`, end_date: null, delivery_method: 'default', under_delivery_behaviour: null });
    const smooth = await api.post('/v2/schedules', { delivery_method: 'smooth' });
    expect(smooth.body.under_delivery_behaviour).toBe('endOnDate');
    const early = await api.put(s.body.self, { end_date: '2001-01-01 00:00:00' });
    expect(paramFor(expectError(early, 400, 'v2'), 'end_date').message).toMatch(/must not be before/);
  });

  test('placements: typed references in v2 names, expansion as arrays, defaults, deleted with what they place', async () => {
    const ad = await customHtml(api);
    const z = await zone(api);
    const s = await schedule(api);
    const p = await api.post('/v2/placements', { advertisement: { id: ad, type: 'custom_html_ad_item' }, zone: { id: z, type: 'standard_zone' }, schedule: s });
    expect(p.body).toMatchObject({
      advertisement: { id: ad, type: 'custom_html_ad_item' },
      zone: { id: z, type: 'standard_zone' },
      schedule: s,
      active: true,
      weight: 1,
      priority: 'standard',
      serve_method: 'weight',
      keywords_match_method: 'preferred',
      channel: null,
    });
    const expanded = await api.get(`${p.body.self}?expand=advertisement,schedule`);
    expect(expanded.body.advertisement).toEqual([(await api.get(`/v2/ad-items/custom-html/${ad}`)).body]);
    expect(expanded.body.schedule).toEqual([(await api.get(`/v2/schedules/${s}`)).body]);
    expect(expanded.body.zone).toEqual({ id: z, type: 'standard_zone' });
    // A campaign can be placed too.
    const camp = await api.post('/v2/campaigns/standard', { name: 'Campaign' });
    const pc = await api.post('/v2/placements', { advertisement: { id: camp.body.id, type: 'standard_campaign' }, zone: { id: z, type: 'standard_zone' }, schedule: s });
    expect(pc.status).toBe(200);
    const wrongType = await api.post('/v2/placements', { advertisement: { id: ad, type: 'native_ad_item' }, zone: { id: z, type: 'standard_zone' }, schedule: s });
    expect(paramFor(expectError(wrongType, 400, 'v2'), 'advertisement').type).toBe('invalid_reference');
    await api.del(`/v2/ad-items/custom-html/${ad}`);
    expectError(await api.get(p.body.self), 404, 'v2');
    await api.del(`/v2/schedules/${s}`);
    expectError(await api.get(pc.body.self), 404, 'v2');
  });

  test('placements are archived with their zone and come back only with include_placements', async () => {
    const z = await zone(api);
    const p = await api.post('/v2/placements', { advertisement: { id: await customHtml(api), type: 'custom_html_ad_item' }, zone: { id: z, type: 'standard_zone' }, schedule: await schedule(api) });
    const archived = await api.get(`/v2/zones/standard/${z}/archive`);
    expect(archived.body.data.archived_resources).toEqual(expect.arrayContaining([{ object: 'placement', id: p.body.id }]));
    expectError(await api.get(p.body.self), 404, 'v2');
    await api.get(`/v2/zones/standard/archived/${z}/unarchive`);
    expectError(await api.get(p.body.self), 404, 'v2');
    await api.get(`/v2/zones/standard/${z}/archive`);
    const restored = await api.get(`/v2/zones/standard/archived/${z}/unarchive?include_placements=true`);
    expect(restored.body.data.unarchived_resources).toEqual(expect.arrayContaining([{ object: 'placement', id: p.body.id }]));
    expect((await api.get(p.body.self)).body).toEqual(p.body);
  });

  test('deleting a media group deletes its creatives; a deleted rich media creative leaves its ad item without one', async () => {
    const g = await mediaGroup(api);
    const c = await api.post('/v2/creatives/rich-media', { group: g, file_url: 'https://cdn.example.com/z.zip' });
    const item = await api.post('/v2/ad-items/rich-media', { name: 'R', width: 1, height: 1, creative: c.body.id });
    await api.del(`/v2/media-groups/${g}`);
    expectError(await api.get(c.body.self), 404, 'v2');
    expect((await api.get(item.body.self)).body.creative).toBeNull();
  });

  test('"all types" lists: /v2/zones, /v2/campaigns, /v2/creatives', async () => {
    const fresh = await newAccount();
    const f = fresh.test;
    const sz = await f.post('/v2/zones/standard', { name: 'S', width: 1, height: 1 });
    const ez = await f.post('/v2/zones/email', { name: 'E', width: 1, height: 1 });
    expect((await f.get('/v2/zones')).body.data.map((o: any) => [o.object, o.id])).toEqual([
      ['standard_zone', sz.body.id],
      ['email_zone', ez.body.id],
    ]);
    expectReferenceShape('/v2/zones', 'get', (await f.get('/v2/zones')).body);
    const camp = await f.post('/v2/campaigns/standard', { name: 'C' });
    const campaigns = await f.get('/v2/campaigns');
    expect(campaigns.body).toMatchObject({ object: 'list', url: '/v2/campaigns' });
    expect(campaigns.body.data).toEqual([camp.body]);
    expectReferenceShape('/v2/campaigns', 'get', campaigns.body);
    const g = await mediaGroup(f);
    const img = await f.post('/v2/creatives/image', { group: g, file_url: 'https://cdn.example.com/i.png' });
    const aud = await f.post('/v2/creatives/audio', { group: g, file_url: 'https://cdn.example.com/a.mp3' });
    const creatives = await f.get('/v2/creatives?limit=1');
    expect(creatives.body).toMatchObject({ object: 'list', url: '/v2/creatives', has_more: true, limit: 1 });
    expect(creatives.body.data).toEqual([img.body]);
    expectReferenceShape('/v2/creatives', 'get', creatives.body);
    expect((await f.get('/v2/creatives?offset=1')).body.data).toEqual([aud.body]);
    expect((await fresh.live.get('/v2/creatives')).body.data).toEqual([]);
    expectError(await f.post('/v2/creatives', {}), 501, 'v2');
  });
});
