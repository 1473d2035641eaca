/**
 * The decision data stream as serving reads it (inventory's Watch over loopback gRPC, the shared
 * platform's database): display ad items go only while a placement or a campaign assignment names them,
 * so an account's library of unplaced ad items costs serving nothing; naming one later sends it.
 */
import type * as grpc from '@grpc/grpc-js';
import { DecisionDataClient, type DecisionDataUpdate, type DecisionEntity } from '../../../proto/gen/adserver/inventory/v1/decision_data';
import { openStream } from '../../shared/grpc/client';
import { newAccount, type TestAccount } from '../../../gateway/test/support/api';
import { within, zoneWithCampaign } from '../../serving/test/serving-fixtures';

let acct: TestAccount;
let fx: Awaited<ReturnType<typeof zoneWithCampaign>>;
let unplaced: { id: number };
let placedDirectly: { id: number };

const imageItem = async (name: string) => {
  const r = await acct.live.post('/v2/ad-items/image', { name, width: 300, height: 250, creative_url: 'https://cdn.example/x.png', location: 'https://advertiser.example/' });
  expect(r.status).toBe(200);
  return r.body as { id: number };
};

/** A Watch of live data, keeping this account's entities as serving would hold them. */
function watch() {
  const held = new Map<string, DecisionEntity>();
  const upserted: string[] = [];
  let synced = false;
  const stream: grpc.ClientReadableStream<DecisionDataUpdate> = openStream('inventory', DecisionDataClient, 'watch', { resumeAfter: 0, test: false });
  stream.on('data', (u: DecisionDataUpdate) => {
    if (u.reset) held.clear();
    for (const e of u.upserts) {
      if (e.account !== acct.id) continue;
      held.set(`${e.kind}:${e.id}`, e);
      upserted.push(`${e.kind}:${e.id}`);
    }
    for (const r of u.removals) held.delete(`${r.kind}:${r.id}`);
    if (u.synced) synced = true;
  });
  stream.on('error', () => undefined);
  return { held, upserted, isSynced: () => synced, close: () => stream.cancel() };
}

beforeAll(async () => {
  acct = await newAccount();
  fx = await zoneWithCampaign(acct.live, [1]);
  unplaced = await imageItem('In the library only');
  placedDirectly = await imageItem('Placed on its own');
  const p = await acct.live.post('/v2/placements', { zone: { id: fx.zone.id, type: 'standard_zone' }, advertisement: { id: placedDirectly.id, type: 'image_ad_item' }, schedule: fx.schedule.id });
  expect(p.status).toBe(200);
});

test('a snapshot holds the ad items placements and campaign assignments name, and not the unplaced one', async () => {
  const w = watch();
  try {
    await within(15_000, async () => w.isSynced() && w.held.has(`image_ad_item:${placedDirectly.id}`));
    expect(w.held.has(`image_ad_item:${fx.items[0].id}`)).toBe(true);
    expect(w.held.has(`standard_zone:${fx.zone.id}`)).toBe(true);
    expect(w.held.has(`image_ad_item:${unplaced.id}`)).toBe(false);
  } finally {
    w.close();
  }
});

test('a change to an unplaced ad item is not sent; naming it in a placement sends it, changed, with the placement', async () => {
  const w = watch();
  try {
    await within(15_000, async () => w.isSynced());
    expect((await acct.live.put(`/v2/ad-items/image/${unplaced.id}`, { name: 'Renamed while unplaced', width: 300, height: 250 })).status).toBe(200);
    // A later change of the same account: once it arrives, the ad item's earlier one would have too.
    expect((await acct.live.put(`/v2/zones/standard/${fx.zone.id}`, { name: 'Top banner (renamed)' })).status).toBe(200);
    await within(15_000, async () => w.upserted.includes(`standard_zone:${fx.zone.id}`));
    expect(w.upserted).not.toContain(`image_ad_item:${unplaced.id}`);

    const p = await acct.live.post('/v2/placements', { zone: { id: fx.zone.id, type: 'standard_zone' }, advertisement: { id: unplaced.id, type: 'image_ad_item' }, schedule: fx.schedule.id });
    expect(p.status).toBe(200);
    await within(15_000, async () => w.held.has(`image_ad_item:${unplaced.id}`) && w.held.has(`placement:${p.body.id}`));

    // Held now, its own changes go too.
    expect((await acct.live.put(`/v2/ad-items/image/${unplaced.id}`, { location: 'https://advertiser.example/moved' })).status).toBe(200);
    await within(15_000, async () => w.held.get(`image_ad_item:${unplaced.id}`)?.adItem?.location === 'https://advertiser.example/moved');

    // A new ad item assigned to the campaign arrives with its assignment.
    const assigned = await imageItem('Assigned later');
    const a = await acct.live.post('/v2/campaign-assignments', { campaign: { id: fx.campaign.id, type: 'standard_campaign' }, advertisement: { id: assigned.id, type: 'image_ad_item' } });
    expect(a.status).toBe(200);
    await within(15_000, async () => w.held.has(`image_ad_item:${assigned.id}`) && w.held.has(`campaign_assignment:${a.body.id}`));
  } finally {
    w.close();
  }
});
