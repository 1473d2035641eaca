import { capAllows } from '../serving/targeting/frequency';
import { registerRule } from './rule';

/**
 * Frequency caps: at most `limit` views of a placement per visitor in a window, from the placement's
 * own cap or else its schedule's. Views are counted in the visitor's signed frequency cookie (or the
 * `user_freq` a server-side caller keeps).
 */

export interface FrequencyCap {
  limit: number;
  windowSeconds: number;
}

registerRule<FrequencyCap>({
  name: 'frequency_cap',
  resolve: (p) => {
    const limit = p.placement.frequencyLimit || p.schedule?.frequencyLimit || 0;
    const windowSeconds = p.placement.frequencyLimit ? p.placement.frequencyWindowSeconds : p.schedule?.frequencyWindowSeconds ?? 0;
    return limit && windowSeconds ? { limit, windowSeconds } : undefined;
  },
  evaluate: (t, r, placement) =>
    capAllows(r.frequency, placement, t.limit) ? { ok: true, preferred: false } : { ok: false, rule: 'frequency_cap', detail: `already shown ${r.frequency.get(placement)?.views} times in this window` },
});
