/**
 * Ad decisions: `/adserve/;ID=…;setID=…;type=json` of a live zone with one ad, answered from the
 * serving process's memory, measured on serving's own plain HTTP listener and through the gateway's
 * HTTPS proxy. Each counts a response event too, as real traffic does.
 */
import { load, type BenchCase, type BenchContext } from '../harness';

let zonePath: Promise<string> | undefined;

/** A live zone with one placed ad item, set up once and waited for on the serving process. */
function decisionPath(ctx: BenchContext): Promise<string> {
  zonePath ??= (async () => {
    const { accountId, liveKey } = await ctx.newKey();
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
    const zone = (await ctx.api('POST', '/v2/zones/standard', { name: 'Bench zone', width: 300, height: 250 }, liveKey)).body;
    const item = (await ctx.api('POST', '/v2/ad-items/image', { name: 'Bench ad', width: 300, height: 250, creative_url: 'https://cdn.example/bench.png', location: 'https://advertiser.example/' }, liveKey)).body;
    const schedule = (await ctx.api('POST', '/v2/schedules', { start_date: yesterday }, liveKey)).body;
    const placed = await ctx.api('POST', '/v2/placements', { zone: { id: zone.id, type: 'standard_zone' }, advertisement: { id: item.id, type: 'image_ad_item' }, schedule: schedule.id }, liveKey);
    if (placed.status !== 200) throw new Error(`bench placement failed: ${JSON.stringify(placed.body)}`);
    const path = `/adserve/;ID=${accountId};setID=${zone.id};type=json`;
    for (let i = 0; i < 100; i++) {
      const res = await ctx.api('GET', path, undefined, '');
      if (res.body?.status === 'SUCCESS') return path;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the bench zone never reached the serving process');
  })();
  return zonePath;
}

export const servingCases: BenchCase[] = [
  {
    name: 'ad decision: serving direct (plain HTTP)',
    run: async (ctx) => load(ctx, 'ad decision: serving direct (plain HTTP)', { port: Number(ctx.env.SERVING_PORT), path: await decisionPath(ctx), key: '', plainHttp: true }),
  },
  {
    name: 'ad decision: through the gateway (HTTPS proxy)',
    run: async (ctx) => load(ctx, 'ad decision: through the gateway (HTTPS proxy)', { port: ctx.gatewayPort, path: await decisionPath(ctx), key: '' }),
  },
];
