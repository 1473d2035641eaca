import type Redis from 'ioredis';
import type { DecisionDemandSource } from '../../../proto/gen/adserver/inventory/v1/decision_data';
import { errorFields, log } from '../../shared/log';

/**
 * Demand sources' spend limits: what each source's won impressions cost in the current period of its
 * limit (once, weekly, biweekly, monthly, quarterly), so a source that has spent its limit gets no more
 * bid requests until the period turns. Before spend_limit_start and after spend_limit_end a source is
 * not limited.
 *
 * With Redis, replicas share one counter per source and period (INCRBYFLOAT on each billed impression);
 * the decision path reads a copy refreshed at most every REFRESH_MS, so replicas may overshoot a limit
 * by what they win within that time. Without Redis the counter is this process's own.
 */

const REFRESH_MS = 1000;
const DAY = 86_400_000;

/** The period of a limit that `now` falls in, as a key part; undefined when the limit does not apply now. */
export function spendPeriod(s: DecisionDemandSource, now: number): string | undefined {
  if (!s.spendLimit || Number(s.spendLimit) <= 0) return undefined;
  const start = s.spendLimitStart ? Date.parse(s.spendLimitStart) : NaN;
  const end = s.spendLimitEnd ? Date.parse(s.spendLimitEnd) : NaN;
  if (!Number.isNaN(start) && now < start) return undefined;
  if (!Number.isNaN(end) && now >= end) return undefined;
  const origin = Number.isNaN(start) ? 0 : start;
  const d = new Date(now);
  switch (s.spendLimitPeriod) {
    case 'weekly':
      return `w${Math.floor((now - origin) / (7 * DAY))}`;
    case 'biweekly':
      return `b${Math.floor((now - origin) / (14 * DAY))}`;
    case 'monthly':
      return `m${d.getUTCFullYear()}-${d.getUTCMonth() + 1}`;
    case 'quarterly':
      return `q${d.getUTCFullYear()}-${Math.floor(d.getUTCMonth() / 3) + 1}`;
    default:
      return 'once';
  }
}

export class SpendLimits {
  private readonly spent = new Map<string, { amount: number; readAt: number; reading?: Promise<void> }>();

  constructor(
    private readonly redis?: Redis,
    private readonly prefix = '',
  ) {}

  private key(account: number, source: number, period: string): string {
    return `${this.prefix}demand-spend:${account}:${source}:${period}`;
  }

  /** Whether a source may get bid requests now (its spend in this period is under its limit). */
  allows(account: number, sourceId: number, s: DecisionDemandSource, now: number): boolean {
    const period = spendPeriod(s, now);
    if (!period) return true;
    const k = this.key(account, sourceId, period);
    let e = this.spent.get(k);
    if (!e) this.spent.set(k, (e = { amount: 0, readAt: 0 }));
    if (this.redis && now - e.readAt > REFRESH_MS && !e.reading) {
      const entry = e;
      entry.reading = this.redis
        .get(k)
        .then((v) => {
          entry.amount = Math.max(entry.amount, Number(v ?? 0));
          entry.readAt = Date.now();
        })
        .catch((err: unknown) => log.warn('demand spend could not be read', errorFields(err)))
        .finally(() => (entry.reading = undefined));
    }
    return e.amount < Number(s.spendLimit);
  }

  /** Adds a billed impression's cost (CPM / 1000) to its source's current period. */
  record(account: number, sourceId: number, s: DecisionDemandSource, cpm: number, now: number): void {
    const period = spendPeriod(s, now);
    if (!period || !(cpm > 0)) return;
    const k = this.key(account, sourceId, period);
    const cost = cpm / 1000;
    const e = this.spent.get(k) ?? { amount: 0, readAt: 0 };
    e.amount += cost;
    this.spent.set(k, e);
    if (this.spent.size > 50_000) this.spent.clear();
    if (!this.redis) return;
    // Kept a little past the longest period (a quarter), for a replica that reads late.
    this.redis
      .multi()
      .incrbyfloat(k, cost)
      .pexpire(k, 100 * DAY)
      .exec()
      .then((r) => {
        const total = Number(r?.[0]?.[1] ?? NaN);
        if (!Number.isNaN(total)) e.amount = Math.max(e.amount, total);
      })
      .catch((err: unknown) => log.warn('demand spend could not be counted', errorFields(err)));
  }
}
