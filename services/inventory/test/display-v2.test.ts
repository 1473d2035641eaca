/**
 * The v2 views of the display resources: standard and email zones, standard campaigns, image and flash
 * ad items, campaign assignments, flexible types, and their tags, conversion tags and archives.
 */
import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';

const IMG = 'https://cdn.example.com/banner.png';

async function make(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

describeCrud('standard zones', {
  version: 'v2',
  path: '/v2/zones/standard',
  object: 'standard_zone',
  create: (_api, n) => ({ name: `Standard zone ${n}`, width: 300, height: 250, iab_categories: ['IAB1', 'IAB19'], bid_floor: 0.5 }),
  update: { name: 'Renamed standard zone', auction_tie_break: 'SCORE', metadata: { section: 'sports' } },
  invalid: [
    { body: { auction_tie_break: 'COIN' }, field: 'auction_tie_break' },
    { body: { iab_categories: 'IAB1' }, field: 'iab_categories' },
    { body: { bid_floor: -1 }, field: 'bid_floor' },
    { body: { publisher: 999999999 }, field: 'publisher' },
  ],
  required: ['name'],
  newestFirst: false,
});

describeCrud('email zones', {
  version: 'v2',
  path: '/v2/zones/email',
  object: 'email_zone',
  create: (_api, n) => ({ name: `Email zone ${n}`, width: 600, height: 100, uid_rotate: n === 0 }),
  update: { uid_rotate: true },
  invalid: [{ body: { uid_rotate: 'yes' }, field: 'uid_rotate' }, { body: { width: null }, field: 'width' }],
  required: ['name', 'width', 'height'],
});

describeCrud('standard campaigns', {
  version: 'v2',
  path: '/v2/campaigns/standard',
  object: 'standard_campaign',
  create: async (api, n) => ({ name: `Standard campaign ${n}`, advertiser: (await make(api, '/v2/advertisers', { name: `Owner ${n}` })).id }),
  update: { name: 'Renamed campaign', roadblock_tags: 'tag1' },
  invalid: [{ body: { advertiser: 999999999 }, field: 'advertiser' }, { body: { metadata: [] }, field: 'metadata' }],
  required: ['name'],
});

describeCrud('image ad items', {
  version: 'v2',
  path: '/v2/ad-items/image',
  object: 'image_ad_item',
  create: (_api, n) => ({ name: `Image ad item ${n}`, width: 728, height: 90, creative_url: IMG, html_target: '_top' }),
  update: { name: 'Renamed ad item', html_alt_text: 'Alt' },
  invalid: [
    { body: { height: -5 }, field: 'height' },
    { body: { creative: 999999999 }, field: 'creative' },
    { body: { location: 'javascript:alert(1)' }, field: 'location' },
  ],
  required: ['name', 'width', 'height'],
});

describeCrud('campaign assignments', {
  version: 'v2',
  path: '/v2/campaign-assignments',
  object: 'campaign_assignment',
  create: async (api, n) => {
    const c = await make(api, '/v2/campaigns/standard', { name: `C${n}` });
    const a = await make(api, '/v2/ad-items/image', { name: `A${n}`, width: 300, height: 250, creative_url: IMG });
    return { campaign: { id: c.id, type: 'standard_campaign' }, advertisement: { id: a.id, type: 'image_ad_item' } };
  },
  update: { weight: 9 },
  invalid: [{ body: { weight: 'heavy' }, field: 'weight' }],
  required: ['campaign', 'advertisement'],
});

describeCrud('flexible types', {
  version: 'v2',
  path: '/v2/flexible-types',
  object: 'flexible_type',
  create: (_api, n) => ({ name: `Flex ${n}`, width: 160, height: 600 }),
  update: { name: 'Wide skyscraper' },
  invalid: [{ body: { width: 'x' }, field: 'width' }],
  required: ['name', 'width', 'height'],
});

describe('v2 specifics', () => {
  let acct: TestAccount;
  let api: Client;
  beforeAll(async () => {
    acct = await newAccount();
    api = acct.test;
  });

  test('image ad items show is_self_serve as a string and flexible_type; v1 and v2 share them', async () => {
    const item = await make(api, '/v2/ad-items/image', { name: 'Shared', width: 300, height: 250, creative_url: IMG });
    expect(item).toMatchObject({ object: 'image_ad_item', is_self_serve: 'false', flexible_type: 0, self: `/v2/ad-items/image/${item.id}` });
    const v1 = await api.get(`/v1/banners/image/${item.id}`);
    expect(v1.body).toMatchObject({ object: 'image_banner', name: 'Shared' });
    expect(v1.body).not.toHaveProperty('is_self_serve');
    expect(v1.body.flexible_type).toBeNull();
    // v2 shows "no flexible type" as 0 and reads 0 back as none.
    const none = await make(api, '/v2/ad-items/image', { name: 'No type', width: 300, height: 250, creative_url: IMG, flexible_type: 0 });
    expect(none.flexible_type).toBe(0);
    paramFor(expectError(await api.post('/v2/ad-items/image', { name: 'x', width: 1, height: 1, creative_url: IMG, is_self_serve: 'true', bogus: 1 }), 400, 'v2'), 'bogus');
  });

  test('flash ad items: creation is disabled (400), list, retrieve and update work, delete is not supported', async () => {
    const created = await api.post('/v2/ad-items/flash', { name: 'Flash', width: 468, height: 60, creative_url: 'https://cdn.example.com/a.swf' });
    expect(expectError(created, 400, 'v2').message).toMatch(/disabled/);
    const legacy = await make(api, '/v1/banners/flash', { name: 'Legacy flash', width: 468, height: 60, creative_url: 'https://cdn.example.com/a.swf' });
    const list = await api.get('/v2/ad-items/flash');
    expect(list.body).toMatchObject({ object: 'list', url: '/v2/ad-items/flash' });
    expect(list.body.data.map((o: any) => o.id)).toContain(legacy.id);
    expect((await api.get(`/v2/ad-items/flash/${legacy.id}`)).body).toMatchObject({ object: 'flash_ad_item', mode: 'opaque', quality: 'high', version: '7' });
    const upd = await api.put(`/v2/ad-items/flash/${legacy.id}`, { version: '10', quality: 'medium' });
    expect(upd.body).toMatchObject({ version: '10', quality: 'medium' });
    expect((await api.put(`/v2/ad-items/flash/${legacy.id}`, { version: 12 })).body.version).toBe('12');
    expect((await api.get(`/v1/banners/flash/${legacy.id}`)).body.version).toBe(12);
    paramFor(expectError(await api.put(`/v2/ad-items/flash/${legacy.id}`, { version: 200 }), 400, 'v2'), 'version');
    expectError(await api.del(`/v2/ad-items/flash/${legacy.id}`), 501, 'v2');
  });

  test('standard and email zone tags and conversion tags; campaign and image ad item conversion tags', async () => {
    const std = await make(api, '/v2/zones/standard', { name: 'Std', width: 728, height: 90 });
    const mail = await make(api, '/v2/zones/email', { name: 'Mail', width: 600, height: 100 });
    const tags = await api.get(`/v2/zones/standard/${std.id}/tags?type=iframe-no-js,json`);
    expect(tags.body).toMatchObject({ object: 'zone_tag', url: `/v2/zones/standard/${std.id}/tags` });
    expect(Object.keys(tags.body.data).sort()).toEqual(['iframe-no-js', 'json']);
    expect(tags.body.data.json).toContain('size=728x90');
    expect((await api.get(`/v2/zones/email/${mail.id}/tags`)).body.data.email).toMatch(/^<a href=/);
    expectError(await api.get(`/v2/zones/standard/${std.id}/tags?type=ortb`), 400, 'v2');
    const camp = await make(api, '/v2/campaigns/standard', { name: 'Camp' });
    const item = await make(api, '/v2/ad-items/image', { name: 'Item', width: 300, height: 250, creative_url: IMG });
    for (const path of [`/v2/zones/standard/${std.id}`, `/v2/zones/email/${mail.id}`, `/v2/campaigns/standard/${camp.id}`, `/v2/ad-items/image/${item.id}`]) {
      const res = await api.get(`${path}/conversion-tag`);
      expect(res.body).toMatchObject({ object: 'conv_tag', url: `${path}/conversion-tag`, data: { src: expect.stringMatching(/^https:\/\/serve\.example\.test\//) } });
      expect(res.body.data.html).toMatch(/^<img /);
    }
    expectError(await acct.live.get(`/v2/campaigns/standard/${camp.id}/conversion-tag`), 404, 'v2');
    expectError(await api.get('/v2/ad-items/image/999999999/conversion-tag'), 404, 'v2');
  });

  test('zones and standard campaigns archive on their own; a campaign takes its assignments, restored when included', async () => {
    const zone = await make(api, '/v2/zones/standard', { name: 'To archive', width: 300, height: 250 });
    const z = await api.get(`/v2/zones/standard/${zone.id}/archive`);
    expect(z.body.data.archived_resources).toEqual([{ object: 'standard_zone', id: zone.id }]);
    expect((await api.get('/v2/zones/standard/archived')).body.data.map((o: any) => o.id)).toContain(zone.id);
    expect((await api.get(`/v2/zones/standard/archived/${zone.id}/unarchive`)).body.data.unarchived_resources).toEqual([{ object: 'standard_zone', id: zone.id }]);
    const mail = await make(api, '/v2/zones/email', { name: 'Mail archive', width: 600, height: 100 });
    await api.get(`/v2/zones/email/${mail.id}/archive`);
    expect((await api.get(`/v2/zones/email/archived/${mail.id}`)).body).toMatchObject({ id: mail.id, self: `/v2/zones/email/archived/${mail.id}` });

    const camp = await make(api, '/v2/campaigns/standard', { name: 'Archive me' });
    const item = await make(api, '/v2/ad-items/image', { name: 'In it', width: 300, height: 250, creative_url: IMG });
    const asg = await make(api, '/v2/campaign-assignments', { campaign: { id: camp.id, type: 'standard_campaign' }, advertisement: { id: item.id, type: 'image_ad_item' } });
    const archived = await api.get(`/v2/campaigns/standard/${camp.id}/archive`);
    expect(archived.body.data.archived_resources).toEqual([{ object: 'standard_campaign', id: camp.id }, { object: 'campaign_assignment', id: asg.id }]);
    expectError(await api.get(`/v2/campaign-assignments/${asg.id}`), 404, 'v2');
    const back = await api.get(`/v2/campaigns/standard/archived/${camp.id}/unarchive?include_campaign_assignments=true`);
    expect(back.body.data.unarchived_resources).toEqual([{ object: 'standard_campaign', id: camp.id }, { object: 'campaign_assignment', id: asg.id }]);
    expect((await api.get(`/v2/campaign-assignments/${asg.id}`)).body).toEqual(asg);
    // v1 has no archive for zones and campaigns.
    expectError(await api.get(`/v1/campaigns/banner/${camp.id}/archive`), 404, 'v1');
  });
});
