import { as, expectError, newAccount, paramFor, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';

const publisherInvalid = [
  { body: { name: '' }, field: 'name' },
  { body: { name: 42 }, field: 'name' },
  { body: { email: 'not-an-email' }, field: 'email' },
  { body: { password: 'short' }, field: 'password' },
  { body: { can_approve_ads: 'yes' }, field: 'can_approve_ads' },
  { body: { default_payout_percent: 'ten' }, field: 'default_payout_percent' },
  { body: { default_payout_percent: 150 }, field: 'default_payout_percent' },
];

describeCrud('publishers', {
  version: 'v1',
  path: '/v1/publishers',
  object: 'publisher',
  create: (_api, n) => ({ name: `Publisher ${n}`, email: `pub${n}@example.com`, password: 'correct horse', can_admin_account: n % 2 === 0, default_payout_percent: 12.5 }),
  update: { name: 'Renamed publisher', can_approve_ads: true },
  invalid: publisherInvalid,
  required: ['name'],
  hidden: ['password'],
});

describeCrud('advertisers', {
  version: 'v1',
  path: '/v1/advertisers',
  object: 'advertiser',
  create: (_api, n) => ({ name: `Advertiser ${n}`, email: `adv${n}@example.com`, can_add_banners: true }),
  update: { can_change_password: true, email: 'new@example.com' },
  invalid: [
    { body: { name: null }, field: 'name' },
    { body: { email: 'x@' }, field: 'email' },
    { body: { password: '1234567' }, field: 'password' },
    { body: { can_add_banners: 1 }, field: 'can_add_banners' },
  ],
  required: ['name'],
  hidden: ['password'],
});

describeCrud('publishers', {
  version: 'v2',
  path: '/v2/publishers',
  object: 'publisher',
  create: (_api, n) => ({ name: `Publisher ${n}`, can_view_wordpress_key: false, default_payout: { type: 'rate', cpm: 1.5 } }),
  update: { domain: 'news.example.com', seller_type: 'PUBLISHER' },
  invalid: [...publisherInvalid, { body: { default_payout: { type: 'fixed' } }, field: 'default_payout' }, { body: { seller_type: 'ME' }, field: 'seller_type' }],
  required: ['name'],
  hidden: ['password'],
});

describeCrud('advertisers', {
  version: 'v2',
  path: '/v2/advertisers',
  object: 'advertiser',
  create: (_api, n) => ({ name: `Advertiser ${n}`, can_add_ad_items: n > 0 }),
  update: { name: 'Renamed advertiser', metadata: { crm_id: 'A-17' } },
  invalid: [{ body: { name: '' }, field: 'name' }, { body: { metadata: 'x' }, field: 'metadata' }],
  required: ['name'],
  hidden: ['password'],
});

describe('publisher and advertiser specifics', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await newAccount();
  });

  test('a password is optional, at least 8 characters, never returned; has_password tells whether one was chosen', async () => {
    const without = await acct.test.post('/v1/advertisers', { name: 'No password' });
    expect(without.body.has_password).toBe(false);
    const blank = await acct.test.post('/v1/advertisers', { name: 'Blank password', password: '' });
    expect(blank.body.has_password).toBe(false);
    const withPw = await acct.test.post('/v1/advertisers', { name: 'With password', password: 'longenough' });
    expect(withPw.body.has_password).toBe(true);
    expect(JSON.stringify(withPw.body)).not.toContain('longenough');
    const set = await acct.test.put(`/v1/advertisers/${without.body.id}`, { password: 'now-it-has-one' });
    expect(set.body.has_password).toBe(true);
    const short = await acct.test.post('/v1/publishers', { name: 'P', password: 'short' });
    expect(paramFor(expectError(short, 400, 'v1'), 'password').message).toMatch(/8 characters/);
  });

  test('v1 and v2 share one resource: created through one version, visible through the other in its shape', async () => {
    const v1 = await acct.test.post('/v1/advertisers', { name: 'Shared', can_add_banners: true });
    const v2 = await acct.test.get(`/v2/advertisers/${v1.body.id}`);
    expect(v2.body).toMatchObject({ object: 'advertiser', self: `/v2/advertisers/${v1.body.id}`, can_add_ad_items: true, name: 'Shared' });
    expect(v2.body).not.toHaveProperty('can_add_banners');
    await acct.test.put(`/v2/advertisers/${v1.body.id}`, { can_add_ad_items: false });
    expect((await acct.test.get(`/v1/advertisers/${v1.body.id}`)).body.can_add_banners).toBe(false);
    // A v2-only field is not a v1 field.
    const res = await acct.test.post('/v1/publishers', { name: 'X', can_view_wordpress_key: true });
    expect(paramFor(expectError(res, 400, 'v1'), 'can_view_wordpress_key').type).toBe('unknown_field');
  });

  for (const [path, object] of [
    ['/v1/publishers', 'publisher'],
    ['/v1/advertisers', 'advertiser'],
  ] as const) {
    test(`${path}: archive hides it (404, not listed) until unarchive restores it`, async () => {
      const { body: item } = await acct.test.post(path, { name: `To archive ${object}` });
      const archived = await acct.test.get(`${path}/${item.id}/archive`);
      expect(archived.status).toBe(200);
      expect(archived.body).toEqual({ object: 'archive', url: `${path}/${item.id}/archive`, data: { archived_resources: [{ object, id: item.id }] } });
      expectError(await acct.test.get(`${path}/${item.id}`), 404, 'v1');
      expectError(await acct.test.put(`${path}/${item.id}`, { name: 'x' }), 404, 'v1');
      expect((await acct.test.get(`${path}?id=${item.id}`)).body.data).toEqual([]);
      expectError(await acct.test.get(`${path}/${item.id}/archive`), 404, 'v1');
      // Another tenant cannot unarchive it.
      expectError(await acct.live.get(`${path}/${item.id}/unarchive`), 404, 'v1');
      const restored = await acct.test.get(`${path}/${item.id}/unarchive?include_campaign_assignments=true&include_placements=true`);
      expect(restored.status).toBe(200);
      expect(restored.body).toMatchObject({ object: 'unarchive', data: { unarchived_resources: [{ object, id: item.id }] } });
      expect((await acct.test.get(`${path}/${item.id}`)).body).toEqual(item);
      expectError(await acct.test.get(`${path}/${item.id}/unarchive`), 404, 'v1');
      expectError(await acct.test.get(`${path}/999999999/archive`), 404, 'v1');
      expectError(await acct.test.get(`${path}/${item.id}/unarchive?include_placements=maybe`), 400, 'v1');
    });
  }

  test('v2 lists and retrieves archived publishers and unarchives them under /archived', async () => {
    const { body: p } = await acct.test.post('/v2/publishers', { name: 'Archived in v2' });
    expect((await acct.test.get(`/v2/publishers/${p.id}/archive`)).body.data.archived_resources).toEqual([{ object: 'publisher', id: p.id }]);
    const list = await acct.test.get('/v2/publishers/archived');
    expect(list.body).toMatchObject({ object: 'list', url: '/v2/publishers/archived' });
    expect(list.body.data.map((o: any) => o.id)).toContain(p.id);
    const one = await acct.test.get(`/v2/publishers/archived/${p.id}`);
    expect(one.body).toMatchObject({ id: p.id, self: `/v2/publishers/archived/${p.id}`, name: 'Archived in v2' });
    expect((await acct.test.get(`/v2/publishers/archived/${p.id}/unarchive`)).body.data.unarchived_resources).toEqual([{ object: 'publisher', id: p.id }]);
    expectError(await acct.test.get(`/v2/publishers/archived/${p.id}`), 404, 'v2');
  });

  test('the v1 list shows newest first', async () => {
    const a = await acct.test.post('/v1/publishers', { name: 'Older' });
    const b = await acct.test.post('/v1/publishers', { name: 'Newer' });
    const list = await acct.test.get('/v1/publishers?limit=2');
    expect(list.body.data.map((o: any) => o.id)).toEqual([b.body.id, a.body.id]);
  });

  test('limit defaults to 10 and has_more tells when more exist', async () => {
    const fresh = await newAccount();
    for (let i = 0; i < 11; i++) await fresh.test.post('/v1/publishers', { name: `P${i}` });
    const list = await fresh.test.get('/v1/publishers');
    expect(list.body).toMatchObject({ limit: 10, offset: 0, has_more: true });
    expect(list.body.data).toHaveLength(10);
    const full = await fresh.test.get('/v1/publishers?limit=100');
    expect(full.body).toMatchObject({ has_more: false });
    expect(full.body.data).toHaveLength(11);
  });

  test('an unknown method on a known path is 501, an unknown path 404, both JSON', async () => {
    expectError(await acct.test.request('PATCH', '/v1/publishers'), 501, 'v1');
    expectError(await acct.test.request('POST', '/v1/publishers/1'), 501, 'v1');
    expectError(await acct.test.get('/v1/no-such-collection'), 404, 'v1');
    expectError(await acct.test.get('/v2/no-such-collection'), 404, 'v2');
  });

  test('an oversized body is refused with a JSON 4xx', async () => {
    const res = await acct.test.post('/v1/publishers', { name: 'x'.repeat(2 * 1024 * 1024) });
    expectError(res, 400, 'v1');
    expect(res.body.type).toBe('request_too_large_error');
  });

  test('the key must be sent as Basic; curl -u key: works too', async () => {
    expectError(await as('x').get('/v2/publishers', { headers: { Authorization: `Bearer ${acct.testKey}` } }), 403, 'v2');
    const basicUser = Buffer.from(`${acct.testKey}:`).toString('base64');
    expect((await as('x').get('/v2/publishers', { headers: { Authorization: `Basic ${basicUser}` } })).status).toBe(200);
  });
});
