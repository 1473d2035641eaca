/**
 * The targeting groups of the v2 API (geo, day-parting, platform, postal-code, list and data-key targets,
 * data lists, data keys, channels and their zone assignments): the shared CRUD behaviour, and the rules
 * the field language cannot say, checked in inventory.
 */
import { expectError, newAccount, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';

async function zone(api: Client) {
  const res = await api.post('/v2/zones/standard', { name: 'Zone', width: 300, height: 250 });
  expect(res.status).toBe(200);
  return res.body.id as number;
}

async function created(api: Client, path: string, body: Record<string, unknown>) {
  const res = await api.post(path, body);
  expect(res.status).toBe(200);
  return res.body.id as number;
}

describeCrud('geo targets', {
  version: 'v2',
  path: '/v2/geo-targets',
  object: 'geo_target',
  create: (_api, n) => ({ name: `Geo ${n}`, areas: [{ country: 'US', region: 'New York' }, { continent: 'Europe' }], inclusive: true }),
  update: { name: 'Renamed', range: 5, unit: 'miles' },
  invalid: [
    { body: { areas: [] }, field: 'areas' },
    { body: { areas: [{ country: 'usa' }] }, field: 'areas' },
    { body: { areas: [{ continent: 'Atlantis' }] }, field: 'areas' },
    { body: { unit: 'furlongs' }, field: 'unit' },
  ],
  required: ['name', 'areas'],
});

describeCrud('day parting', {
  version: 'v2',
  path: '/v2/day-parting',
  object: 'day_parting',
  create: (_api, n) => ({ name: `Office hours ${n}`, ranges: { monday: ['09:00:00-17:00:00'], saturday: [] } }),
  update: { use_member_timezone: true, timezone: 'America/New_York' },
  invalid: [
    { body: { ranges: { monday: ['17:00:00-09:00:00'] } }, field: 'ranges' },
    { body: { ranges: { monday: ['9-5'] } }, field: 'ranges' },
    { body: { ranges: { funday: ['09:00:00-10:00:00'] } }, field: 'ranges' },
    { body: { timezone: 'Mars/Olympus_Mons' }, field: 'timezone' },
  ],
  required: ['name', 'ranges'],
});

describeCrud('platform targets', {
  version: 'v2',
  path: '/v2/platform-targets',
  object: 'platform_target',
  create: (_api, n) => ({ name: `Phones ${n}`, platform: 'mobile' }),
  update: { platform: 'specific', browser_targets: { desktop: { chrome: true, firefox: true } }, os_targets: { mobile: { ios: true } } },
  invalid: [
    { body: { platform: 'watch' }, field: 'platform' },
    { body: { browser_targets: { desktop: { netscape: true } } }, field: 'browser_targets' },
  ],
  required: ['name'],
});

describeCrud('postal code targets', {
  version: 'v2',
  path: '/v2/postal-code-targets',
  object: 'postal_code_target',
  create: (_api, n) => ({ label: `Downtown ${n}`, locations: [{ country: 'JP', postal_codes: ['770-0806', '770-0003'] }] }),
  update: { inclusive: false },
  invalid: [
    { body: { locations: [{ country: 'JP' }] }, field: 'locations' },
    { body: { locations: [{ country: 'JP', postal_codes: [] }] }, field: 'locations' },
  ],
  required: ['label', 'locations'],
});

describeCrud('data lists', {
  version: 'v2',
  path: '/v2/data-lists',
  object: 'data_list',
  create: (_api, n) => ({ label: `Subscribers ${n}`, key: 'user', values: ['u1', 'u2'] }),
  update: { values: ['u3'] },
  invalid: [{ body: { values: [''] }, field: 'values' }],
  required: ['label'],
});

describeCrud('list targets', {
  version: 'v2',
  path: '/v2/list-targets',
  object: 'list_target',
  create: async (api, n) => ({ label: `Only subscribers ${n}`, data_list: await created(api, '/v2/data-lists', { label: 'L' }) }),
  update: { inclusive: false },
  invalid: [{ body: { data_list: 999999999 }, field: 'data_list' }],
  required: ['label'],
});

describeCrud('data keys', {
  version: 'v2',
  path: '/v2/data-keys',
  object: 'data_key',
  create: (_api, n) => ({ name: `key_${n}_${Date.now()}`, type: 'STRING' }),
  update: { type: 'NUMBER' },
  invalid: [
    { body: { type: 'BLOB' }, field: 'type' },
    { body: { name: '9lives' }, field: 'name' },
    { body: { name: 'a'.repeat(33) }, field: 'name' },
  ],
  required: ['name', 'type'],
});

describeCrud('data key targets', {
  version: 'v2',
  path: '/v2/data-key-targets',
  object: 'data_key_target',
  setup: async (api) => {
    await api.post('/v2/data-keys', { name: 'plan', type: 'STRING' });
    await api.post('/v2/data-keys', { name: 'age', type: 'NUMBER' });
    return {};
  },
  create: (_api, n) => ({ name: `Gold ${n}`, target: JSON.stringify(['OR', { plan: { '=': 'gold' } }, ['AND', { age: { '>=': 18 } }, { plan: { '!=': 'free' } }]]) }),
  update: { name: 'Renamed' },
  invalid: [
    { body: { target: 'not json' }, field: 'target' },
    { body: { target: '["XOR", {"plan": {"=": "gold"}}]' }, field: 'target' },
    { body: { target: '["OR", {"plan": {"~": "gold"}}]' }, field: 'target' },
    { body: { target: '["OR", {"shoe_size": {"=": "9"}}]' }, field: 'target' },
  ],
  required: ['name', 'target'],
});

describeCrud('channels', {
  version: 'v2',
  path: '/v2/channels',
  object: 'channel',
  create: (_api, n) => ({ name: `Sports ${n}`, priority: 'house' }),
  update: { use_share_of_voice: true },
  invalid: [{ body: { priority: 'urgent' }, field: 'priority' }],
  required: ['name'],
});

describeCrud('channel zone assignments', {
  version: 'v2',
  path: '/v2/channel-zone-assignments',
  object: 'channel_zone_assignment',
  operations: ['list', 'create', 'get', 'delete'],
  setup: async (api) => ({ channel: await created(api, '/v2/channels', { name: 'C' }) }),
  create: async (api, _n, s) => ({ channel: s.channel, zone: { id: await zone(api), type: 'standard_zone' } }),
  update: {},
  invalid: [
    { body: { channel: 999999999 }, field: 'channel' },
    { body: { zone: { id: 999999999, type: 'standard_zone' } }, field: 'zone' },
    { body: { zone: { id: 1, type: 'text_zone' } }, field: 'zone' },
  ],
  required: ['channel', 'zone'],
});

describe('targeting rules', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await newAccount();
  });

  test('a data key name is unique in the account (409), and a zone joins a channel once', async () => {
    const api = acct.test;
    expect((await api.post('/v2/data-keys', { name: 'region', type: 'STRING' })).status).toBe(200);
    expectError(await api.post('/v2/data-keys', { name: 'region', type: 'NUMBER' }), 409, 'v2');
    const channel = await created(api, '/v2/channels', { name: 'News' });
    const z = await zone(api);
    expect((await api.post('/v2/channel-zone-assignments', { channel, zone: { id: z, type: 'standard_zone' } })).status).toBe(200);
    expectError(await api.post('/v2/channel-zone-assignments', { channel, zone: { id: z, type: 'standard_zone' } }), 409, 'v2');
  });

  test('uses_advanced_format says whether ranges go below whole hours', async () => {
    const whole = await acct.test.post('/v2/day-parting', { name: 'Hours', ranges: { friday: ['00:00:00-24:00:00'] } });
    expect(whole.body).toMatchObject({ uses_advanced_format: false, ranges: { friday: ['00:00:00-24:00:00'] } });
    const fine = await acct.test.post('/v2/day-parting', { name: 'Lunch', ranges: { friday: ['12:30:00-13:15:00'] } });
    expect(fine.body.uses_advanced_format).toBe(true);
  });

  test('a placement goes into a zone or onto a channel, never both or neither; deleting its target lifts the target', async () => {
    const api = acct.test;
    const ad = await created(api, '/v2/ad-items/custom-html', { name: 'Ad', width: 300, height: 250, custom_html: '<b>ad</b>' });
    const schedule = await created(api, '/v2/schedules', { start_date: '2030-01-01 00:00:00' });
    const channel = await created(api, '/v2/channels', { name: 'Sports' });
    const geo = await created(api, '/v2/geo-targets', { name: 'US', areas: [{ country: 'US' }] });
    const advertisement = { id: ad, type: 'custom_html_ad_item' };
    const onChannel = await api.post('/v2/placements', { advertisement, channel, schedule, geo_target: geo });
    expect(onChannel.status).toBe(200);
    expect(onChannel.body).toMatchObject({ channel, zone: null, geo_target: geo });
    const both = await api.post('/v2/placements', { advertisement, channel, zone: { id: await zone(api), type: 'standard_zone' }, schedule });
    expectError(both, 400, 'v2');
    expect(both.body.parameters[0].field).toBe('channel');
    const neither = await api.post('/v2/placements', { advertisement, schedule });
    expectError(neither, 400, 'v2');
    expect(neither.body.parameters[0].field).toBe('zone');
    expectError(await api.post('/v2/placements', { advertisement, channel, schedule, platform_target: 999999999 }), 400, 'v2');

    expect((await api.del(`/v2/geo-targets/${geo}`)).status).toBe(200);
    expect((await api.get(`/v2/placements/${onChannel.body.id}`)).body.geo_target).toBeNull();
    // The channel owns its placements: deleting it deletes them.
    expect((await api.del(`/v2/channels/${channel}`)).status).toBe(200);
    expectError(await api.get(`/v2/placements/${onChannel.body.id}`), 404, 'v2');
  });

  test('channels archive and unarchive like other archivable resources', async () => {
    const api = acct.test;
    const channel = await created(api, '/v2/channels', { name: 'Seasonal' });
    const archived = await api.get(`/v2/channels/${channel}/archive`);
    expect(archived.status).toBe(200);
    expectError(await api.get(`/v2/channels/${channel}`), 404, 'v2');
    expect((await api.get(`/v2/channels/archived/${channel}`)).status).toBe(200);
    expect((await api.get(`/v2/channels/archived/${channel}/unarchive`)).status).toBe(200);
    expect((await api.get(`/v2/channels/${channel}`)).status).toBe(200);
  });
});
