/**
 * The v2 responses of the resources v1 and v2 share (publishers, advertisers, bidders, standard and
 * email zones, standard campaigns, image ad items, campaign assignments) have the reference API's shape,
 * so clients written for it read ours: create, retrieve, list, update, delete, archive and tags.
 */
import { newAccount, type Client } from './support/api';
import { expectReferenceShape } from './support/openapi';

/** Spec 2.2 gives is_self_serve as a string where the reference has a boolean; the spec wins. */
const SPEC_OVERRIDES = { ignore: ['is_self_serve'] };

let api: Client;
beforeAll(async () => {
  api = (await newAccount()).test;
});

async function created(path: string, body: Record<string, unknown>) {
  const res = await api.post(path, body);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

/** Create, retrieve, list, update and delete through `path`, each checked against the reference. */
async function checkCollection(path: string, body: Record<string, unknown>, update: Record<string, unknown>) {
  const item = await created(path, body);
  expectReferenceShape(path, 'post', item, SPEC_OVERRIDES);
  const one = await api.get(`${path}/${item.id}`);
  expectReferenceShape(`${path}/{id}`, 'get', one.body, SPEC_OVERRIDES);
  const list = await api.get(`${path}?limit=5`);
  expectReferenceShape(path, 'get', list.body, SPEC_OVERRIDES);
  const upd = await api.put(`${path}/${item.id}`, update);
  expect(upd.status).toBe(200);
  expectReferenceShape(`${path}/{id}`, 'put', upd.body, SPEC_OVERRIDES);
  return item;
}

test('publishers and advertisers, with their archives', async () => {
  const pub = await checkCollection('/v2/publishers', { name: 'Daily News', email: 'ads@news.example' }, { can_approve_ads: true });
  const archived = await api.get(`/v2/publishers/${pub.id}/archive`);
  expectReferenceShape('/v2/publishers/{id}/archive', 'get', archived.body);
  expectReferenceShape('/v2/publishers/archived', 'get', (await api.get('/v2/publishers/archived')).body);
  expectReferenceShape('/v2/publishers/archived/{id}', 'get', (await api.get(`/v2/publishers/archived/${pub.id}`)).body);
  expectReferenceShape('/v2/publishers/archived/{id}/unarchive', 'get', (await api.get(`/v2/publishers/archived/${pub.id}/unarchive`)).body);
  const adv = await checkCollection('/v2/advertisers', { name: 'Acme' }, { can_add_ad_items: true });
  expectReferenceShape('/v2/advertisers/{id}', 'delete', (await api.del(`/v2/advertisers/${adv.id}`)).body);
});

test('bidders', async () => {
  await checkCollection('/v2/bidders', { name: 'Partner', bidder_code: 'appnexus', parameters: { placementId: 13144370 } }, { name: 'Renamed' });
});

test('standard and email zones, with tags and conversion tags', async () => {
  const pub = await created('/v2/publishers', { name: 'Zone owner' });
  const zone = await checkCollection('/v2/zones/standard', { name: 'Leaderboard', width: 728, height: 90, publisher: pub.id }, { name: 'Top' });
  expectReferenceShape('/v2/zones/standard/{id}/tags', 'get', (await api.get(`/v2/zones/standard/${zone.id}/tags`)).body);
  expectReferenceShape('/v2/zones/standard/{id}/conversion-tag', 'get', (await api.get(`/v2/zones/standard/${zone.id}/conversion-tag`)).body);
  const email = await checkCollection('/v2/zones/email', { name: 'Newsletter', width: 600, height: 200, publisher: pub.id }, { name: 'Weekly' });
  expectReferenceShape('/v2/zones/email/{id}/tags', 'get', (await api.get(`/v2/zones/email/${email.id}/tags`)).body);
  expectReferenceShape('/v2/zones', 'get', (await api.get('/v2/zones')).body);
});

test('standard campaigns, image ad items and campaign assignments', async () => {
  const adv = await created('/v2/advertisers', { name: 'Campaign owner' });
  const campaign = await checkCollection('/v2/campaigns/standard', { name: 'Spring', advertiser: adv.id }, { name: 'Summer' });
  expectReferenceShape('/v2/campaigns/standard/{id}/conversion-tag', 'get', (await api.get(`/v2/campaigns/standard/${campaign.id}/conversion-tag`)).body);
  const item = await checkCollection(
    '/v2/ad-items/image',
    { name: 'Banner', width: 300, height: 250, creative_url: 'https://cdn.example.com/a.png', location: 'https://acme.example/' },
    { html_target: '_blank' },
  );
  expectReferenceShape('/v2/ad-items/image/{id}/conversion-tag', 'get', (await api.get(`/v2/ad-items/image/${item.id}/conversion-tag`)).body);
  await checkCollection(
    '/v2/campaign-assignments',
    { campaign: { id: campaign.id, type: 'standard_campaign' }, advertisement: { id: item.id, type: 'image_ad_item' }, weight: 2 },
    { active: false },
  );
  expectReferenceShape('/v2/campaigns', 'get', (await api.get('/v2/campaigns')).body);
  expectReferenceShape('/v2/ad-items', 'get', (await api.get('/v2/ad-items')).body, SPEC_OVERRIDES);
});
