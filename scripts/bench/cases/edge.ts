/** Requests the gateway answers without a resource service: the cost of the edge itself. */
import { load, type BenchCase } from '../harness';

export const edgeCases: BenchCase[] = [
  {
    name: '403 for a malformed key (no service call)',
    target: { minRatio: 0.6 },
    run: (ctx) => load(ctx, '403 for a malformed key (no service call)', { port: ctx.gatewayPort, path: '/v2/ad-items/custom-html/1', key: 'not-a-key', expectStatus: 403 }),
  },
  {
    name: 'unknown route, valid key (auth, rate limit, 404)',
    run: (ctx) => load(ctx, 'unknown route, valid key (auth, rate limit, 404)', { port: ctx.gatewayPort, path: '/v2/no-such-thing', expectStatus: 404 }),
  },
];
