import type { ServiceSpec } from '../shared/service-main';
import { resourcesTableMigration } from '../shared/resource-store';

export const inventoryService: ServiceSpec = {
  name: 'inventory',
  migrations: [resourcesTableMigration],
};
