import type { ServiceSpec } from '../shared/service-main';
import { resourcesTableMigration } from '../shared/resource-store';

export const selfserveService: ServiceSpec = {
  name: 'selfserve',
  migrations: [resourcesTableMigration],
};
