/**
 * What tracing and the rate limiter cost: GET by id, in alternating slices, through two extra
 * gateways in front of the same services, started alike but for one setting: the production
 * configuration against tracing off, or against no rate limiter (RATE_LIMITS=off).
 */
import { alternate, type BenchCase, type BenchContext, type CaseResult } from '../harness';
import { benchItem } from './ad-items';

const PATH = '/v2/ad-items/custom-html';

async function priced(ctx: BenchContext, what: string, gateway: string, maxCost?: number): Promise<CaseResult[]> {
  const path = `${PATH}/${await benchItem(ctx)}`;
  const [on, off] = await alternate(ctx, [`GET by id, ${what} on (alternating)`, `GET by id, ${what} off (alternating)`], [
    { port: ctx.gateways.twin, path },
    { port: ctx.gateways[gateway], path },
  ]);
  const cost = 1 - on.reqPerSec / off.reqPerSec;
  off.note = `${what} costs ${(cost * 100).toFixed(0)} % of throughput${maxCost === undefined ? '' : ` (target ≤ ${maxCost * 100} %)`}`;
  if (maxCost !== undefined) off.met = cost <= maxCost;
  return [on, off];
}

export const costCases: BenchCase[] = [
  { name: 'GET by id, gateway tracing on/off', run: (ctx) => priced(ctx, 'gateway tracing', 'tracing-off') },
  { name: 'GET by id, rate limiter on/off', run: (ctx) => priced(ctx, 'rate limiter', 'ratelimit-off', 0.1) },
];
