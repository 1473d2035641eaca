/**
 * Does a list page cost the same whatever the table holds? p50 of `?limit=10` for an account holding
 * the small row count of one kind, then for one holding the large count (rows loaded straight into
 * the owning service's schema with generate_series, copies of one item made through the API).
 */
import { alternate, type BenchCase, type BenchContext } from '../harness';
import { AD_ITEM } from './ad-items';

const PATH = '/v2/ad-items/custom-html';

/** Gives a fresh account `rows` custom HTML ad items; returns its key and how long loading took. */
export async function loadAdItems(ctx: BenchContext, rows: number): Promise<{ key: string; seconds: number }> {
  const { key, accountId } = await ctx.newKey();
  const first = await ctx.api('POST', PATH, AD_ITEM, key);
  if (first.status !== 200) throw new Error(`cannot create an ad item: ${first.status}`);
  const started = Date.now();
  // Batches keep each transaction (and its WAL) bounded on a small machine.
  const batch = 200_000;
  for (let done = 1; done < rows; done += batch) {
    const n = Math.min(batch, rows - done);
    await ctx.sql(
      'inventory',
      `insert into resources (account_id, mode, kind, attributes, created_at, updated_at)
       select r.account_id, r.mode, r.kind, r.attributes, r.created_at, r.updated_at
         from resources r, generate_series(1, $3::int)
        where r.account_id = $1 and r.id = $2`,
      [accountId, first.body.id, n],
    );
  }
  // Vacuumed and analysed now, as a table in service would be: otherwise autovacuum works through the
  // fresh rows during the measurement (it once took 2.9 ms of Postgres CPU per listed page).
  await ctx.sql('inventory', 'vacuum (analyze) resources');
  return { key, seconds: (Date.now() - started) / 1000 };
}

export const listScaleCases: BenchCase[] = [
  {
    name: 'list p50, small vs large table',
    run: async (ctx) => {
      const [smallRows, largeRows] = ctx.options.rows;
      const small = await loadAdItems(ctx, smallRows);
      const large = await loadAdItems(ctx, largeRows);
      const names: [string, string] = [`list p50 at ${smallRows.toLocaleString('en')} rows`, `list p50 at ${largeRows.toLocaleString('en')} rows`];
      // Alternating slices, so that load drifting on the machine does not pass for a cost of size. Fewer
      // connections: this reads the latency of one page, not the platform's saturation.
      const [s, l] = await alternate(ctx, names, [
        { port: ctx.gatewayPort, path: `${PATH}?limit=10`, key: small.key, connections: 10 },
        { port: ctx.gatewayPort, path: `${PATH}?limit=10`, key: large.key, connections: 10 },
      ]);
      s.note = `loaded in ${small.seconds.toFixed(1)} s`;
      const growth = l.p50 / Math.max(s.p50, 0.001);
      l.note = `loaded in ${large.seconds.toFixed(1)} s; p50 ${growth.toFixed(2)}× the small table's (target ≤ 1.5×)`;
      l.met = growth <= 1.5;
      return [s, l];
    },
  },
];
