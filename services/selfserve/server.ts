import { envInt } from '../shared/config';
import type { ServiceSpec } from '../shared/service-main';
import { hooks } from './hooks';
import { migrations } from './migrations';
import { recoverStalledOrders, selfserveBinding } from './selfserve-api';
import { errorFields, log } from '../shared/log';

export const selfserveService: ServiceSpec = {
  name: 'selfserve',
  migrations,
  hooks,
  bindings: (db, store) => [selfserveBinding(db, store)],
  /** Sweeps orders a crashed process left half-made, at start and then every ORDER_RECOVERY_INTERVAL_MS. */
  async start(db) {
    const sweep = () => recoverStalledOrders(db.knex).catch((err) => log.warn('order recovery sweep failed', errorFields(err)));
    void sweep();
    const timer = setInterval(sweep, envInt('ORDER_RECOVERY_INTERVAL_MS', 30_000, 10));
    return async () => clearInterval(timer);
  },
};
