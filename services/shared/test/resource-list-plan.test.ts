/**
 * Listing one kind reads the tenant's own index, whatever the tenant's share of the table: ordered by
 * id alone, Postgres walked the primary key for a tenant owning most rows and read past every other
 * tenant's rows first (BENCHMARKS.md, "List p50 at 1,000,000 rows").
 */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl } from '../../../gateway/test/support/service-replica';
import { applyOrCheckMigrations } from '../migrations';
import { RESOURCE_MIGRATIONS, ResourceStore } from '../resource-store';

const info = (): PlatformInfo => JSON.parse(process.env.TEST_PLATFORM!) as PlatformInfo;

describe('listing one kind of a tenant that owns most of the table', () => {
  const schema = `list_plan_${process.pid}`;
  let knex: Knex;
  let store: ResourceStore;
  const small = { accountId: 1, mode: 'live' as const };
  const large = { accountId: 2, mode: 'live' as const };

  beforeAll(async () => {
    knex = knexFactory({ client: 'pg', connection: platformDatabaseUrl(info()), searchPath: [schema], pool: { min: 1, max: 1 } });
    await knex.raw('create schema ??', [schema]);
    await applyOrCheckMigrations('inventory', knex, RESOURCE_MIGRATIONS, schema);
    // The small tenant's rows come first in id order, then the large tenant's.
    for (const [t, n] of [[small, 20_000], [large, 200_000]] as const) {
      await knex.raw(
        `insert into resources (account_id, mode, kind, attributes) select ?, ?, 'custom_html_ad_item', jsonb_build_object('name', 'Ad ' || g) from generate_series(1, ?) g`,
        [t.accountId, t.mode, n],
      );
    }
    await knex.raw('vacuum (analyze) resources');
    store = new ResourceStore('inventory', { knex, schema, close: async () => undefined });
  }, 120_000);

  afterAll(async () => {
    await knex.raw('drop schema if exists ?? cascade', [schema]);
    await knex.destroy();
  });

  /** The plan Postgres picks for the statement list() sends, run with the same values. */
  async function planOf(run: () => Promise<unknown>): Promise<string> {
    let sent: { sql: string; bindings: unknown[] } | undefined;
    const seen = (q: { sql: string; bindings: unknown[] }) => {
      if (/from "resources"/.test(q.sql)) sent = q;
    };
    // Statements built by knex announce themselves; the everyday page goes to pg directly (preparedRows).
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as { text?: string; values?: unknown[] };
      if (q && typeof q === 'object' && q.text) seen({ sql: q.text, bindings: q.values ?? [] });
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    knex.on('query', seen);
    try {
      await run();
    } finally {
      knex.off('query', seen);
      pg.Client.prototype.query = original;
    }
    const numbered = sent!.sql;
    const rows = (await knex.raw(`explain ${numbered.replace(/\$(\d+)/g, (_, i) => `?`)}`, sent!.bindings as never[])).rows as { 'QUERY PLAN': string }[];
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  test('oldest first, newest first and a later page all go through resources_live_by_kind, in id order', async () => {
    for (const req of [{}, { newestFirst: true }, { offset: 30 }]) {
      const plan = await planOf(() => store.list(large, { kinds: ['custom_html_ad_item'], limit: 10, ...req }));
      expect(plan).toContain('resources_live_by_kind');
      expect(plan).not.toContain('resources_pkey');
    }
    const first = await store.list(large, { kinds: ['custom_html_ad_item'], limit: 10 });
    const ids = first.items.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids[0]).toBeGreaterThan(20_000);
    const last = await store.list(large, { kinds: ['custom_html_ad_item'], limit: 10, newestFirst: true });
    expect(last.items.map((r) => r.id)).toEqual([...last.items.map((r) => r.id)].sort((a, b) => b - a));
    const next = await store.list(large, { kinds: ['custom_html_ad_item'], limit: 10, offset: 10 });
    expect(next.items[0].id).toBeGreaterThan(ids[9]);
    expect((await store.list(small, { kinds: ["custom_html_ad_item"], limit: 5 })).items.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
  });
});
