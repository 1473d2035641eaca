/**
 * The VAST 4.2 model under /v2/vast/ (catalog kinds/vast-4.ts): every kind's CRUD and documented
 * errors, its answers against the reference OpenAPI, the rules of services/inventory/hooks/vast-4.ts,
 * and deleting an ad deleting what is under it.
 */
import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';
import { expectReferenceSchema, expectReferenceShape } from '../../../gateway/test/support/openapi';

const MISSING = 999999999;

async function post(api: Client, path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ path, status: 200 });
  return res.body;
}

const ad = async (api: Client) => (await post(api, '/v2/vast/ads', { name: 'Ad', type: 'inline' })).id as number;
const creative = async (api: Client, adId?: number) => (await post(api, '/v2/vast/creatives', { ad_id: adId ?? (await ad(api)) })).id as number;
const linear = async (api: Client, creativeId?: number) => (await post(api, '/v2/vast/linears', { creative_id: creativeId ?? (await creative(api)), duration: '00:00:30' })).id as number;
const resource = async (api: Client) => (await post(api, '/v2/vast/resources', { type: 'static', static_uri: 'https://cdn.example.com/r.png', static_type: 'image/png' })).id as number;
/** The VAST 2/3 zone, channel, schedule and campaign a 4.2 ad is delivered through. */
async function delivery(api: Client): Promise<{ zone: number; channel: number; schedule: number; campaign: number }> {
  const publisher = (await post(api, '/v2/publishers', { name: 'P' })).id;
  const advertiser = (await post(api, '/v2/advertisers', { name: 'A' })).id;
  return {
    zone: (await post(api, '/v2/vast-zones', { name: 'Z', publisher })).id,
    channel: (await post(api, '/v2/vast-channels', { name: 'C' })).id,
    schedule: (await post(api, '/v2/vast-schedules', {})).id,
    campaign: (await post(api, '/v2/vast-campaigns', { name: 'C', advertiser })).id,
  };
}
const icon = async (api: Client) => (await post(api, '/v2/vast/icons', { resources: [await resource(api)], width: 50, height: 50 })).id as number;

/** Each kind: its path, a valid create body, a valid update, bodies refused, required fields. */
interface Case {
  title: string;
  path: string;
  object: string;
  setup?(api: Client): Promise<Record<string, any>>;
  create(n: number, s: Record<string, any>): Record<string, unknown>;
  update: Record<string, unknown>;
  invalid: { body: Record<string, unknown>; field: string }[];
  required: string[];
  /** The reference's field types we knowingly differ from (see the kind's comments). */
  ignore?: string[];
  /** A parent reference, given an id that does not exist in the reference-shape checks. */
  parent?: string;
}

const CASES: Case[] = [
  {
    title: 'VAST 4.2 ads',
    path: '/v2/vast/ads',
    object: 'vast4_ad_item',
    create: (n) => ({ name: `Ad ${n}`, type: 'inline' }),
    update: { name: 'Wrapped', type: 'wrapper', ad_url: 'https://vast.example.com/wrapped.xml', allow_multiple_ads: true },
    invalid: [
      { body: { type: 'standalone' }, field: 'type' },
      { body: { type: 'wrapper' }, field: 'ad_url' },
      { body: { ad_url: 'ftp://vast.example.com/x.xml' }, field: 'ad_url' },
      { body: { name: '' }, field: 'name' },
      { body: { fallback_on_no_ad: 'no' }, field: 'fallback_on_no_ad' },
    ],
    required: ['name', 'type'],
  },
  {
    title: 'VAST 4.2 creatives',
    path: '/v2/vast/creatives',
    object: 'vast4_creative',
    parent: 'ad_id',
    setup: async (api) => ({ ad: await ad(api) }),
    create: (n, s) => ({ ad_id: s.ad, sequence: String(n), api_framework: 'omid' }),
    update: { companion_required: 'All', sequence: '7' },
    invalid: [
      { body: { ad_id: MISSING }, field: 'ad_id' },
      { body: { ad_id: 'first' }, field: 'ad_id' },
      { body: { companion_required: 'any' }, field: 'companion_required' },
      { body: { sequence: '-1' }, field: 'sequence' },
    ],
    required: ['ad_id'],
  },
  {
    title: 'VAST 4.2 linears',
    path: '/v2/vast/linears',
    object: 'vast4_linear',
    parent: 'creative_id',
    setup: async (api) => ({ creative: await creative(api), icon: await icon(api) }),
    create: (n, s) => ({
      creative_id: s.creative,
      duration: `00:00:${10 + n}`,
      skip_offset: '00:00:05',
      skip_offset_type: 'time',
      destination_url: 'https://advertiser.example.com/',
      icons: [s.icon],
      click_tracking_links: ['https://track.example.com/click'],
      custom_click_links: [{ custom_id: 'more', uri: 'https://track.example.com/more' }],
      tracking_events: [{ uri: 'https://track.example.com/start', event_type: 'start' }, { uri: 'https://track.example.com/p', event_type: 'progress', offset_type: 'percentage', offset_amount: '10' }],
    }),
    update: { skip_offset: '25', skip_offset_type: 'percentage', parameter_encoding: '1', ad_parameters: '&lt;x/&gt;' },
    invalid: [
      { body: { creative_id: MISSING }, field: 'creative_id' },
      { body: { duration: '30s' }, field: 'duration' },
      { body: { skip_offset_type: 'frames' }, field: 'skip_offset_type' },
      { body: { skip_offset: '00:00:05', skip_offset_type: 'percentage' }, field: 'skip_offset' },
      { body: { parameter_encoding: 'xml' }, field: 'parameter_encoding' },
      { body: { icons: [MISSING] }, field: 'icons' },
      { body: { tracking_events: [{ uri: 'https://t.example.com/', event_type: 'impression' }] }, field: 'tracking_events' },
      { body: { tracking_events: [{ uri: 'https://t.example.com/', event_type: 'progress', offset_type: 'time', offset_amount: '10' }] }, field: 'tracking_events' },
      { body: { custom_click_links: [{ custom_id: 'x' }] }, field: 'custom_click_links' },
    ],
    required: ['creative_id'],
  },
  {
    title: 'VAST 4.2 non-linears',
    path: '/v2/vast/non-linears',
    object: 'vast4_non_linear',
    parent: 'creative_id',
    ignore: ['min_suggested_duration'],
    setup: async (api) => ({ creative: await creative(api), resource: await resource(api) }),
    create: (n, s) => ({ creative_id: s.creative, resources: [s.resource], width: 300 + n, height: 50, min_suggested_duration: '00:00:10', tracking_events: [{ uri: 'https://t.example.com/c', event_type: 'close' }] }),
    update: { scalable: true, expanded_width: 600, expanded_height: 100 },
    invalid: [
      { body: { creative_id: MISSING }, field: 'creative_id' },
      { body: { resources: [] }, field: 'resources' },
      { body: { resources: [MISSING] }, field: 'resources' },
      { body: { width: 0 }, field: 'width' },
      { body: { min_suggested_duration: true }, field: 'min_suggested_duration' },
    ],
    required: ['creative_id', 'resources'],
  },
  {
    title: 'VAST 4.2 media files',
    path: '/v2/vast/media-files',
    object: 'vast4_media_file',
    parent: 'linear_id',
    ignore: ['file_uri'],
    setup: async (api) => ({ linear: await linear(api) }),
    create: (n, s) => ({ linear_id: s.linear, file_uri: `https://cdn.example.com/v${n}.mp4`, mime_type: 'video/mp4', width: 1280, height: 720, bitrate: 2400 + n, bytes: 5_000_000_000 }),
    update: { delivery: 'streaming', media_type: '360', min_bitrate: 1200, max_bitrate: 4800 },
    invalid: [
      { body: { linear_id: MISSING }, field: 'linear_id' },
      { body: { mime_type: 'video/quicktime' }, field: 'mime_type' },
      { body: { delivery: 'download' }, field: 'delivery' },
      { body: { media_type: '2d' }, field: 'media_type' },
      { body: { file_uri: 7 }, field: 'file_uri' },
      { body: { video_creative_id: MISSING }, field: 'video_creative_id' },
    ],
    required: ['linear_id'],
  },
  {
    title: 'VAST 4.2 mezzanines',
    path: '/v2/vast/mezzanines',
    object: 'vast4_mezzanine',
    parent: 'linear_id',
    ignore: ['file_uri'],
    setup: async (api) => ({ linear: await linear(api) }),
    create: (n, s) => ({ linear_id: s.linear, file_uri: `https://cdn.example.com/m${n}.mp4`, mime_type: 'video/mp4', width: 1920, height: 1080 }),
    update: { codec: 'avc1.4d401e', bytes: 123456 },
    invalid: [
      { body: { linear_id: MISSING }, field: 'linear_id' },
      { body: { height: 10001 }, field: 'height' },
      { body: { bytes: -1 }, field: 'bytes' },
    ],
    required: ['linear_id'],
  },
  {
    title: 'VAST 4.2 closed caption files',
    path: '/v2/vast/closed-caption-files',
    object: 'vast4_closed_caption_file',
    parent: 'linear_id',
    setup: async (api) => ({ linear: await linear(api) }),
    create: (n, s) => ({ linear_id: s.linear, file_uri: `https://cdn.example.com/c${n}.vtt`, mime_type: 'text/vtt', language: 'en-US' }),
    update: { language: 'fr', mime_type: 'application/x-subrip' },
    invalid: [
      { body: { linear_id: MISSING }, field: 'linear_id' },
      { body: { mime_type: 'text/srt' }, field: 'mime_type' },
      { body: { language: 'English' }, field: 'language' },
      { body: { creative_id: 5 }, field: 'file_uri' },
    ],
    required: ['linear_id'],
  },
  {
    title: 'VAST 4.2 icons',
    path: '/v2/vast/icons',
    object: 'vast4_icon',
    setup: async (api) => ({ resource: await resource(api) }),
    create: (n, s) => ({ resources: [s.resource], program: `AdChoices ${n}`, width: 20, height: 20, x_position: 0, y_position: 0, duration: '00:00:15', offset: '00:00:01.500' }),
    update: { hover_text: 'Why this ad?', pixel_ratio: 2 },
    invalid: [
      { body: { resources: [MISSING] }, field: 'resources' },
      { body: { offset: '1s' }, field: 'offset' },
      { body: { pixel_ratio: 0 }, field: 'pixel_ratio' },
      { body: { view_tracking_links: ['not a url'] }, field: 'view_tracking_links' },
    ],
    required: ['resources'],
  },
  {
    title: 'VAST 4.2 icon click fallback images',
    path: '/v2/vast/icon-click-fallback-images',
    object: 'vast4_icon_click_fallback_image',
    parent: 'icon_id',
    setup: async (api) => ({ icon: await icon(api), resource: await resource(api) }),
    create: (n, s) => ({ icon_id: s.icon, resource_id: s.resource, width: 50 + n, height: 50 }),
    update: { alt_text: 'AdChoices' },
    invalid: [
      { body: { icon_id: MISSING }, field: 'icon_id' },
      { body: { resource_id: MISSING }, field: 'resource_id' },
      { body: { width: -1 }, field: 'width' },
    ],
    required: ['icon_id', 'resource_id'],
  },
  {
    title: 'VAST 4.2 interactive creative files',
    path: '/v2/vast/interactive-creative-files',
    object: 'vast4_interactive_creative_file',
    parent: 'linear_id',
    setup: async (api) => ({ linear: await linear(api) }),
    create: (n, s) => ({ linear_id: s.linear, file_uri: `https://cdn.example.com/i${n}.html`, api_framework: 'SIMID' }),
    update: { variable_duration: 'true' },
    invalid: [
      { body: { linear_id: MISSING }, field: 'linear_id' },
      { body: { mime_type: 'application/javascript' }, field: 'mime_type' },
      { body: { variable_duration: true }, field: 'variable_duration' },
      { body: { creative_id: 3 }, field: 'file_uri' },
    ],
    required: ['linear_id'],
  },
  {
    title: 'VAST 4.2 resources',
    path: '/v2/vast/resources',
    object: 'vast4_resource',
    create: (n) => ({ type: 'static', static_uri: `https://cdn.example.com/r${n}.png`, static_type: 'image/png' }),
    update: { type: 'html', html_content: '<b>ad</b>' },
    invalid: [
      { body: { type: 'script' }, field: 'type' },
      { body: { static_type: 'image/bmp' }, field: 'static_type' },
      { body: { iframe_uri: 'javascript:alert(1)' }, field: 'iframe_uri' },
      { body: { static_file_id: MISSING }, field: 'static_file_id' },
    ],
    required: [],
  },
  {
    title: 'VAST 4.2 Universal Ad IDs',
    path: '/v2/vast/universal-ad-ids',
    object: 'vast4_universal_ad_id',
    parent: 'creative_id',
    setup: async (api) => ({ creative: await creative(api) }),
    create: (n, s) => ({ creative_id: s.creative, universal_ad_id: `ABCD000${n}000H`, universal_id_registry: 'ad-id.org' }),
    update: { universal_id_registry: 'unknown' },
    invalid: [
      { body: { creative_id: MISSING }, field: 'creative_id' },
      { body: { universal_ad_id: '' }, field: 'universal_ad_id' },
      { body: { universal_id_registry: 'x'.repeat(256) }, field: 'universal_id_registry' },
    ],
    required: ['creative_id', 'universal_ad_id', 'universal_id_registry'],
  },
  {
    title: 'VAST 4.2 companions',
    path: '/v2/vast/companions',
    object: 'vast4_companion',
    parent: 'creative_id',
    setup: async (api) => ({ creative: await creative(api), resource: await resource(api) }),
    create: (n, s) => ({ creative_id: s.creative, resources: [s.resource], width: 300, height: 250 + n, view_tracking_links: ['https://t.example.com/v'] }),
    update: { render_mode: 'end card', ad_slot_id: 'sidebar', pixel_ratio: 1.5 },
    invalid: [
      { body: { creative_id: MISSING }, field: 'creative_id' },
      { body: { render_mode: 'end-card' }, field: 'render_mode' },
      { body: { resources: [MISSING] }, field: 'resources' },
    ],
    required: ['creative_id', 'resources'],
  },
  {
    title: 'VAST 4.2 placements',
    path: '/v2/vast/placements',
    object: 'vast4_placement',
    ignore: ['priority'],
    setup: async (api) => ({ ad: await ad(api), ...(await delivery(api)) }),
    create: (_n, s) => ({ advertisement: { id: s.ad, type: 'vast4_ad_item' }, zone: s.zone, schedule: s.schedule, cost: { cpm: 2.5 } }),
    update: { active: false, priority: 'sponsorship', max_frequency: 3, max_frequency_period: 1, max_frequency_type: 'start' },
    invalid: [
      { body: { advertisement: { id: MISSING, type: 'vast4_ad_item' } }, field: 'advertisement' },
      { body: { advertisement: { id: 1, type: 'vast_ad_item' } }, field: 'advertisement' },
      { body: { channel: MISSING }, field: 'channel' },
      { body: { zone: 0 }, field: 'zone' },
      { body: { schedule: MISSING }, field: 'schedule' },
      { body: { priority: 'urgent' }, field: 'priority' },
      { body: { max_frequency: 3 }, field: 'max_frequency_period' },
      { body: { max_frequency_type: 'click' }, field: 'max_frequency_type' },
      { body: { payout: { type: 'flat' } }, field: 'payout' },
    ],
    required: ['advertisement', 'zone', 'schedule'],
  },
  {
    title: 'VAST 4.2 campaign assignments',
    path: '/v2/vast/campaign-assignments',
    object: 'vast4_campaign_assignment',
    parent: 'ad_item',
    setup: async (api) => ({ ad: await ad(api), ...(await delivery(api)) }),
    create: (_n, s) => ({ ad_item: s.ad, campaign: s.campaign }),
    update: { active: false },
    invalid: [
      { body: { ad_item: MISSING }, field: 'ad_item' },
      { body: { campaign: 0 }, field: 'campaign' },
      { body: { campaign: MISSING }, field: 'campaign' },
      { body: { active: 'yes' }, field: 'active' },
    ],
    required: ['ad_item', 'campaign'],
  },
];

for (const c of CASES) {
  describeCrud(c.title, {
    version: 'v2',
    path: c.path,
    object: c.object,
    setup: c.setup,
    create: (_api, n, s) => c.create(n, s),
    update: c.update,
    invalid: c.invalid,
    required: c.required,
  });
}

describe('VAST 4.2 model specifics', () => {
  let acct: TestAccount;
  let api: Client;
  beforeAll(async () => {
    acct = await newAccount();
    api = acct.test;
  });

  test.each(CASES.map((c) => [c.path, c]))('%s: answers fit the reference; its errors have the reference shapes', async (_p, c) => {
    const setup = c.setup ? await c.setup(api) : {};
    const opts = { ignore: c.ignore ?? [] };
    const created = await post(api, c.path, c.create(1, setup));
    expectReferenceShape(c.path, 'post', created, opts);
    expectReferenceShape(`${c.path}/{id}`, 'get', (await api.get(`${c.path}/${created.id}`)).body, opts);
    const updated = await api.put(`${c.path}/${created.id}`, c.update);
    expect(updated.status).toBe(200);
    expectReferenceShape(`${c.path}/{id}`, 'put', updated.body, opts);
    const list = await api.get(`${c.path}?id=${created.id}`);
    expect(list.body).toMatchObject({ object: 'list', url: c.path, data: [updated.body] });
    expectReferenceShape(c.path, 'get', list.body, opts);
    expectReferenceShape(c.path, 'get', (await api.get(c.path)).body, opts);

    // A required field left out: 400 naming it.
    if (c.required.length) {
      const body = c.create(2, setup);
      delete body[c.required[0]];
      const err = expectError(await api.post(c.path, body), 400, 'v2');
      expect(err.type).toBe('invalid_request_parameters_error');
      expect(paramFor(err, c.required[0]).type).toBe('missing_field');
      expectReferenceSchema('request_parameter_error', err);
    }
    // A parent that does not exist: 400 naming the reference.
    if (c.parent) {
      const err = expectError(await api.post(c.path, { ...c.create(3, setup), [c.parent]: MISSING }), 400, 'v2');
      expect(paramFor(err, c.parent).type).toBe('invalid_reference');
      expectReferenceSchema('request_parameter_error', err);
    }
    // An id that does not exist: 404, for every operation on it.
    for (const res of [await api.get(`${c.path}/${MISSING}`), await api.put(`${c.path}/${MISSING}`, c.update), await api.del(`${c.path}/${MISSING}`)]) {
      const err = expectError(res, 404, 'v2');
      expect(err.type).toBe('resource_not_found_error');
      expectReferenceSchema('error_resource_does_not_exist', err);
    }
    const deleted = await api.del(`${c.path}/${created.id}`);
    expect(deleted.body).toEqual({ id: created.id, deleted: true });
    expectReferenceShape(`${c.path}/{id}`, 'delete', deleted.body);
  });

  test('deleting an ad deletes its creatives, their linears and everything under them', async () => {
    const a = await ad(api);
    const other = await ad(api);
    const cr = await creative(api, a);
    const li = await linear(api, cr);
    const res = await resource(api);
    const d = await delivery(api);
    const below = [
      `/v2/vast/creatives/${cr}`,
      `/v2/vast/linears/${li}`,
      `/v2/vast/non-linears/${(await post(api, '/v2/vast/non-linears', { creative_id: cr, resources: [res] })).id}`,
      `/v2/vast/companions/${(await post(api, '/v2/vast/companions', { creative_id: cr, resources: [res] })).id}`,
      `/v2/vast/universal-ad-ids/${(await post(api, '/v2/vast/universal-ad-ids', { creative_id: cr, universal_ad_id: 'X', universal_id_registry: 'unknown' })).id}`,
      `/v2/vast/media-files/${(await post(api, '/v2/vast/media-files', { linear_id: li, file_uri: 'https://cdn.example.com/a.mp4' })).id}`,
      `/v2/vast/mezzanines/${(await post(api, '/v2/vast/mezzanines', { linear_id: li })).id}`,
      `/v2/vast/closed-caption-files/${(await post(api, '/v2/vast/closed-caption-files', { linear_id: li })).id}`,
      `/v2/vast/interactive-creative-files/${(await post(api, '/v2/vast/interactive-creative-files', { linear_id: li })).id}`,
      `/v2/vast/placements/${(await post(api, '/v2/vast/placements', { advertisement: { id: a, type: 'vast4_ad_item' }, channel: d.channel, schedule: d.schedule })).id}`,
      `/v2/vast/campaign-assignments/${(await post(api, '/v2/vast/campaign-assignments', { ad_item: a, campaign: d.campaign })).id}`,
    ];
    const otherCreative = await creative(api, other);
    const kept = [`/v2/vast/ads/${other}`, `/v2/vast/creatives/${otherCreative}`, `/v2/vast/resources/${res}`];
    for (const p of [...below, ...kept]) expect([p, (await api.get(p)).status]).toEqual([p, 200]);
    expect((await api.del(`/v2/vast/ads/${a}`)).body).toEqual({ id: a, deleted: true });
    expectError(await api.get(`/v2/vast/ads/${a}`), 404, 'v2');
    for (const p of below) expect([p, (await api.get(p)).status]).toEqual([p, 404]);
    for (const p of kept) expect([p, (await api.get(p)).status]).toEqual([p, 200]);
  });

  test('deleting an icon or the resource of a fallback image deletes the image', async () => {
    const i = await icon(api);
    const r = await resource(api);
    const byIcon = await post(api, '/v2/vast/icon-click-fallback-images', { icon_id: i, resource_id: r });
    const byResource = await post(api, '/v2/vast/icon-click-fallback-images', { icon_id: await icon(api), resource_id: await resource(api) });
    await api.del(`/v2/vast/icons/${i}`);
    expectError(await api.get(byIcon.self), 404, 'v2');
    await api.del(`/v2/vast/resources/${byResource.resource_id}`);
    expectError(await api.get(byResource.self), 404, 'v2');
  });

  test('defaults, and ids given as the reference types them', async () => {
    const a = await post(api, '/v2/vast/ads', { name: 'A', type: 'inline' });
    expect(a).toMatchObject({ object: 'vast4_ad_item', self: `/v2/vast/ads/${a.id}`, ad_url: null, follow_additional_wrappers: true, allow_multiple_ads: false, fallback_on_no_ad: false });
    // The reference gives a creative's ad_id as a string; a numeric string is accepted as well.
    const cr = await post(api, '/v2/vast/creatives', { ad_id: String(a.id) });
    expect(cr).toMatchObject({ ad_id: String(a.id), sequence: null, companion_required: null });
    const expanded = await api.get(`${cr.self}?expand=ad_id`);
    expect(expanded.body.ad_id).toEqual([a]);
    const mf = await post(api, '/v2/vast/media-files', { linear_id: await linear(api, cr.id) });
    expect(mf).toMatchObject({ delivery: 'progressive', media_type: '2D', video_creative_id: null, file_uri: null, scalable: false });
    const d = await delivery(api);
    const p = await post(api, '/v2/vast/placements', { advertisement: { id: a.id, type: 'vast4_ad_item' }, zone: d.zone, schedule: d.schedule });
    expect(p).toMatchObject({ advertisement: { id: a.id, type: 'vast4_ad_item' }, zone: d.zone, channel: null, active: true, priority: 'standard', serve_method: 'weight', use_channel_priority: false });
    expect((await post(api, '/v2/vast/companions', { creative_id: cr.id, resources: [await resource(api)] })).pixel_ratio).toBe(1);
  });

  test('cross-field rules', async () => {
    const wrapper = await api.post('/v2/vast/ads', { name: 'W', type: 'wrapper' });
    expect(paramFor(expectError(wrapper, 400, 'v2'), 'ad_url').type).toBe('missing_field');
    // A media file, mezzanine, caption or interactive file and a static resource each come from one source.
    const group = await post(api, '/v2/media-groups', { name: 'Videos' });
    const video = await post(api, '/v2/creatives/video', { group: group.id, file_url: 'https://cdn.example.com/v.mp4' });
    const li = await linear(api);
    const fromLibrary = await post(api, '/v2/vast/media-files', { linear_id: li, video_creative_id: video.id });
    paramFor(expectError(await api.put(fromLibrary.self, { file_uri: 'https://cdn.example.com/v.mp4' }), 400, 'v2'), 'file_uri');
    expect((await api.put(fromLibrary.self, { video_creative_id: null, file_uri: 'https://cdn.example.com/v.mp4' })).status).toBe(200);
    const image = await post(api, '/v2/creatives/image', { group: group.id, file_url: 'https://cdn.example.com/i.png' });
    paramFor(expectError(await api.post('/v2/vast/resources', { static_file_id: image.id, static_uri: 'https://cdn.example.com/i.png' }), 400, 'v2'), 'static_uri');
    // A skip offset is written as its type says.
    const l = await api.get(`/v2/vast/linears/${li}`);
    paramFor(expectError(await api.put(l.body.self, { skip_offset_type: 'percentage', skip_offset: '00:00:05' }), 400, 'v2'), 'skip_offset');
    // A placement: zone or channel, not both, not neither; its serve method is set once.
    const a = await ad(api);
    const d = await delivery(api);
    const neither = await api.post('/v2/vast/placements', { advertisement: { id: a, type: 'vast4_ad_item' }, schedule: d.schedule });
    expect(paramFor(expectError(neither, 400, 'v2'), 'zone').type).toBe('missing_field');
    const both = await api.post('/v2/vast/placements', { advertisement: { id: a, type: 'vast4_ad_item' }, schedule: d.schedule, zone: d.zone, channel: d.channel });
    paramFor(expectError(both, 400, 'v2'), 'channel');
    const p = await post(api, '/v2/vast/placements', { advertisement: { id: a, type: 'vast4_ad_item' }, schedule: d.schedule, channel: d.channel, serve_method: 'auction' });
    expect(paramFor(expectError(await api.put(p.self, { serve_method: 'weight' }), 400, 'v2'), 'serve_method').type).toBe('read_only');
    expect((await api.put(p.self, { channel: null, zone: d.zone })).body).toMatchObject({ zone: d.zone, channel: null, serve_method: 'auction' });
  });
});
