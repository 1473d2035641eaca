import type { Knex } from 'knex';
import type { ServiceName } from './catalog/types';
import { envStr } from './config';
import type { Migration } from './db';
import { log } from './log';

/**
 * DB_MIGRATE=false (the chart's default): the service only checks its schema, because it runs with a
 * database user that may not run DDL; the pre-install/pre-upgrade Job (dist/scripts/migrate.js) applies
 * migrations with MIGRATIONS_DATABASE_URL. Anything else (npm start, tests): the service migrates itself.
 */
export function migrationsEnabled(): boolean {
  return envStr('DB_MIGRATE', 'true') !== 'false';
}

export class SchemaBehindError extends Error {}

/** Applies pending migrations, or (check-only mode) refuses to go on when any is pending. */
export async function applyOrCheckMigrations(service: ServiceName, knex: Knex, migrations: Migration[], schema: string): Promise<void> {
  const schemaName = schema === 'public' ? undefined : schema;
  if (migrationsEnabled()) {
    const source: Knex.MigrationSource<Migration> = {
      getMigrations: async () => migrations,
      getMigrationName: (m) => m.name,
      // Forward-only in production; a migration without `down` cannot be rolled back.
      getMigration: async (m) => ({ up: m.up, down: m.down ?? (async () => { throw new Error(`${m.name} cannot be rolled back`); }) }),
    };
    await knex.migrate.latest({ migrationSource: source, schemaName });
    return;
  }
  // Read-only check: knex.migrate.list would create its bookkeeping tables, which needs DDL rights.
  const table = `${schema}.knex_migrations`;
  const exists = (await knex.raw('select to_regclass(?) as t', [table])).rows[0]?.t;
  const applied = new Set<string>(
    exists ? (await knex.withSchema(schema).select('name').from('knex_migrations')).map((r: { name: string }) => r.name) : [],
  );
  const pending = migrations.map((m) => m.name).filter((n) => !applied.has(n));
  if (pending.length) {
    log.error('database schema is behind this version: run the migrations job (dist/scripts/migrate.js) first, or set DB_MIGRATE=true', {
      service,
      schema,
      pending,
    });
    throw new SchemaBehindError(`schema ${schema} of ${service} lacks ${pending.length} migration(s): ${pending.join(', ')}`);
  }
  log.info('database schema up to date (DB_MIGRATE=false: checked, not migrated)', { service, schema, migrations: applied.size });
}
