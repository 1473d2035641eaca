import { expectError, newAccount, paramFor, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';

const invalid = [
  { body: { bidder_code: '' }, field: 'bidder_code' },
  { body: { name: 3 }, field: 'name' },
  { body: { bidder_code: 'appnexus', parameters: 'placementId=1' }, field: 'parameters' },
  { body: { bidder_code: 'appnexus', parameters: null }, field: 'parameters' },
];

describeCrud('bidders', {
  version: 'v1',
  path: '/v1/bidders',
  object: 'bidder',
  create: (_api, n) => ({ bidder_code: 'adbutler', name: `Bidder ${n}`, parameters: { accountID: '123', zoneID: String(100 + n) } }),
  update: { name: 'Renamed bidder' },
  invalid,
  required: ['bidder_code', 'name', 'parameters'],
});

describeCrud('bidders', {
  version: 'v2',
  path: '/v2/bidders',
  object: 'bidder',
  create: (_api, n) => ({ bidder_code: 'appnexus', name: `Bidder ${n}`, parameters: { placementId: 1000 + n } }),
  update: { name: 'Renamed v2 bidder' },
  invalid,
  required: ['bidder_code', 'name', 'parameters'],
});

describe('bidder specifics', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await newAccount();
  });

  test('v1 shows created_date; changing bidder_code needs parameters, which replace the old ones wholesale', async () => {
    const { body: b } = await acct.test.post('/v1/bidders', { bidder_code: 'adbutler', name: 'Prebid partner', parameters: { accountID: '1', zoneID: '2', keyword: 'cats' } });
    expect(b.created_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const noParams = await acct.test.put(`/v1/bidders/${b.id}`, { bidder_code: 'appnexus' });
    expect(paramFor(expectError(noParams, 400, 'v1'), 'parameters').message).toMatch(/bidder_code/);
    expect((await acct.test.get(`/v1/bidders/${b.id}`)).body.bidder_code).toBe('adbutler');
    const switched = await acct.test.put(`/v1/bidders/${b.id}`, { bidder_code: 'appnexus', parameters: { placementId: 13144370 } });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({ bidder_code: 'appnexus', parameters: { placementId: 13144370 } });
    expect(switched.body.parameters).not.toHaveProperty('zoneID');
    const renamed = await acct.test.put(`/v1/bidders/${b.id}`, { name: 'Only the name' });
    expect(renamed.body.parameters).toEqual({ placementId: 13144370 });
  });

  test('deleting a bidder removes it for good', async () => {
    const { body: b } = await acct.test.post('/v1/bidders', { bidder_code: 'rubicon', name: 'Gone soon', parameters: { accountId: 1 } });
    expect((await acct.test.del(`/v1/bidders/${b.id}`)).body).toEqual({ id: b.id, delete: true });
    expectError(await acct.test.get(`/v1/bidders/${b.id}`), 404, 'v1');
  });
});
