/**
 * Named prepared statements (preparedQuery) on the run's real PostgreSQL: the same answers as a plain
 * query, and still answers after a migration changes the table's columns under a prepared plan; the
 * same for preparedRows, which sends a fixed text on knex's pool without the query builder.
 */
import knexFactory, { type Knex } from 'knex';
import type { PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl } from '../../../gateway/test/support/service-replica';
import { preparedQuery, preparedRows } from '../db';

const info = (): PlatformInfo => JSON.parse(process.env.TEST_PLATFORM!) as PlatformInfo;

describe('preparedQuery', () => {
  let knex: Knex;
  const table = `prepared_query_${process.pid}`;

  beforeAll(async () => {
    // One connection, so that every call meets the statement prepared by the first.
    knex = knexFactory({ client: 'pg', connection: platformDatabaseUrl(info()), pool: { min: 1, max: 1 } });
    await knex.schema.createTable(table, (t) => {
      t.bigIncrements('id');
      t.text('name');
    });
    await knex(table).insert([{ name: 'a' }, { name: 'b' }]);
  });

  afterAll(async () => {
    await knex.schema.dropTableIfExists(table);
    await knex.destroy();
  });

  test('is prepared once per connection and answers like the plain query', async () => {
    const byId = (id: number) => knex(table).where({ id }).first();
    expect(await preparedQuery(byId(1), 'test.byId')).toEqual({ id: 1, name: 'a' });
    expect(await preparedQuery(byId(2), 'test.byId')).toEqual({ id: 2, name: 'b' });
    expect(await preparedQuery(byId(3), 'test.byId')).toBeUndefined();
    const prepared = await knex.raw("select count(*)::int as n from pg_prepared_statements where name like 'test.byId#%'");
    expect(prepared.rows[0].n).toBe(1);
  });

  test('answers after a column is added under a prepared plan', async () => {
    const all = () => knex(table).select('*').orderBy('id');
    expect(await preparedQuery(all(), 'test.all')).toEqual([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]);
    await knex.schema.alterTable(table, (t) => t.text('extra').defaultTo('x'));
    // Postgres refuses the old plan ("cached plan must not change result type"): prepared anew.
    expect(await preparedQuery(all(), 'test.all')).toEqual([
      { id: 1, name: 'a', extra: 'x' },
      { id: 2, name: 'b', extra: 'x' },
    ]);
  });

  test('preparedRows answers like the plain query, releases its connection, and survives a column change', async () => {
    const text = `select * from "${table}" where id = $1`;
    expect(await preparedRows(knex, 'test.rawById', text, [1])).toEqual([expect.objectContaining({ id: 1, name: 'a' })]);
    expect(await preparedRows(knex, 'test.rawById', text, [99])).toEqual([]);
    // The pool holds one connection: had a call kept it, this would wait for knex's acquire timeout.
    expect((await knex.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await knex.schema.alterTable(table, (t) => t.text('later').defaultTo('y'));
    expect(await preparedRows(knex, 'test.rawById', text, [2])).toEqual([expect.objectContaining({ id: 2, name: 'b', later: 'y' })]);
    await expect(preparedRows(knex, 'test.rawBroken', `select * from "${table}" where nope = $1`, [1])).rejects.toMatchObject({ code: '42703' });
    expect(await preparedRows(knex, 'test.rawById', text, [1])).toHaveLength(1);
  });
});
