/** The management API's everyday operations on one kind (custom HTML ad items, owned by inventory). */
import { load, paced, type BenchCase, type BenchContext } from '../harness';
import { describePauses } from '../runtime-pauses';

const PATH = '/v2/ad-items/custom-html';
export const AD_ITEM = { name: 'Bench ad item', width: 300, height: 250, custom_html: '<div>bench</div>' };

/** One ad item of the bench account, made once per run and shared by the cases below. */
const made = new WeakMap<BenchContext, Promise<number>>();
export function benchItem(ctx: BenchContext): Promise<number> {
  if (!made.has(ctx)) {
    made.set(
      ctx,
      ctx.api('POST', PATH, AD_ITEM).then((r) => {
        if (r.status !== 200) throw new Error(`cannot create the bench ad item: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.id as number;
      }),
    );
  }
  return made.get(ctx)!;
}

export const adItemCases: BenchCase[] = [
  {
    name: `GET ${PATH}/{id}`,
    target: { minRatio: 0.25 },
    run: async (ctx) => load(ctx, `GET ${PATH}/{id}`, { port: ctx.gatewayPort, path: `${PATH}/${await benchItem(ctx)}` }),
  },
  {
    // The latency target holds below saturation: half of the rate the previous case reached, sent at
    // a steady pace (see `paced`).
    name: 'GET by id at half its maximum rate',
    target: { maxP99Ms: 25 },
    run: async (ctx) => {
      const max = ctx.results.find((r) => r.name === `GET ${PATH}/{id}`)?.reqPerSec ?? 100;
      const rate = Math.max(1, Math.floor(max / 2));
      const r = await paced(ctx, 'GET by id at half its maximum rate', { port: ctx.gatewayPort, path: `${PATH}/${await benchItem(ctx)}`, rate });
      return { ...r, note: `offered ${rate} req/s, evenly paced; ${describePauses(r.pauses ?? {})}` };
    },
  },
  {
    name: `GET ${PATH}?limit=10`,
    target: { minRatio: 0.2 },
    run: async (ctx) => {
      await benchItem(ctx);
      return load(ctx, `GET ${PATH}?limit=10`, { port: ctx.gatewayPort, path: `${PATH}?limit=10` });
    },
  },
  {
    name: `POST ${PATH}`,
    target: { minRatio: 0.12 },
    run: async (ctx) => {
      // Its own account: the rows it makes stay out of the other cases' lists.
      const { key } = await ctx.newKey();
      return load(ctx, `POST ${PATH}`, { port: ctx.gatewayPort, method: 'POST', path: PATH, body: AD_ITEM, key });
    },
  },
  {
    name: `PUT ${PATH}/{id}`,
    run: async (ctx) => load(ctx, `PUT ${PATH}/{id}`, { port: ctx.gatewayPort, method: 'PUT', path: `${PATH}/${await benchItem(ctx)}`, body: { name: 'Renamed bench ad item' } }),
  },
  {
    name: `GET ${PATH}/{id}?expand=all`,
    run: async (ctx) => load(ctx, `GET ${PATH}/{id}?expand=all`, { port: ctx.gatewayPort, path: `${PATH}/${await benchItem(ctx)}?expand=all` }),
  },
];
