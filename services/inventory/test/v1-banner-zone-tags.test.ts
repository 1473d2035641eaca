/** v1 banner zones have tags like email and text zones (an extension of spec 4.3). */
import { expectError, newAccount } from '../../../gateway/test/support/api';

test('GET /v1/zones/banner/{id}/tags returns the zone tags; a missing zone or bad type is refused', async () => {
  const acct = await newAccount();
  const api = acct.test;
  const pub = (await api.post('/v1/publishers', { name: 'Pub' })).body;
  const zone = (await api.post('/v1/zones/banner', { name: 'Leaderboard', publisher: pub.id, width: 728, height: 90 })).body;
  const res = await api.get(`/v1/zones/banner/${zone.id}/tags?type=async,iframe`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ object: 'zone_tag', url: `/v1/zones/banner/${zone.id}/tags` });
  expect(Object.keys(res.body.data).sort()).toEqual(['async', 'iframe']);
  expect(res.body.data.iframe).toContain('728');
  expectError(await api.get(`/v1/zones/banner/${zone.id}/tags?type=flash`), 400, 'v1');
  expectError(await api.get('/v1/zones/banner/999999999/tags'), 404, 'v1');
  expectError(await acct.live.get(`/v1/zones/banner/${zone.id}/tags`), 404, 'v1');
});
