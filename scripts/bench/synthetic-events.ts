import { EventKind, type ServingEvent } from '../../proto/gen/adserver/reporting/v1/events';
import { eventIngest } from '../../services/shared/grpc/clients';

/**
 * Synthetic serving events for benchmarks and demos: decisions spread evenly over the last `days`
 * days across `zones` zones with `adItems` ad items each (placements and campaigns follow the ad
 * item), priced CPM 2.50 USD. Each decision yields a response and an impression; every 50th a click,
 * every 500th a conversion. Ids are deterministic per (run, index), so a re-run with the same run id
 * adds nothing.
 */
export interface SyntheticOptions {
  account: number;
  events: number;
  days: number;
  zones: number;
  adItems: number;
  run: string;
  now?: number;
}

export function syntheticBatch(o: SyntheticOptions, start: number, count: number): ServingEvent[] {
  const now = o.now ?? Date.now();
  const span = o.days * 86_400_000;
  const out: ServingEvent[] = [];
  for (let i = start; i < Math.min(o.events, start + count); i++) {
    const d = Math.floor(i / 2);
    const zone = 1 + (d % o.zones);
    const item = 1 + (Math.floor(d / o.zones) % o.adItems);
    const adItem = zone * 100 + item;
    let kind = i % 2 === 0 ? EventKind.RESPONSE : EventKind.IMPRESSION;
    if (i % 100 === 99) kind = EventKind.CLICK;
    if (i % 1000 === 999) kind = EventKind.CONVERSION;
    const at = now - span + Math.floor(((i + 0.5) / o.events) * span);
    out.push({
      id: `${o.run}-${d}:${EventKind[kind].toLowerCase()}-${i}`,
      kind,
      occurredAt: new Date(at).toISOString(),
      account: o.account,
      publisher: 1 + (zone % 5),
      geoTarget: 0,
      zone,
      advertiser: 1 + (adItem % 7),
      campaign: 1000 + adItem,
      adItem,
      placement: 10_000 + adItem,
      assignment: 0,
      channel: 0,
      decision: `${o.run}-${d}`,
      visitor: '',
      ip: `198.51.100.${d % 250}`,
      userAgent: 'synthetic',
      referrer: '',
      country: ['US', 'CA', 'DE', 'BR'][d % 4],
      region: '',
      city: '',
      pricingModel: 'cpm',
      price: '2.50',
      currency: 'USD',
      conversionValue: '',
      conversionReference: '',
      vast: false,
      videoEvent: '',
      demandEndpoint: 0,
      demandSource: 0,
      revenueShare: '',
      bids: [],
    });
  }
  return out;
}

/** Loads the events through EventIngest.RecordEvents in batches, `concurrency` batches at a time. */
export async function loadSyntheticEvents(o: SyntheticOptions, batch = 5000, concurrency = 2, onProgress?: (done: number) => void): Promise<{ stored: number; seconds: number }> {
  let next = 0;
  let stored = 0;
  let done = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < o.events) {
        const start = next;
        next += batch;
        const events = syntheticBatch(o, start, batch);
        const res = await eventIngest.recordEvents({ events }, { timeoutMs: 120_000 });
        stored += res.stored;
        done += events.length;
        onProgress?.(done);
      }
    }),
  );
  return { stored, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}
