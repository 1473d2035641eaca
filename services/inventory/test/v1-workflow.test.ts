/** One v1 session end to end: inventory, tags, a campaign serving a banner, pause, archive, restore. */
import { expectError, newAccount, type TestAccount } from '../../../gateway/test/support/api';

test('publisher → zones → tags → advertiser → campaign → banner → assignment → pause → archive → unarchive with assignments', async () => {
  const acct: TestAccount = await newAccount();
  const api = acct.test;
  const ok = async (p: Promise<any>) => {
    const res = await p;
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
    return res.body;
  };

  const publisher = await ok(api.post('/v1/publishers', { name: 'Daily News', email: 'ads@dailynews.example' }));
  const email = await ok(api.post('/v1/zones/email', { name: 'Morning newsletter', width: 600, height: 200, publisher: publisher.id }));
  const text = await ok(api.post('/v1/zones/text', { name: 'Sidebar', publisher: publisher.id }));
  const zones = await ok(api.get('/v1/zones'));
  expect(zones.data.map((z: any) => z.id)).toEqual([text.id, email.id]);

  const tags = await ok(api.get(`/v1/zones/email/${email.id}/tags?type=image&protocol=https`));
  expect(tags.data.image).toContain(`zone=${email.id}`);
  expect(tags.data.email).toContain('https://serve.example.test/');
  const textTags = await ok(api.get(`/v1/zones/text/${text.id}/tags?type=async,js&fallback=true`));
  expect(Object.keys(textTags.data.text)).toEqual(['async', 'js']);

  const advertiser = await ok(api.post('/v1/advertisers', { name: 'Acme Shoes', can_add_banners: true }));
  const campaign = await ok(api.post('/v1/campaigns/banner', { name: 'Spring', advertiser: advertiser.id, width: 600, height: 200 }));
  const banner = await ok(api.post('/v1/banners/image', { name: 'Spring banner', width: 600, height: 200, creative_url: 'https://cdn.example.com/spring.png', location: 'https://acme.example/spring' }));
  const conv = await ok(api.get(`/v1/banners/image/${banner.id}/conversion-tag`));
  expect(conv.data.html).toContain(conv.data.src.replace(/&/g, '&amp;'));

  const assignment = await ok(
    api.post('/v1/campaign-assignments', { campaign: { id: campaign.id, type: 'banner_campaign' }, advertisement: { id: banner.id, type: 'image_banner' }, weight: 2 }),
  );
  expect(assignment).toMatchObject({ active: true, weight: 2 });
  const expanded = await ok(api.get(`/v1/campaign-assignments/${assignment.id}?expand=all&depth=2`));
  expect(expanded.campaign).toMatchObject({ object: 'banner_campaign', advertiser: { object: 'advertiser', id: advertiser.id, name: 'Acme Shoes' } });

  expect((await ok(api.put(`/v1/campaign-assignments/${assignment.id}`, { active: false }))).active).toBe(false);
  expect((await ok(api.get(`/v1/campaign-assignments/${assignment.id}`))).active).toBe(false);

  const archived = await ok(api.get(`/v1/advertisers/${advertiser.id}/archive`));
  expect(archived.data.archived_resources).toEqual([
    { object: 'advertiser', id: advertiser.id },
    { object: 'banner_campaign', id: campaign.id },
    { object: 'campaign_assignment', id: assignment.id },
  ]);
  expectError(await api.get(`/v1/campaigns/banner/${campaign.id}`), 404, 'v1');
  expect((await ok(api.get('/v1/campaigns'))).data).toEqual([]);

  const restored = await ok(api.get(`/v1/advertisers/${advertiser.id}/unarchive?include_campaign_assignments=true`));
  expect(restored).toMatchObject({ object: 'unarchive', url: `/v1/advertisers/${advertiser.id}/unarchive` });
  expect(restored.data.unarchived_resources).toEqual([
    { object: 'advertiser', id: advertiser.id },
    { object: 'banner_campaign', id: campaign.id },
    { object: 'campaign_assignment', id: assignment.id },
  ]);
  // It comes back as it was: still paused, still weighted 2.
  expect(await ok(api.get(`/v1/campaign-assignments/${assignment.id}`))).toMatchObject({ active: false, weight: 2 });
  expect((await ok(api.put(`/v1/campaign-assignments/${assignment.id}`, { active: true }))).active).toBe(true);
  expect((await ok(api.get(`/v1/campaigns/banner/${campaign.id}`))).name).toBe('Spring');
  // The live key of the same account saw none of it.
  expect((await acct.live.get('/v1/zones')).body.data).toEqual([]);
});
