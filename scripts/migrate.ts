/**
 * Applies every service's schema migrations, then exits: the chart's pre-install/pre-upgrade Job.
 * Runs with MIGRATIONS_DATABASE_URL (a user allowed to run DDL; falls back to DATABASE_URL), while the
 * services run with DB_MIGRATE=false and a user that may not.
 *
 *   MIGRATIONS_DATABASE_URL=postgres://owner@db/ads node dist/scripts/migrate.js [service ...]
 */
import { SERVICE_NAMES, envStr, setEnvironment } from '../services/shared/config';
import type { ServiceName } from '../services/shared/catalog/types';
import { errorFields, log, setLogComponent } from '../services/shared/log';

async function main(): Promise<void> {
  setLogComponent('migrate');
  const url = envStr('MIGRATIONS_DATABASE_URL', envStr('DATABASE_URL'));
  if (!url) throw new Error('MIGRATIONS_DATABASE_URL (or DATABASE_URL) must name the PostgreSQL database to migrate');
  setEnvironment({ DATABASE_URL: url, DB_MIGRATE: 'true' });
  const wanted = process.argv.slice(2);
  for (const w of wanted) if (!SERVICE_NAMES.includes(w as ServiceName)) throw new Error(`unknown service '${w}' (one of ${SERVICE_NAMES.join(', ')})`);
  const { openDatabase, schemaFor } = await import('../services/shared/db');
  const specs = {
    accounts: async () => (await import('../services/accounts/server')).accountsService,
    inventory: async () => (await import('../services/inventory/server')).inventoryService,
    selfserve: async () => (await import('../services/selfserve/server')).selfserveService,
    reporting: async () => (await import('../services/reporting/server')).reportingService,
  } satisfies Record<ServiceName, unknown>;
  for (const service of (wanted.length ? wanted : SERVICE_NAMES) as ServiceName[]) {
    const spec = await specs[service]();
    const db = await openDatabase(service, spec.migrations);
    await db.close();
    log.info('migrated', { service, schema: schemaFor(service) });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    log.error('migrations failed', errorFields(err));
    process.exit(1);
  },
);
