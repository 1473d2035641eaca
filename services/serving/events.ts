import { Counter, Gauge } from 'prom-client';
import { registry } from '../shared/metrics';
import { EventKind, RecordEventsRequest, ServingEvent } from '../../proto/gen/adserver/reporting/v1/events';
import { envInt, envStr } from '../shared/config';
import { closeClients } from '../shared/grpc/client';
import { eventIngest } from '../shared/grpc/clients';
import { errorFields, log } from '../shared/log';
import { createRedis, eventsStreamKey } from '../shared/redis';
import type { Decision } from './tracking';

/**
 * Serving events on their way to reporting (contract: proto/adserver/reporting/v1/events.proto).
 * Events wait in a bounded in-memory buffer and leave in batches every EVENT_FLUSH_MS: with REDIS_URL
 * as one XADD per batch to the stream `${REDIS_KEY_PREFIX}serving-events`, without it as RecordEvents
 * calls to reporting. A failed batch stays in the buffer and is retried; a graceful stop flushes it.
 * A crash loses what the buffer holds: at most one flush interval of traffic in normal operation,
 * at most EVENT_BUFFER_MAX events while reporting or Redis is unreachable.
 */

export const eventsBuffered = new Gauge({ name: 'serving_events_buffered', help: 'Serving events waiting to be delivered', registers: [registry] });
export const eventsDelivered = new Counter({ name: 'serving_events_delivered_total', help: 'Serving events handed to Redis or reporting', labelNames: ['kind'], registers: [registry] });
export const eventsDropped = new Counter({ name: 'serving_events_dropped_total', help: 'Serving events dropped because the buffer was full', registers: [registry] });

const BATCH = 500;
/** Events per delivery (one stream entry or one RecordEvents call). */
export const BATCH_SIZE = BATCH;
/** Batches in flight at once. */
export const PARALLEL = 4;

export interface EventContext {
  visitor: string;
  ip: string;
  userAgent: string;
  referrer: string;
  /** Where the visitor is, when the GeoIP database is open (geo targets in use, or GEOIP_PRELOAD). */
  country?: string;
  region?: string;
  city?: string;
}

export const KIND_NAMES: Record<EventKind.RESPONSE | EventKind.IMPRESSION | EventKind.CLICK | EventKind.CONVERSION, string> = {
  [EventKind.RESPONSE]: 'response',
  [EventKind.IMPRESSION]: 'impression',
  [EventKind.CLICK]: 'click',
  [EventKind.CONVERSION]: 'conversion',
};

/** Who asked and from where, as every serving event stores it (cut to the stored widths). */
export function visitorFields(ctx: EventContext) {
  return {
    visitor: ctx.visitor,
    ip: ctx.ip,
    userAgent: ctx.userAgent.slice(0, 512),
    referrer: ctx.referrer.slice(0, 2048),
    country: ctx.country ?? '',
    region: (ctx.region ?? '').slice(0, 128),
    city: (ctx.city ?? '').slice(0, 128),
  };
}

/** The event of one decision (id `{decision}:{kind}`), or of a conversion with its own id. */
export function decisionEvent(kind: keyof typeof KIND_NAMES, d: Partial<Decision> & { account: number }, ctx: EventContext, id?: string): ServingEvent {
  return ServingEvent.fromPartial({
    id: id ?? `${d.id}:${KIND_NAMES[kind]}`,
    kind,
    occurredAt: new Date().toISOString(),
    account: d.account,
    publisher: d.publisher ?? 0,
    zone: d.zone ?? 0,
    advertiser: d.advertiser ?? 0,
    campaign: d.campaign ?? 0,
    adItem: d.adItem ?? 0,
    placement: d.placement ?? 0,
    assignment: d.assignment ?? 0,
    channel: d.channel ?? 0,
    geoTarget: d.geoTarget ?? 0,
    decision: d.id ?? '',
    ...visitorFields(ctx),
    pricingModel: d.pricingModel ?? '',
    price: d.price ?? '',
    currency: d.pricingModel ? 'USD' : '',
    // A VAST decision's events count in the VAST reports only.
    vast: d.adItemKind === 'vast_ad_item' || d.adItemKind === 'vast4_ad' || d.adItemKind === 'demand_vast',
    demandEndpoint: d.demandEndpoint ?? 0,
    demandSource: d.demandSource ?? 0,
    revenueShare: d.revenueShare ?? '',
  });
}

/** A VAST player's event of a decision (id `{decision}:video:{event}`): counted once per decision and event. */
export function videoEvent(event: string, d: Partial<Decision> & { account: number }, ctx: EventContext): ServingEvent {
  return { ...decisionEvent(EventKind.IMPRESSION, d, ctx, `${d.id}:video:${event}`), kind: EventKind.VIDEO, videoEvent: event };
}

interface Transport {
  name: string;
  send(batch: ServingEvent[]): Promise<void>;
  close(): Promise<void>;
}

function redisTransport(url: string): Transport {
  const stream = eventsStreamKey();
  const redis = createRedis(url, 'events', 'serving events');
  return {
    name: 'redis',
    async send(batch) {
      // One entry per batch: a command, an entry and a read per event cost serving, Redis and
      // reporting more than the event itself.
      await redis.xadd(stream, '*', 'b', Buffer.from(RecordEventsRequest.encode({ events: batch }).finish()));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

function grpcTransport(): Transport {
  return {
    name: 'grpc',
    // Not retried here: a failed batch stays buffered and the sink sends it again.
    send: async (batch) => void (await eventIngest.recordEvents({ events: batch })),
    async close() {
      closeClients();
    },
  };
}

export class EventSink {
  private buffer: ServingEvent[] = [];
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private failures = 0;
  private readonly max = envInt('EVENT_BUFFER_MAX', 20_000);
  private readonly intervalMs = envInt('EVENT_FLUSH_MS', 50);
  readonly transport: Transport;

  constructor() {
    const url = envStr('REDIS_URL');
    this.transport = url ? redisTransport(url) : grpcTransport();
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  push(e: ServingEvent): void {
    if (this.buffer.length >= this.max) {
      eventsDropped.inc();
      return;
    }
    this.buffer.push(e);
    eventsBuffered.set(this.buffer.length);
    if (this.buffer.length >= BATCH) void this.flush();
  }

  get pending(): number {
    return this.buffer.length;
  }

  /**
   * Sends what is buffered, up to PARALLEL batches at a time (reporting dedupes, so order does not
   * matter); a failed batch goes back to the front for the next try.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      while (this.buffer.length) {
        const batches: ServingEvent[][] = [];
        while (this.buffer.length && batches.length < PARALLEL) batches.push(this.buffer.splice(0, BATCH));
        eventsBuffered.set(this.buffer.length);
        const results = await Promise.allSettled(batches.map((b) => this.transport.send(b)));
        let failed: unknown;
        results.forEach((r, i) => {
          if (r.status === 'fulfilled') {
            for (const e of batches[i]) eventsDelivered.inc({ kind: KIND_NAMES[e.kind as keyof typeof KIND_NAMES] ?? 'unknown' });
          } else {
            failed = r.reason;
            this.buffer.unshift(...batches[i]);
          }
        });
        eventsBuffered.set(this.buffer.length);
        if (failed === undefined) {
          this.failures = 0;
          continue;
        }
        if (this.failures++ % 50 === 0) log.warn('serving events could not be delivered; kept for retry', { transport: this.transport.name, pending: this.buffer.length, ...errorFields(failed) });
        // Back off before the next interval tick retries.
        await new Promise((r) => setTimeout(r, Math.min(100 * this.failures, 2000)));
        break;
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Graceful stop: keep trying to deliver for up to `timeoutMs`, then close. */
  async close(timeoutMs = 10_000): Promise<number> {
    clearInterval(this.timer);
    const until = Date.now() + timeoutMs;
    while (this.buffer.length && Date.now() < until) await this.flush();
    await this.flushing;
    const left = this.buffer.length;
    if (left) log.error('serving events left undelivered at shutdown', { pending: left });
    await this.transport.close();
    return left;
  }
}
