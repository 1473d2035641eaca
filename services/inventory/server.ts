import { serveBaseUrl } from '../shared/config';
import type { ServiceSpec } from '../shared/service-main';
import type { Database } from '../shared/db';
import { RESOURCE_MIGRATIONS } from '../shared/resource-store';
import { DecisionChangeHub, decisionChangesMigration, decisionChangesModeMigration, decisionDataBinding, endDecisionStreams } from './decision-data';
import { inventoryHooks } from './hooks';
import { inventoryMigrations } from './migrations';
import { adItemTasksBinding, creativeFilesBinding, startNativeToImageWorker } from './native-to-image';
import { tagsBinding } from './tags';
import { draftsBinding } from './drafts';
import { forecastsBinding } from './forecasts';

/** One change hub per process, shared by the DecisionData binding and the background start. */
let hub: DecisionChangeHub | undefined;
const hubFor = (db: Database) => (hub ??= new DecisionChangeHub(db));

export const inventoryService: ServiceSpec = {
  name: 'inventory',
  migrations: [...RESOURCE_MIGRATIONS, ...inventoryMigrations, decisionChangesMigration, decisionChangesModeMigration],
  hooks: inventoryHooks,
  bindings: (db, store) => {
    serveBaseUrl(); // read before serving, so that a bad SERVE_BASE_URL stops the process at start
    return [adItemTasksBinding(db, store), creativeFilesBinding(db), tagsBinding(store), decisionDataBinding(db, hubFor(db)), forecastsBinding(db.knex), draftsBinding(store, db.knex)];
  },
  start: async (db, store) => {
    await hubFor(db).start();
    // Watch streams never end by themselves: end them first so the gRPC server can drain on SIGTERM.
    process.prependListener('SIGTERM', endDecisionStreams);
    process.prependListener('SIGINT', endDecisionStreams);
    const stopWorker = await startNativeToImageWorker(db, store);
    return async () => {
      await hubFor(db).stop();
      if (stopWorker) await stopWorker();
    };
  },
};
