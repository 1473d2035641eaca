import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';

/** Spec 2.2 gives is_self_serve as a string; the reference says boolean. The spec wins. */
const SPEC_OVERRIDES = { ignore: ['is_self_serve'] };

async function template(api: Client, n = 0) {
  const res = await api.post('/v2/templates/native', {
    name: `Product card ${n}`,
    raw_html: '<div><h1>[%title%]</h1><p>Only [%price%] today</p></div>',
    variables: [
      { name: 'Title', placeholder: '[%title%]', type: 'text', max_length: 40 },
      { name: 'Price', placeholder: '[%price%]', type: 'number' },
    ],
  });
  expect(res.status).toBe(200);
  return res.body;
}

async function richMediaCreative(api: Client) {
  const group = await api.post('/v2/media-groups', { name: 'Rich media' });
  const res = await api.post('/v2/creatives/rich-media', { group: group.body.id, name: 'Banner zip', file_url: 'https://cdn.example.com/banner.zip', has_click_macro: true });
  expect(res.status).toBe(200);
  return res.body;
}

const adItemInvalid = [
  { body: { name: '' }, field: 'name' },
  { body: { width: 0 }, field: 'width' },
  { body: { height: 'tall' }, field: 'height' },
  { body: { location: 'not a url' }, field: 'location' },
  { body: { tracking_pixels: [{ href: 'https://x.example' }] }, field: 'tracking_pixels' },
  { body: { metadata: 'x' }, field: 'metadata' },
];

describeCrud('custom HTML ad items', {
  version: 'v2',
  path: '/v2/ad-items/custom-html',
  object: 'custom_html_ad_item',
  create: (_api, n) => ({ name: `Custom ${n}`, width: 300, height: 250, custom_html: `<div>ad ${n}</div>`, location: 'https://adv.example.com/landing' }),
  update: { expand_horizontal_direction: 'left', custom_html: '<p>changed</p>' },
  invalid: [...adItemInvalid, { body: { expand_horizontal_direction: 'up' }, field: 'expand_horizontal_direction' }, { body: { expand_vertical_direction: 'left' }, field: 'expand_vertical_direction' }],
  required: ['name', 'width', 'height', 'custom_html'],
});

describeCrud('native ad items', {
  version: 'v2',
  path: '/v2/ad-items/native',
  object: 'native_ad_item',
  create: async (api, n) => {
    const t = await template(api, n);
    return { name: `Native ${n}`, width: 300, height: 250, template: t.id, variables: { [t.variables[0].id]: `Shoes ${n}`, [t.variables[1].id]: 19.99 } };
  },
  update: { name: 'Renamed native', location: 'https://adv.example.com/n' },
  invalid: [...adItemInvalid, { body: { template: 999999999 }, field: 'template' }, { body: { variables: { '999999999': 'x' } }, field: 'variables' }],
  required: ['name', 'width', 'height', 'template'],
});

describeCrud('rich media ad items', {
  version: 'v2',
  path: '/v2/ad-items/rich-media',
  object: 'rich_media_ad_item',
  create: async (api, n) => ({ name: `Rich ${n}`, width: 728, height: 90, creative: (await richMediaCreative(api)).id }),
  update: { expand_vertical_direction: 'down', html_content_below: '<small>below</small>' },
  invalid: [...adItemInvalid, { body: { creative: 999999999 }, field: 'creative' }, { body: { expand_vertical_direction: 'sideways' }, field: 'expand_vertical_direction' }],
  required: ['name', 'width', 'height', 'creative'],
});

for (const type of ['image', 'native'] as const) {
  describeCrud(`${type} ad item companion products`, {
    version: 'v2',
    path: `/v2/ad-items/${type}/:ad_item_id/companions/products`,
    object: 'ad_item_companion_product',
    // Every product of the case sits under one ad item of the account.
    setup: async (api) => {
      const body =
        type === 'image'
          ? { name: 'Parent image', width: 300, height: 250, creative_url: 'https://cdn.example.com/a.png' }
          : { name: 'Parent native', width: 300, height: 250, template: (await template(api)).id };
      const res = await api.post(`/v2/ad-items/${type}`, body);
      expect(res.status).toBe(200);
      return { ad_item_id: res.body.id };
    },
    create: (_api, n) => ({ catalog: 10000 + n, product_identifier: `SKU-${type}-${n}` }),
    update: { product_identifier: 'SKU-CHANGED' },
    invalid: [
      { body: { catalog: 'x' }, field: 'catalog' },
      { body: { catalog: 0 }, field: 'catalog' },
      { body: { product_identifier: '' }, field: 'product_identifier' },
    ],
    required: ['catalog', 'product_identifier'],
  });
}

describe('v2 ad item specifics', () => {
  let acct: TestAccount;
  let api: Client;
  beforeAll(async () => {
    acct = await newAccount(['native-to-image']);
    api = acct.test;
  });

  test('custom HTML: defaults of spec 2.2, is_self_serve as a string, and the reference shape', async () => {
    const res = await api.post('/v2/ad-items/custom-html', { name: 'Defaults', width: 300, height: 250, custom_html: '<b>hi</b>' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'custom_html_ad_item',
      expand_horizontal_direction: 'none',
      expand_vertical_direction: 'none',
      tracking_pixel: null,
      location: null,
      html_content_below: null,
      is_self_serve: 'false',
      tracking_pixels: [],
    });
    expect(res.body.created_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expectReferenceShape('/v2/ad-items/custom-html', 'post', res.body, SPEC_OVERRIDES);
    expectReferenceShape('/v2/ad-items/custom-html/{id}', 'get', (await api.get(res.body.self)).body, SPEC_OVERRIDES);
    expectReferenceShape('/v2/ad-items/custom-html', 'get', (await api.get('/v2/ad-items/custom-html')).body, SPEC_OVERRIDES);
  });

  test('custom_html is another path of the same collection', async () => {
    const made = await api.post('/v2/ad-items/custom_html', { name: 'Via alias', width: 1, height: 1, custom_html: 'x' });
    expect(made.body).toMatchObject({ object: 'custom_html_ad_item', self: `/v2/ad-items/custom-html/${made.body.id}` });
    expect((await api.get(`/v2/ad-items/custom_html/${made.body.id}`)).body).toEqual(made.body);
    const list = await api.get(`/v2/ad-items/custom_html?id=${made.body.id}`);
    expect(list.body.data.map((o: any) => o.id)).toEqual([made.body.id]);
    expect((await api.put(`/v2/ad-items/custom_html/${made.body.id}`, { name: 'Renamed' })).body.name).toBe('Renamed');
    expect((await api.get(`/v2/ad-items/custom_html/${made.body.id}/conversion-tag`)).body.object).toBe('conv_tag');
    expect((await api.del(`/v2/ad-items/custom_html/${made.body.id}`)).body).toEqual({ id: made.body.id, deleted: true });
  });

  test('tracking pixels given with only a url get ids that stay on update', async () => {
    const made = await api.post('/v2/ad-items/custom-html', {
      name: 'Pixels', width: 1, height: 1, custom_html: 'x', tracking_pixels: [{ url: 'https://px.example/1' }, { url: 'https://px.example/2' }],
    });
    const [a, b] = made.body.tracking_pixels;
    expect(Number.isInteger(a.id) && Number.isInteger(b.id) && a.id !== b.id).toBe(true);
    const upd = await api.put(made.body.self, { tracking_pixels: [{ id: a.id, url: 'https://px.example/1b' }, { url: 'https://px.example/3' }] });
    expect(upd.body.tracking_pixels[0]).toEqual({ id: a.id, url: 'https://px.example/1b' });
    expect(upd.body.tracking_pixels[1].id).not.toBe(b.id);
    const bad = await api.put(made.body.self, { tracking_pixels: [{ id: 424242424, url: 'https://px.example/x' }] });
    expect(paramFor(expectError(bad, 400, 'v2'), 'tracking_pixels').message).toMatch(/leave id out/);
  });

  test('conversion tags of custom HTML, native and rich media items', async () => {
    const t = await template(api);
    const items = [
      await api.post('/v2/ad-items/custom-html', { name: 'C', width: 1, height: 1, custom_html: 'x' }),
      await api.post('/v2/ad-items/native', { name: 'N', width: 1, height: 1, template: t.id }),
      await api.post('/v2/ad-items/rich-media', { name: 'R', width: 1, height: 1, creative: (await richMediaCreative(api)).id }),
    ];
    for (const item of items) {
      const path = `${item.body.self}/conversion-tag`;
      const res = await api.get(path);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'conv_tag', url: path, data: { src: expect.stringMatching(/^https:\/\//), html: expect.stringMatching(/^<img /) } });
      expect(res.body.data.src).toContain(`type=${item.body.object}&id=${item.body.id}`);
      const refPath = path.replace(/\/\d+\//, '/{id}/');
      expectReferenceShape(refPath, 'get', res.body);
      expect((await api.get(`${path}?protocol=http`)).body.data.src).toMatch(/^http:\/\//);
      expectError(await api.get(`${path}?protocol=ftp`), 400, 'v2');
      expectError(await acct.live.get(path), 404, 'v2');
      expectError(await api.post(path, {}), 501, 'v2');
    }
    expectError(await api.get('/v2/ad-items/native/999999999/conversion-tag'), 404, 'v2');
  });

  test('native: variables must belong to its template, respect its max_length and types', async () => {
    const t = await template(api);
    const [title, price] = t.variables;
    expect(t.variables.map((v: any) => Number.isInteger(v.id))).toEqual([true, true]);
    const ok = await api.post('/v2/ad-items/native', { name: 'N', width: 300, height: 250, template: t.id, variables: { [title.id]: 'Shoes', [price.id]: '24.99' } });
    expect(ok.status).toBe(200);
    expectReferenceShape('/v2/ad-items/native/{id}', 'get', ok.body, SPEC_OVERRIDES);
    const long = await api.put(ok.body.self, { variables: { [title.id]: 'x'.repeat(41) } });
    expect(paramFor(expectError(long, 400, 'v2'), 'variables').message).toMatch(/at most 40/);
    const nan = await api.put(ok.body.self, { variables: { [price.id]: 'cheap' } });
    expect(paramFor(expectError(nan, 400, 'v2'), 'variables').message).toMatch(/number/);
    const other = await template(api, 2);
    const moved = await api.put(ok.body.self, { template: other.id });
    expect(paramFor(expectError(moved, 400, 'v2'), 'variables').message).toMatch(/not a variable id/);
    expect((await api.get(ok.body.self)).body).toEqual(ok.body);
  });

  test('native: URL variables take http(s) URLs only, like every URL field (pages will put them in links)', async () => {
    const t = await api.post('/v2/templates/native', {
      name: 'Linked card',
      raw_html: '<a href="[%url%]"><img src="[%img%]"></a>',
      variables: [
        { name: 'Link', placeholder: '[%url%]', type: 'url' },
        { name: 'Image', placeholder: '[%img%]', type: 'image_url' },
      ],
    });
    const [link, img] = t.body.variables;
    const good = await api.post('/v2/ad-items/native', { name: 'N', width: 300, height: 250, template: t.body.id, variables: { [link.id]: 'https://shop.example/x', [img.id]: 'https://cdn.example/x.png' } });
    expect(good.status).toBe(200);
    for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,<script>x</script>', '//evil.example/', 'not a url']) {
      const res = await api.put(good.body.self, { variables: { [link.id]: bad } });
      expect(paramFor(expectError(res, 400, 'v2'), 'variables').message).toMatch(/http\(s\) URL/);
    }
    expectError(await api.put(good.body.self, { variables: { [img.id]: 'javascript:alert(1)' } }), 400, 'v2');
    expect((await api.get(good.body.self)).body).toEqual(good.body);
  });

  test('rich media: the reference shape of create, retrieve and list', async () => {
    const made = await api.post('/v2/ad-items/rich-media', { name: 'R', width: 300, height: 600, creative: (await richMediaCreative(api)).id });
    expectReferenceShape('/v2/ad-items/rich-media', 'post', made.body, SPEC_OVERRIDES);
    expectReferenceShape('/v2/ad-items/rich-media/{id}', 'get', made.body, SPEC_OVERRIDES);
    expectReferenceShape('/v2/ad-items/rich-media/{id}', 'put', (await api.put(made.body.self, { name: 'R2' })).body, SPEC_OVERRIDES);
    expectReferenceShape('/v2/ad-items/rich-media', 'get', (await api.get('/v2/ad-items/rich-media')).body, SPEC_OVERRIDES);
  });

  test('GET /v2/ad-items lists items of every type, each in its own shape', async () => {
    const fresh = await newAccount();
    const c = await fresh.test.post('/v2/ad-items/custom-html', { name: 'C', width: 1, height: 1, custom_html: 'x' });
    const n = await fresh.test.post('/v2/ad-items/native', { name: 'N', width: 1, height: 1, template: (await template(fresh.test)).id });
    const i = await fresh.test.post('/v2/ad-items/image', { name: 'I', width: 1, height: 1, creative_url: 'https://cdn.example.com/i.png' });
    const list = await fresh.test.get('/v2/ad-items');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', url: '/v2/ad-items', has_more: false });
    expect(list.body.data.map((o: any) => [o.object, o.id])).toEqual([
      ['custom_html_ad_item', c.body.id],
      ['native_ad_item', n.body.id],
      ['image_ad_item', i.body.id],
    ]);
    expect(list.body.data[0]).toEqual(c.body);
    expectReferenceShape('/v2/ad-items', 'get', list.body, SPEC_OVERRIDES);
    expectError(await fresh.test.post('/v2/ad-items', {}), 501, 'v2');
    expect((await fresh.live.get('/v2/ad-items')).body.data).toEqual([]);
  });

  test('expansion: a native item expands its template as an array holding the object', async () => {
    const t = await template(api);
    const n = await api.post('/v2/ad-items/native', { name: 'N', width: 1, height: 1, template: t.id });
    const res = await api.get(`${n.body.self}?expand=template`);
    expect(res.body.template).toEqual([t]);
    expectError(await api.get(`${n.body.self}?expand=name`), 400, 'v2');
  });

  test('companion products: 404 under a missing parent or under another ad item', async () => {
    const img = await api.post('/v2/ad-items/image', { name: 'I', width: 1, height: 1, creative_url: 'https://cdn.example.com/i.png' });
    const other = await api.post('/v2/ad-items/image', { name: 'I2', width: 1, height: 1, creative_url: 'https://cdn.example.com/i.png' });
    const base = `/v2/ad-items/image/${img.body.id}/companions/products`;
    const p = await api.post(base, { catalog: 1, product_identifier: 'SKU-9' });
    expect(p.body).toMatchObject({ object: 'ad_item_companion_product', self: `${base}/${p.body.id}`, catalog: 1, product_identifier: 'SKU-9' });
    expectReferenceShape('/v2/ad-items/image/{ad_item_id}/companions/products/{id}', 'get', (await api.get(p.body.self)).body);
    expectReferenceShape('/v2/ad-items/image/{ad_item_id}/companions/products', 'get', (await api.get(base)).body);
    for (const missing of ['/v2/ad-items/image/999999999/companions/products', `/v2/ad-items/native/${img.body.id}/companions/products`]) {
      expectError(await api.get(missing), 404, 'v2');
      expectError(await api.post(missing, { catalog: 1, product_identifier: 'x' }), 404, 'v2');
      expectError(await api.get(`${missing}/${p.body.id}`), 404, 'v2');
    }
    const elsewhere = `/v2/ad-items/image/${other.body.id}/companions/products/${p.body.id}`;
    expectError(await api.get(elsewhere), 404, 'v2');
    expectError(await api.put(elsewhere, { catalog: 2 }), 404, 'v2');
    expectError(await api.del(elsewhere), 404, 'v2');
    expect(paramFor(expectError(await api.post(base, { catalog: 1, product_identifier: 'x', ad_item: 5 }), 400, 'v2'), 'ad_item').type).toBe('unknown_field');
    // Deleting the ad item deletes its companion products.
    await api.del(img.body.self);
    expectError(await api.get(p.body.self), 404, 'v2');
  });
});
