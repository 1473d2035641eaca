import type { ServiceSpec } from '../shared/service-main';
import { hooks } from './hooks';
import { migrations } from './migrations';
import { selfserveBinding } from './selfserve-api';

export const selfserveService: ServiceSpec = {
  name: 'selfserve',
  migrations,
  hooks,
  bindings: (db, store) => [selfserveBinding(db, store)],
};
