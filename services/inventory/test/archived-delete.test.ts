/**
 * DELETE /archived/{id} of the reference (standard and VAST campaigns, display and VAST channels): an
 * archived resource is deleted for good with what its archive took along; anything else is a 404.
 */
import { expectError, newAccount, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';

const IMG = 'https://cdn.example.com/a.png';

async function made(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

let acct: TestAccount;
let api: Client;
beforeAll(async () => {
  acct = await newAccount();
  api = acct.test;
});

const collections = ['/v2/campaigns/standard', '/v2/channels', '/v2/vast-campaigns', '/v2/vast-channels'];

describe('DELETE /archived/{id}', () => {
  test('a VAST campaign goes for good; live references to it are cleared, its placements and assignments go with it', async () => {
    const advertiser = (await made(api, '/v2/advertisers', { name: 'A' })).id;
    const publisher = (await made(api, '/v2/publishers', { name: 'P' })).id;
    const camp = await made(api, '/v2/vast-campaigns', { name: 'Gone', advertiser });
    const item = (await made(api, '/v2/vast-ad-items', { name: 'Spot', duration: '00:00:15' })).id;
    await made(api, '/v2/vast-campaign-assignments', { campaign: camp.id, ad_item: item });
    const zone = await made(api, '/v2/vast-zones', { name: 'Z', publisher, default_vast_campaign: camp.id });
    const schedule = (await made(api, '/v2/vast-schedules', { start_date: '2030-01-01 00:00:00' })).id;
    await made(api, '/v2/vast-placements', { advertisement: { id: camp.id, type: 'vast_campaign' }, zone: zone.id, schedule });
    const archived = await api.get(`/v2/vast-campaigns/${camp.id}/archive`);
    expect(archived.body.data.archived_resources.map((r: any) => r.object).sort()).toEqual(['vast_campaign', 'vast_campaign_assignment', 'vast_placement']);

    const res = await api.del(`/v2/vast-campaigns/archived/${camp.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: camp.id, deleted: true });
    expectReferenceShape('/v2/vast-campaigns/archived/{id}', 'delete', res.body);

    expectError(await api.get(`/v2/vast-campaigns/archived/${camp.id}`), 404, 'v2');
    expectError(await api.get(`/v2/vast-campaigns/archived/${camp.id}/unarchive?include_placements=true`), 404, 'v2');
    expect((await api.get('/v2/vast-campaigns/archived')).body.data.map((c: any) => c.id)).not.toContain(camp.id);
    // The zone stays, without its default campaign; the ad item (the advertiser's) stays.
    expect((await api.get(`/v2/vast-zones/${zone.id}`)).body.default_vast_campaign).toBeNull();
    expect((await api.get(`/v2/vast-ad-items/${item}`)).status).toBe(200);
    // A second delete finds nothing.
    expectError(await api.del(`/v2/vast-campaigns/archived/${camp.id}`), 404, 'v2');
  });

  test('a placement archived with its zone is reported as not restorable once the campaign is deleted from the archive', async () => {
    const advertiser = (await made(api, '/v2/advertisers', { name: 'A' })).id;
    const camp = await made(api, '/v2/campaigns/standard', { name: 'Display gone', advertiser });
    const zone = await made(api, '/v2/zones/standard', { name: 'Z', width: 300, height: 250 });
    const schedule = (await made(api, '/v2/schedules', {})).id;
    const placement = await made(api, '/v2/placements', { advertisement: { id: camp.id, type: 'standard_campaign' }, zone: { id: zone.id, type: 'standard_zone' }, schedule });
    const item = await made(api, '/v2/ad-items/image', { name: 'In it', width: 300, height: 250, creative_url: IMG });
    await made(api, '/v2/campaign-assignments', { campaign: { id: camp.id, type: 'standard_campaign' }, advertisement: { id: item.id, type: 'image_ad_item' } });
    expect((await api.get(`/v2/zones/standard/${zone.id}/archive`)).status).toBe(200);
    expect((await api.get(`/v2/campaigns/standard/${camp.id}/archive`)).status).toBe(200);

    const res = await api.del(`/v2/campaigns/standard/archived/${camp.id}`);
    expect(res.body).toEqual({ id: camp.id, deleted: true });
    expectReferenceShape('/v2/campaigns/standard/archived/{id}', 'delete', res.body);
    expectError(await api.get(`/v2/campaigns/standard/archived/${camp.id}`), 404, 'v2');
    const back = await api.get(`/v2/zones/standard/archived/${zone.id}/unarchive?include_placements=true`);
    expect(back.body.data.not_restored_resources).toEqual([expect.objectContaining({ object: 'placement', id: placement.id })]);
    expect((await api.get(`/v2/ad-items/image/${item.id}`)).status).toBe(200);
  });

  test('channels (display and VAST) take their zone assignments with them; the zones stay', async () => {
    const zone = await made(api, '/v2/zones/standard', { name: 'Z', width: 300, height: 250 });
    const channel = await made(api, '/v2/channels', { name: 'News' });
    const asg = await made(api, '/v2/channel-zone-assignments', { channel: channel.id, zone: { id: zone.id, type: 'standard_zone' } });
    expect((await api.get(`/v2/channels/${channel.id}/archive`)).body.data.archived_resources).toContainEqual({ object: 'channel_zone_assignment', id: asg.id });
    const res = await api.del(`/v2/channels/archived/${channel.id}`);
    expect(res.body).toEqual({ id: channel.id, deleted: true });
    expectReferenceShape('/v2/channels/archived/{id}', 'delete', res.body);
    expectError(await api.get(`/v2/channel-zone-assignments/${asg.id}`), 404, 'v2');
    expect((await api.get(`/v2/zones/standard/${zone.id}`)).status).toBe(200);

    const publisher = (await made(api, '/v2/publishers', { name: 'P' })).id;
    const vzone = await made(api, '/v2/vast-zones', { name: 'VZ', publisher });
    const vchannel = await made(api, '/v2/vast-channels', { name: 'Sports' });
    await made(api, '/v2/vast-channel-zone-assignments', { vast_channel: vchannel.id, vast_zone: { id: vzone.id } });
    expect((await api.get(`/v2/vast-channels/${vchannel.id}/archive`)).status).toBe(200);
    const vres = await api.del(`/v2/vast-channels/archived/${vchannel.id}`);
    expect(vres.body).toEqual({ id: vchannel.id, deleted: true });
    expectReferenceShape('/v2/vast-channels/archived/{id}', 'delete', vres.body);
    expectError(await api.get(`/v2/vast-channels/archived/${vchannel.id}/unarchive`), 404, 'v2');
    expect((await api.get(`/v2/vast-zones/${vzone.id}`)).status).toBe(200);
  });

  test('404 for a live resource, an unknown or malformed id and another account\'s archive', async () => {
    const live = await made(api, '/v2/channels', { name: 'Live' });
    expectError(await api.del(`/v2/channels/archived/${live.id}`), 404, 'v2');
    expect((await api.get(`/v2/channels/${live.id}`)).status).toBe(200);
    for (const path of collections) expectError(await api.del(`${path}/archived/999999999`), 404, 'v2');
    // A malformed id names nothing, as for every other /{id} route.
    expectError(await api.del('/v2/channels/archived/abc'), 404, 'v2');

    const mine = await made(api, '/v2/vast-channels', { name: 'Mine' });
    await api.get(`/v2/vast-channels/${mine.id}/archive`);
    const other = await newAccount();
    expectError(await other.test.del(`/v2/vast-channels/archived/${mine.id}`), 404, 'v2');
    // The live key is another mode of the same account: it does not see test data either.
    expectError(await acct.live.del(`/v2/vast-channels/archived/${mine.id}`), 404, 'v2');
    expect((await api.get(`/v2/vast-channels/archived/${mine.id}`)).status).toBe(200);
  });

  test('only the reference\'s archives take DELETE: zones answer 405/501 as before', async () => {
    const publisher = (await made(api, '/v2/publishers', { name: 'P' })).id;
    const zone = await made(api, '/v2/vast-zones', { name: 'Kept', publisher });
    await api.get(`/v2/vast-zones/${zone.id}/archive`);
    const res = await api.del(`/v2/vast-zones/archived/${zone.id}`);
    expect(res.status).not.toBe(200);
    expect((await api.get(`/v2/vast-zones/archived/${zone.id}`)).status).toBe(200);
  });
});
