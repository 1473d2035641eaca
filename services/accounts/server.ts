import type { ServiceSpec } from '../shared/service-main';
import { hashPassword, randomPassword } from '../shared/passwords';
import type { KindHooks } from '../shared/resource-store';
import { accountsBinding, keyRevocationFeed } from './accounts-api';
import { bidderHooks } from './bidders';
import { migrations } from './migrations';

/** Publisher and advertiser passwords: random when blank, stored only as a hash. */
const portalUser: KindHooks = {
  async prepare(values, ctx) {
    const given = typeof values.password === 'string' && values.password !== '';
    if (given || ctx.op === 'create') {
      values.password_hash = await hashPassword(given ? (values.password as string) : randomPassword());
      values.has_password = given;
    }
    delete values.password;
  },
};

/** The revocation feed of this process (made with its bindings, stopped with the service). */
let feed: ReturnType<typeof keyRevocationFeed> | undefined;

export const accountsService: ServiceSpec = {
  name: 'accounts',
  migrations,
  hooks: { publisher: portalUser, advertiser: portalUser, bidder: bidderHooks },
  bindings: (db) => {
    feed = keyRevocationFeed();
    return [accountsBinding(db, feed)];
  },
  start: async () => () => feed!.listener.stop(),
};
