/** Banners owned by an advertiser are its direct descendants: archived and deleted with it. */
import { expectError, newAccount } from '../../../gateway/test/support/api';

test('an advertiser archive takes its banners along, unarchive restores them, delete removes them', async () => {
  const { test: api } = await newAccount();
  const adv = (await api.post('/v1/advertisers', { name: 'Owner' })).body;
  const other = (await api.post('/v1/advertisers', { name: 'Other' })).body;
  const image = (await api.post('/v1/banners/image', { name: 'Owned', width: 300, height: 250, creative_url: 'https://cdn.example.com/a.png', advertiser: adv.id })).body;
  const flash = (await api.post('/v1/banners/flash', { name: 'Owned flash', width: 300, height: 250, creative_url: 'https://cdn.example.com/a.swf', advertiser: adv.id })).body;
  const foreign = (await api.post('/v1/banners/image', { name: 'Not owned', width: 300, height: 250, creative_url: 'https://cdn.example.com/b.png', advertiser: other.id })).body;
  expect(image.advertiser).toBe(adv.id);
  expectError(await api.post('/v1/banners/image', { name: 'x', width: 1, height: 1, creative_url: 'https://cdn.example.com/c.png', advertiser: 999999999 }), 400, 'v1');

  const archived = await api.get(`/v1/advertisers/${adv.id}/archive`);
  expect(archived.body.data.archived_resources).toEqual(
    expect.arrayContaining([
      { object: 'advertiser', id: adv.id },
      { object: 'image_banner', id: image.id },
      { object: 'flash_banner', id: flash.id },
    ]),
  );
  expectError(await api.get(`/v1/banners/image/${image.id}`), 404, 'v1');
  expect((await api.get('/v1/banners')).body.data.map((b: any) => b.id)).toEqual([foreign.id]);
  expect((await api.get(`/v2/ad-items/image/${foreign.id}`)).body.advertiser).toBe(other.id);

  await api.get(`/v1/advertisers/${adv.id}/unarchive`);
  // Unarchiving is a change: last_modified may move.
  expect((await api.get(`/v1/banners/image/${image.id}`)).body).toEqual({ ...image, last_modified: expect.any(String) });

  expect((await api.del(`/v1/advertisers/${adv.id}`)).status).toBe(200);
  expectError(await api.get(`/v1/banners/image/${image.id}`), 404, 'v1');
  expectError(await api.get(`/v1/banners/flash/${flash.id}`), 404, 'v1');
  expect((await api.get(`/v1/banners/image/${foreign.id}`)).status).toBe(200);
});
