import { decisionData } from '../shared/grpc/clients';
import { tenantMetadata } from '../shared/tenant';
import { dataFrom, type DecisionData } from './decision-store';

/**
 * Test-mode decision data for `/v2/adserve` with a test key: the account's test resources, read from
 * inventory through its typed client at each request, so a change made with the test key shows in
 * the next decision. (Live data is a snapshot in memory, kept by the Watch stream.)
 */
export class TestDecisionData {
  async of(account: number): Promise<DecisionData> {
    const res = await decisionData.getTestData({}, { metadata: tenantMetadata({ accountId: account, mode: 'test' }), idempotent: true });
    return dataFrom(res.entities);
  }
}
