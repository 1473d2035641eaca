import type { ServiceSpec } from '../shared/service-main';
import { resourcesTableMigration } from '../shared/resource-store';

export const reportingService: ServiceSpec = {
  name: 'reporting',
  migrations: [resourcesTableMigration],
};
