import { fail } from '../shared/errors';
import type { KindHooks } from '../shared/resource-store';

/**
 * Bidder parameters belong to one bidding partner: changing `bidder_code` needs the new partner's
 * parameters in the same request. They are stored as given (replacing the old ones wholesale).
 */
export const bidderHooks: KindHooks = {
  prepare(values, ctx) {
    if (ctx.op === 'update' && values.bidder_code !== undefined && values.parameters === undefined) {
      throw fail.invalid([{ field: 'parameters', type: 'missing_field', message: `'parameters' must be given whenever 'bidder_code' is set.` }]);
    }
  },
};
