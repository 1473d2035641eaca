/**
 * What tracing and the rate limiter cost: GET by id through extra gateways in front of the same
 * services, one with tracing off and one without the rate limiter (RATE_LIMITS=off).
 */
import { load, type BenchCase } from '../harness';
import { benchItem } from './ad-items';

const PATH = '/v2/ad-items/custom-html';

export const costCases: BenchCase[] = [
  {
    name: 'GET by id, gateway tracing off',
    run: async (ctx) => load(ctx, 'GET by id, gateway tracing off', { port: ctx.gateways['tracing-off'], path: `${PATH}/${await benchItem(ctx)}` }),
  },
  {
    name: 'GET by id, rate limiter off',
    // The limiter may cost at most 10 % of GET-by-id throughput (limit on vs. off).
    run: async (ctx) => {
      const r = await load(ctx, 'GET by id, rate limiter off', { port: ctx.gateways['ratelimit-off'], path: `${PATH}/${await benchItem(ctx)}` });
      const on = ctx.results.find((x) => x.name === `GET ${PATH}/{id}`);
      if (!on) return r;
      const cost = 1 - on.reqPerSec / r.reqPerSec;
      return { ...r, note: `limiter costs ${(cost * 100).toFixed(0)} % (target ≤ 10 %)`, met: cost <= 0.1 };
    },
  },
];
