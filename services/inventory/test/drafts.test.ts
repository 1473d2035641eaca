/**
 * Campaign drafts (the reference's /v2/drafts group): each draft collection's shared behaviour, the
 * reference shapes, saving a VAST and a display draft campaign into real resources (which then serve),
 * the atomicity of a failing save, all-resources, isolation and 404s.
 */
import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { closeServeAgent, serveGet, within } from '../../serving/test/serving-fixtures';

async function made(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}
const id = async (api: Client, path: string, body: Record<string, unknown>) => (await made(api, path, body)).id as number;
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
const vastCampaignDraft = (api: Client) => id(api, '/v2/drafts/vast-campaigns', { draft: { name: 'Draft launch' } });
const campaignDraft = (api: Client) => id(api, '/v2/drafts/campaigns/standard', { draft: { name: 'Draft display' } });
const publisher = (api: Client) => id(api, '/v2/publishers', { name: 'Draft publisher' });

afterAll(() => closeServeAgent());

// VAST drafts: every part names its draft VAST campaign.

describeCrud('draft VAST campaigns', {
  version: 'v2',
  path: '/v2/drafts/vast-campaigns',
  object: 'draft_vast_campaign',
  create: (_api, n) => ({ draft: { name: `Launch ${n}` } }),
  update: { draft: { name: 'Relaunch' } },
  invalid: [
    { body: { draft: { targeting_source: 'AD_ITEM' } }, field: 'draft' },
    { body: { draft: { no_such: 1 } }, field: 'draft' },
    { body: { draft: 'name' }, field: 'draft' },
  ],
  required: ['draft'],
});

describeCrud('draft VAST ad items', {
  version: 'v2',
  path: '/v2/drafts/vast-ad-items',
  object: 'draft_vast_ad_item',
  setup: async (api) => ({ campaign: await vastCampaignDraft(api) }),
  create: (_api, n, s) => ({ vast_campaign_draft_id: s.campaign, draft: { name: `Spot ${n}` } }),
  update: { draft: { name: 'Spot again' } },
  invalid: [
    { body: { draft: { duration: 15 } }, field: 'draft' },
    { body: { vast_campaign_draft_id: 999999999 }, field: 'vast_campaign_draft_id' },
  ],
  required: ['vast_campaign_draft_id', 'draft'],
});

describeCrud('draft VAST schedules', {
  version: 'v2',
  path: '/v2/drafts/vast-schedules',
  object: 'draft_vast_schedule',
  setup: async (api) => ({ campaign: await vastCampaignDraft(api) }),
  create: (_api, n, s) => ({ vast_campaign_draft_id: s.campaign, draft: { weight: n + 1 } }),
  update: { draft: { weight: 9 } },
  invalid: [{ body: { draft: { weight: 0 } }, field: 'draft' }],
  required: ['vast_campaign_draft_id', 'draft'],
});

describeCrud('draft VAST campaign assignments', {
  version: 'v2',
  path: '/v2/drafts/vast-campaign-assignments',
  object: 'draft_vast_campaign_assignment',
  setup: async (api) => {
    const campaign = await vastCampaignDraft(api);
    const other = await vastCampaignDraft(api);
    return {
      campaign,
      item: await id(api, '/v2/drafts/vast-ad-items', { vast_campaign_draft_id: campaign, draft: { name: 'Spot' } }),
      otherItem: await id(api, '/v2/drafts/vast-ad-items', { vast_campaign_draft_id: other, draft: { name: 'Other spot' } }),
      schedule: await id(api, '/v2/drafts/vast-schedules', { vast_campaign_draft_id: campaign, draft: {} }),
    };
  },
  create: (_api, n, s) => ({ vast_campaign_draft_id: s.campaign, vast_ad_item_draft_id: s.item, draft: { weight: n + 1 } }),
  update: { draft: { weight: 5 } },
  invalid: [
    { body: { draft: { campaign: 5 } }, field: 'draft' },
    { body: { vast_ad_item_draft_id: 999999999 }, field: 'vast_ad_item_draft_id' },
  ],
  required: ['vast_campaign_draft_id', 'vast_ad_item_draft_id', 'draft'],
});

describeCrud('draft VAST placements', {
  version: 'v2',
  path: '/v2/drafts/vast-placements',
  object: 'draft_vast_placement',
  setup: async (api) => {
    const campaign = await vastCampaignDraft(api);
    return {
      campaign,
      zone: await id(api, '/v2/vast-zones', { name: 'Pre-roll', publisher: await publisher(api) }),
      schedule: await id(api, '/v2/drafts/vast-schedules', { vast_campaign_draft_id: campaign, draft: {} }),
    };
  },
  create: (_api, n, s) => ({ vast_campaign_draft_id: s.campaign, draft: { zone: s.zone, max_frequency: n + 1 } }),
  update: { schedule_draft_id: null },
  invalid: [
    { body: { draft: { advertisement: { id: 1, type: 'vast_campaign' } } }, field: 'draft' },
    { body: { draft: { priority: 'urgent' } }, field: 'draft' },
    { body: { schedule_draft_id: 999999999 }, field: 'schedule_draft_id' },
  ],
  required: ['vast_campaign_draft_id', 'draft'],
});

// Display drafts: ad items and schedules stand alone; assignments and placements tie them to a draft campaign.

describeCrud('draft standard campaigns', {
  version: 'v2',
  path: '/v2/drafts/campaigns/standard',
  object: 'draft_standard_campaign',
  create: (_api, n) => ({ draft: { name: `Display ${n}` } }),
  update: { draft: { name: 'Display again' } },
  invalid: [{ body: { draft: { advertiser: 'acme' } }, field: 'draft' }],
  required: ['draft'],
});

for (const [segment, object] of [['image', 'draft_image_ad_item'], ['custom-html', 'draft_custom_html_ad_item'], ['native', 'draft_native_ad_item'], ['rich-media', 'draft_rich_media_ad_item']]) {
  describeCrud(`${object}s`, {
    version: 'v2',
    path: `/v2/drafts/ad-items/${segment}`,
    object,
    create: (_api, n) => ({ draft: { name: `Item ${n}` } }),
    update: { draft: { name: 'Item again' } },
    invalid: [{ body: { draft: { name: 'W', width: 0 } }, field: 'draft' }],
    required: ['draft'],
  });
}

describeCrud('draft schedules', {
  version: 'v2',
  path: '/v2/drafts/schedules',
  object: 'draft_schedule',
  create: (_api, n) => ({ draft: { quota_lifetime: n + 1 } }),
  update: { draft: { quota_lifetime: 50 } },
  invalid: [{ body: { draft: { day_cap_type: 'hours' } }, field: 'draft' }],
  required: ['draft'],
});

describeCrud('draft campaign assignments', {
  version: 'v2',
  path: '/v2/drafts/campaign-assignments',
  object: 'draft_campaign_assignment',
  setup: async (api) => ({
    campaign: await campaignDraft(api),
    item: await id(api, '/v2/drafts/ad-items/image', { draft: { name: 'Banner' } }),
    schedule: await id(api, '/v2/drafts/schedules', { draft: {} }),
  }),
  create: (_api, n, s) => ({ campaign_draft_id: s.campaign, ad_item_draft_id: s.item, draft: { weight: n + 1 } }),
  update: { draft: { weight: 4 } },
  invalid: [
    { body: { ad_item_draft_id: 999999999 }, field: 'ad_item_draft_id' },
    { body: { draft: { advertisement: { id: 1, type: 'image_ad_item' } } }, field: 'draft' },
  ],
  required: ['campaign_draft_id', 'ad_item_draft_id', 'draft'],
});

describeCrud('draft placements', {
  version: 'v2',
  path: '/v2/drafts/placements',
  object: 'draft_placement',
  setup: async (api) => ({
    campaign: await campaignDraft(api),
    zone: await id(api, '/v2/zones/standard', { name: 'Banner zone', width: 300, height: 250, publisher: await publisher(api) }),
  }),
  create: (_api, n, s) => ({ campaign_draft_id: s.campaign, zone_id: s.zone, draft: { weight: n + 1 } }),
  update: { draft: { weight: 3 } },
  invalid: [
    { body: { zone_id: 999999999 }, field: 'zone_id' },
    { body: { draft: { zone: { id: 1, type: 'standard_zone' } } }, field: 'draft' },
  ],
  required: ['campaign_draft_id', 'draft'],
});

/** A VAST draft campaign with two ad items (one a wrapper, which needs no media to serve), a schedule and a placement. */
async function vastDraft(api: Client, zone: number, advertiser: number) {
  const campaign = await made(api, '/v2/drafts/vast-campaigns', { draft: { name: 'Spring video', advertiser } });
  const c = campaign.id;
  const wrapper = await made(api, '/v2/drafts/vast-ad-items', {
    vast_campaign_draft_id: c, draft: { name: 'Wrapped spot', duration: '00:00:10', use_wrapper: true, wrapper_url: 'https://vast.example/tag.xml' },
  });
  const spot = await made(api, '/v2/drafts/vast-ad-items', { vast_campaign_draft_id: c, draft: { name: 'Own spot', duration: '00:00:15', location: 'https://advertiser.example/' } });
  const schedule = await made(api, '/v2/drafts/vast-schedules', { vast_campaign_draft_id: c, draft: { start_date: yesterday() } });
  const assignments = [
    await made(api, '/v2/drafts/vast-campaign-assignments', { vast_campaign_draft_id: c, vast_ad_item_draft_id: wrapper.id, draft: { weight: 3 } }),
    await made(api, '/v2/drafts/vast-campaign-assignments', { vast_campaign_draft_id: c, vast_ad_item_draft_id: spot.id, draft: { weight: 1 } }),
  ];
  const placement = await made(api, '/v2/drafts/vast-placements', { vast_campaign_draft_id: c, schedule_draft_id: schedule.id, draft: { zone, cost: { cpm: 4 } } });
  return { campaign, items: [wrapper, spot], schedule, assignments, placement };
}

describe('saving a VAST draft campaign', () => {
  let acct: TestAccount;
  let api: Client;
  let zone: number;
  let advertiser: number;
  let d: Awaited<ReturnType<typeof vastDraft>>;
  let saved: any;
  const spark = () => serveGet(`http://127.0.0.1:${process.env.SERVING_PORT}`, `/vast.spark?setID=${zone}&ID=${acct.id}`);

  beforeAll(async () => {
    acct = await newAccount();
    // Live: serving answers for live inventory.
    api = acct.live;
    zone = await id(api, '/v2/vast-zones', { name: 'Pre-roll', publisher: await publisher(api) });
    advertiser = await id(api, '/v2/advertisers', { name: 'Video advertiser' });
    d = await vastDraft(api, zone, advertiser);
  });

  test('drafts answer in the reference shapes and serve nothing', async () => {
    expectReferenceShape('/v2/drafts/vast-campaigns', 'post', d.campaign);
    expectReferenceShape('/v2/drafts/vast-campaigns/{id}', 'get', (await api.get(`/v2/drafts/vast-campaigns/${d.campaign.id}`)).body);
    expectReferenceShape('/v2/drafts/vast-campaigns', 'get', (await api.get('/v2/drafts/vast-campaigns')).body);
    expectReferenceShape('/v2/drafts/vast-ad-items/{id}', 'get', (await api.get(`/v2/drafts/vast-ad-items/${d.items[0].id}`)).body);
    expectReferenceShape('/v2/drafts/vast-schedules/{id}', 'get', d.schedule);
    expectReferenceShape('/v2/drafts/vast-campaign-assignments/{id}', 'get', d.assignments[0]);
    expectReferenceShape('/v2/drafts/vast-placements/{id}', 'get', d.placement);
    expect(d.campaign).toMatchObject({ object: 'draft_vast_campaign', self: `/v2/drafts/vast-campaigns/${d.campaign.id}`, asset_created: false, created_vast_campaign_id: null });
    // Only the fields given are held.
    expect(d.items[1].draft).toEqual({ name: 'Own spot', duration: '00:00:15', location: 'https://advertiser.example/' });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await spark()).text).not.toContain('<Ad ');
  });

  test('all-resources lists the parts: ids, or the drafts with expand=true', async () => {
    const res = await api.get(`/v2/drafts/vast-campaigns/${d.campaign.id}/all-resources`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/drafts/vast-campaigns/{id}/all-resources', 'get', res.body);
    expect(res.body).toEqual({
      object: 'draft_vast_campaign_all_resources',
      campaign: { id: d.campaign.id },
      ad_items: d.items.map((i) => ({ id: i.id })),
      placements: [{ id: d.placement.id }],
      schedules: [{ id: d.schedule.id }],
      campaign_assignments: d.assignments.map((a) => ({ id: a.id })),
    });
    const full = await api.get(`/v2/drafts/vast-campaigns/${d.campaign.id}/all-resources?expand=true`);
    expect(full.body.campaign).toEqual(d.campaign);
    expect(full.body.placements).toEqual([d.placement]);
  });

  test('save creates the real campaign and parts with the right references, and marks the drafts converted', async () => {
    const res = await api.post(`/v2/drafts/vast-campaigns/${d.campaign.id}/save`);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { object: 'draft_vast_campaign_save' } });
    expectReferenceShape('/v2/drafts/vast-campaigns/{id}/save', 'post', res.body);
    saved = res.body;
    expect(saved.campaign).toMatchObject({ object: 'vast_campaign', name: 'Spring video', advertiser });
    expect(saved.ad_items).toHaveLength(2);
    expect(saved.schedules).toHaveLength(1);
    expect(saved.campaign_assignments).toHaveLength(2);
    expect(saved.placements).toHaveLength(1);
    const [wrapper, spot] = saved.ad_items.map((i: { id: number }) => i.id);
    expect((await api.get(`/v2/vast-ad-items/${wrapper}`)).body).toMatchObject({ name: 'Wrapped spot', use_wrapper: true, wrapper_url: 'https://vast.example/tag.xml' });
    expect((await api.get(`/v2/vast-ad-items/${spot}`)).body).toMatchObject({ name: 'Own spot', duration: '00:00:15' });
    const assignments = await Promise.all(saved.campaign_assignments.map(async (a: { id: number }) => (await api.get(`/v2/vast-campaign-assignments/${a.id}`)).body));
    expect(assignments.map((a) => [a.campaign, a.ad_item, a.weight])).toEqual([[saved.campaign.id, wrapper, 3], [saved.campaign.id, spot, 1]]);
    const placement = (await api.get(`/v2/vast-placements/${saved.placements[0].id}`)).body;
    expect(placement).toMatchObject({ advertisement: { id: saved.campaign.id, type: 'vast_campaign' }, zone, schedule: saved.schedules[0].id, cost: { cpm: 4 } });
    expect((await api.get(`/v2/vast-schedules/${saved.schedules[0].id}`)).body.start_date).toBe(d.schedule.draft.start_date);
    // The drafts stay, marked with what they became (the reference's asset_created).
    expect((await api.get(`/v2/drafts/vast-campaigns/${d.campaign.id}`)).body).toMatchObject({ asset_created: true, created_vast_campaign_id: saved.campaign.id });
    expect((await api.get(`/v2/drafts/vast-ad-items/${d.items[1].id}`)).body).toMatchObject({ asset_created: true, created_vast_ad_item_id: spot });
    expect((await api.get(`/v2/drafts/vast-placements/${d.placement.id}`)).body).toMatchObject({ asset_created: true, created_vast_placement_id: saved.placements[0].id });
  });

  test('the saved campaign serves', async () => {
    // The spot gets its video now that it is real; the wrapper needs none.
    await made(api, '/v2/vast-media/linear', { ad_item: saved.ad_items[1].id, type: 'video/mp4', width: 640, height: 360, creative_url: 'https://cdn.example/spot.mp4' });
    let text = '';
    await within(5000, async () => {
      text = (await spark()).text;
      return text.includes('<Ad ');
    }, 50);
    expect(text).toContain('<Ad ');
  });

  test('a converted draft cannot be saved or changed again (405)', async () => {
    expectError(await api.post(`/v2/drafts/vast-campaigns/${d.campaign.id}/save`), 405, 'v2');
    expectError(await api.put(`/v2/drafts/vast-campaigns/${d.campaign.id}`, { draft: { name: 'Late' } }), 405, 'v2');
  });

  test('another account, and the test key, can neither read nor save the draft (404)', async () => {
    const fresh = await vastDraft(api, zone, advertiser);
    const other = await newAccount();
    for (const client of [other.live, other.test, acct.test]) {
      expectError(await client.get(`/v2/drafts/vast-campaigns/${fresh.campaign.id}`), 404, 'v2');
      expectError(await client.post(`/v2/drafts/vast-campaigns/${fresh.campaign.id}/save`), 404, 'v2');
      expectError(await client.get(`/v2/drafts/vast-campaigns/${fresh.campaign.id}/all-resources`), 404, 'v2');
    }
    expect((await api.get(`/v2/drafts/vast-campaigns/${fresh.campaign.id}`)).body.asset_created).toBe(false);
  });

  test('unknown ids answer 404', async () => {
    expectError(await api.post('/v2/drafts/vast-campaigns/999999999/save'), 404, 'v2');
    expectError(await api.get('/v2/drafts/vast-campaigns/999999999/all-resources'), 404, 'v2');
    expectError(await api.post('/v2/drafts/campaigns/standard/999999999/save'), 404, 'v2');
    expectError(await api.get('/v2/drafts/campaigns/999999999/all-resources'), 404, 'v2');
    expectError(await api.get('/v2/drafts/ad-items/999999999'), 404, 'v2');
  });
});

describe('a save that fails creates nothing', () => {
  let api: Client;
  let zone: number;
  let advertiser: number;
  const count = async (path: string) => (await api.get(`${path}?limit=100`)).body.data.length as number;
  const REAL = ['/v2/vast-campaigns', '/v2/vast-ad-items', '/v2/vast-schedules', '/v2/vast-campaign-assignments', '/v2/vast-placements'];

  beforeAll(async () => {
    api = (await newAccount()).test;
    zone = await id(api, '/v2/vast-zones', { name: 'Pre-roll', publisher: await publisher(api) });
    advertiser = await id(api, '/v2/advertisers', { name: 'Video advertiser' });
  });

  test('invalid parts answer 400 by draft and field; fixed, the same drafts save', async () => {
    const d = await vastDraft(api, zone, advertiser);
    // Valid as draft fields, refused by the real kinds' rules: a duration not in hh:mm:ss, a placement with no zone.
    expect((await api.put(`/v2/drafts/vast-ad-items/${d.items[1].id}`, { draft: { duration: 'soon' } })).status).toBe(200);
    expect((await api.put(`/v2/drafts/vast-placements/${d.placement.id}`, { draft: { zone: null } })).status).toBe(200);
    const before = await Promise.all(REAL.map(count));
    const res = await api.post(`/v2/drafts/vast-campaigns/${d.campaign.id}/save`);
    expect(res.status).toBe(400);
    expectReferenceShape('/v2/drafts/vast-campaigns/{id}/save', 'post', res.body, { status: 400 });
    expect(res.body).toMatchObject({ object: 'error', status: 400, http_status: 400, ad_items: [{ draft_id: d.items[1].id, errors: [{ field: 'duration', type: 'invalid_value' }] }] });
    expect(res.body.placements).toEqual([{ draft_id: d.placement.id, errors: [expect.objectContaining({ field: 'zone', type: 'required' })] }]);
    expect(res.body.campaign).toBeUndefined();
    expect(await Promise.all(REAL.map(count))).toEqual(before);
    expect((await api.get(`/v2/drafts/vast-campaigns/${d.campaign.id}`)).body).toMatchObject({ asset_created: false, created_vast_campaign_id: null });
    expect((await api.get(`/v2/drafts/vast-ad-items/${d.items[0].id}`)).body).toMatchObject({ asset_created: false, created_vast_ad_item_id: null });

    await api.put(`/v2/drafts/vast-ad-items/${d.items[1].id}`, { draft: { duration: '00:00:20' } });
    await api.put(`/v2/drafts/vast-placements/${d.placement.id}`, { draft: { zone } });
    const ok = await api.post(`/v2/drafts/vast-campaigns/${d.campaign.id}/save`);
    expect(ok.status).toBe(200);
    expect(await Promise.all(REAL.map(count))).toEqual(before.map((n, i) => n + [1, 2, 1, 2, 1][i]));
  });

  test('an invalid campaign draft is named under campaign', async () => {
    const c = await id(api, '/v2/drafts/vast-campaigns', { draft: { name: 'No advertiser' } });
    const res = await api.post(`/v2/drafts/vast-campaigns/${c}/save`);
    expect(res.status).toBe(400);
    expect(res.body.campaign).toEqual({ draft_id: c, errors: [expect.objectContaining({ field: 'advertiser', type: 'required' })] });
  });
});

describe('saving a display draft campaign', () => {
  let api: Client;
  let zone: number;
  let advertiser: number;

  beforeAll(async () => {
    api = (await newAccount()).test;
    zone = await id(api, '/v2/zones/standard', { name: 'Leaderboard', width: 728, height: 90, publisher: await publisher(api) });
    advertiser = await id(api, '/v2/advertisers', { name: 'Display advertiser' });
  });

  test('the campaign, its ad items, assignments, schedule and placement become real, in the reference shapes', async () => {
    const campaign = await made(api, '/v2/drafts/campaigns/standard', { draft: { name: 'Autumn', advertiser } });
    const image = await made(api, '/v2/drafts/ad-items/image', { draft: { name: 'Autumn banner', width: 728, height: 90, creative_url: 'https://cdn.example/a.png' } });
    const html = await made(api, '/v2/drafts/ad-items/custom-html', { draft: { name: 'Autumn HTML', width: 728, height: 90, custom_html: '<b>Autumn</b>' } });
    const schedule = await made(api, '/v2/drafts/schedules', { draft: { start_date: '2030-01-01 00:00:00' } });
    const assignments = [
      await made(api, '/v2/drafts/campaign-assignments', { campaign_draft_id: campaign.id, ad_item_draft_id: image.id, draft: { weight: 2 } }),
      await made(api, '/v2/drafts/campaign-assignments', { campaign_draft_id: campaign.id, ad_item_draft_id: html.id, draft: {} }),
    ];
    const placement = await made(api, '/v2/drafts/placements', { campaign_draft_id: campaign.id, schedule_draft_id: schedule.id, zone_id: zone, draft: { priority: 'network' } });

    expectReferenceShape('/v2/drafts/campaigns/standard/{id}', 'get', campaign);
    expectReferenceShape('/v2/drafts/ad-items/image/{id}', 'get', image);
    expectReferenceShape('/v2/drafts/ad-items/custom-html/{id}', 'get', html);
    expectReferenceShape('/v2/drafts/schedules/{id}', 'get', schedule);
    expectReferenceShape('/v2/drafts/campaign-assignments/{id}', 'get', assignments[0]);
    expectReferenceShape('/v2/drafts/placements/{id}', 'get', placement);
    expect(image).toMatchObject({ ad_item_type: 'image', asset_created: false, created_ad_item_id: null });
    expect(html.ad_item_type).toBe('raw');
    // The reference requires an ad item draft's name up front.
    paramFor(expectError(await api.post('/v2/drafts/ad-items/image', { draft: { width: 300 } }), 400, 'v2'), 'draft');
    const all = await api.get('/v2/drafts/ad-items');
    expectReferenceShape('/v2/drafts/ad-items', 'get', all.body);
    expect(all.body.data.map((o: any) => o.object)).toEqual(['draft_image_ad_item', 'draft_custom_html_ad_item']);
    expect((await api.get(`/v2/drafts/ad-items/${html.id}`)).body).toEqual(html);

    const parts = await api.get(`/v2/drafts/campaigns/${campaign.id}/all-resources`);
    expectReferenceShape('/v2/drafts/campaigns/{id}/all-resources', 'get', parts.body);
    expect(parts.body).toEqual({
      object: 'draft_standard_campaign_all_resources',
      campaign: { id: campaign.id },
      ad_items: [{ id: image.id }, { id: html.id }],
      placements: [{ id: placement.id }],
      schedules: [{ id: schedule.id }],
      campaign_assignments: assignments.map((a) => ({ id: a.id })),
      ad_item_companion_products: [],
    });

    const res = await api.post(`/v2/drafts/campaigns/standard/${campaign.id}/save`);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { object: 'draft_conversion' } });
    expectReferenceShape('/v2/drafts/campaigns/standard/{id}/save', 'post', res.body);
    const saved = res.body;
    expect(saved.campaign).toMatchObject({ object: 'standard_campaign', name: 'Autumn', advertiser });
    const [imageId, htmlId] = saved.ad_items.map((i: { id: number }) => i.id);
    expect((await api.get(`/v2/ad-items/image/${imageId}`)).body).toMatchObject({ name: 'Autumn banner', creative_url: 'https://cdn.example/a.png' });
    expect((await api.get(`/v2/ad-items/custom-html/${htmlId}`)).body).toMatchObject({ name: 'Autumn HTML', custom_html: '<b>Autumn</b>' });
    const realAssignments = await Promise.all(saved.campaign_assignments.map(async (a: { id: number }) => (await api.get(`/v2/campaign-assignments/${a.id}`)).body));
    expect(realAssignments.map((a) => [a.campaign, a.advertisement, a.weight])).toEqual([
      [{ id: saved.campaign.id, type: 'standard_campaign' }, { id: imageId, type: 'image_ad_item' }, 2],
      [{ id: saved.campaign.id, type: 'standard_campaign' }, { id: htmlId, type: 'custom_html_ad_item' }, 1],
    ]);
    const realPlacement = (await api.get(`/v2/placements/${saved.placements[0].id}`)).body;
    expect(realPlacement).toMatchObject({
      advertisement: { id: saved.campaign.id, type: 'standard_campaign' }, zone: { id: zone, type: 'standard_zone' }, schedule: saved.schedules[0].id, priority: 'network',
    });
    expect((await api.get(`/v2/schedules/${saved.schedules[0].id}`)).body.start_date).toBe('2030-01-01 00:00:00');
    expect((await api.get(`/v2/drafts/ad-items/${image.id}`)).body).toMatchObject({ asset_created: true, created_ad_item_id: imageId });
    expect((await api.get(`/v2/drafts/placements/${placement.id}`)).body).toMatchObject({ asset_created: true, created_placement_id: saved.placements[0].id });
  });

  test('a display draft failing the real rules creates nothing', async () => {
    const campaign = await made(api, '/v2/drafts/campaigns/standard', { draft: { name: 'Broken', advertiser } });
    // A custom HTML ad item needs its HTML; the placement a schedule.
    const html = await made(api, '/v2/drafts/ad-items/custom-html', { draft: { name: 'No HTML', width: 728, height: 90 } });
    await made(api, '/v2/drafts/campaign-assignments', { campaign_draft_id: campaign.id, ad_item_draft_id: html.id, draft: {} });
    const placement = await made(api, '/v2/drafts/placements', { campaign_draft_id: campaign.id, zone_id: zone, draft: {} });
    const before = (await api.get('/v2/campaigns/standard?limit=100')).body.data.length;
    const res = await api.post(`/v2/drafts/campaigns/standard/${campaign.id}/save`);
    expect(res.status).toBe(400);
    expectReferenceShape('/v2/drafts/campaigns/standard/{id}/save', 'post', res.body, { status: 400 });
    expect(res.body.ad_items).toEqual([{ draft_id: html.id, errors: [expect.objectContaining({ field: 'custom_html', type: 'required' })] }]);
    expect(res.body.placements).toEqual([{ draft_id: placement.id, errors: [expect.objectContaining({ field: 'schedule', type: 'required' })] }]);
    expect((await api.get('/v2/campaigns/standard?limit=100')).body.data.length).toBe(before);
  });

  test('a placement draft takes a zone or a channel, and a draft schedule or a real one, not both', async () => {
    const campaign = await campaignDraft(api);
    const channel = await id(api, '/v2/channels', { name: 'News' });
    const both = await api.post('/v2/drafts/placements', { campaign_draft_id: campaign, zone_id: zone, channel_id: channel, draft: {} });
    paramFor(expectError(both, 400, 'v2'), 'channel_id');
    const schedule = await id(api, '/v2/drafts/schedules', { draft: {} });
    const real = await id(api, '/v2/schedules', { start_date: '2030-01-01 00:00:00' });
    const twice = await api.post('/v2/drafts/placements', { campaign_draft_id: campaign, zone_id: zone, schedule_draft_id: schedule, draft: { schedule: real } });
    paramFor(expectError(twice, 400, 'v2'), 'schedule_draft_id');
  });
});
