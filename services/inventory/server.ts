import type { ServiceSpec } from '../shared/service-main';
import { RESOURCE_MIGRATIONS } from '../shared/resource-store';
import { displayHooks } from './hooks/display';
import { targetingHooks } from './hooks/targeting';
import { v2Hooks } from './hooks/v2';
import { migrationsV2 } from './migrations-v2';
import { adItemTasksBinding, creativeFilesBinding, startNativeToImageWorker } from './native-to-image';
import { tagsBinding } from './tags';

export const inventoryService: ServiceSpec = {
  name: 'inventory',
  migrations: [...RESOURCE_MIGRATIONS, ...migrationsV2],
  hooks: { ...v2Hooks, ...displayHooks, ...targetingHooks },
  bindings: (db, store) => [adItemTasksBinding(db, store), creativeFilesBinding(db), tagsBinding(store)],
  start: (db, store) => startNativeToImageWorker(db, store),
};
