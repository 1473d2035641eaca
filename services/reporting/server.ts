import type { ServiceSpec } from '../shared/service-main';
import { RESOURCE_MIGRATIONS } from '../shared/resource-store';

export const reportingService: ServiceSpec = {
  name: 'reporting',
  migrations: RESOURCE_MIGRATIONS,
};
