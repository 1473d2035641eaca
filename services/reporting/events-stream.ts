import type Redis from 'ioredis';
import type { Knex } from 'knex';
import client from 'prom-client';
import { RecordEventsRequest, ServingEvent } from '../../proto/gen/adserver/reporting/v1/events';
import { workerId } from '../shared/lease-queue';
import { envInt } from '../shared/config';
import { errorFields, log } from '../shared/log';
import { registry } from '../shared/metrics';
import { createRedis, eventsStreamKey } from '../shared/redis';
import { eventProblem, recordEvents } from './events-ingest';

export const EVENTS_GROUP = 'reporting';

export { eventsStreamKey };

const streamEntries = new client.Counter({
  name: 'reporting_stream_entries_total',
  help: 'Serving events read from the stream by this reporting process, by outcome (stored, duplicate, rejected; an unreadable entry counts one rejected).',
  labelNames: ['outcome'],
  registers: [registry],
});

type Entry = [id: string | Buffer, fields: (string | Buffer)[]];

/**
 * Reads the serving-event stream through the consumer group `reporting`: each batch is stored (raw +
 * rollups, duplicates ignored) before its entries are acknowledged, so a crash between the two only
 * redelivers. Entries a dead consumer left pending are claimed (XAUTOCLAIM) once idle longer than
 * EVENTS_CLAIM_IDLE_MS, so nothing read is lost; any number of reporting replicas can read at once.
 * Acknowledged entries are trimmed from the stream.
 */
export class EventStreamConsumer {
  private readonly key = eventsStreamKey();
  private readonly consumer = workerId();
  private readonly reader: Redis;
  private readonly cmd: Redis;
  private running = true;
  private loop?: Promise<void>;
  private claimTimer?: NodeJS.Timeout;
  private claiming?: Promise<void>;
  private readonly batch = envInt('EVENTS_STREAM_BATCH', 1000);
  /** Entries asked for per read: starts at one and adapts (sizeReads). */
  private entriesPerRead = 1;
  private readonly claimIdleMs = envInt('EVENTS_CLAIM_IDLE_MS', 30_000);

  constructor(
    private readonly knex: Knex,
    url: string,
  ) {
    this.reader = createRedis(url, 'stream', 'event stream reader');
    this.cmd = createRedis(url, 'stream', 'event stream');
  }

  async start(): Promise<void> {
    // Redis away at start is not fatal (nor waited for): the read loop creates the group once it answers.
    this.loop = this.ensureGroup()
      .catch((err) => log.warn('event stream group not created yet', errorFields(err)))
      .then(() => this.readLoop());
    const claim = () => {
      if (!this.claiming) this.claiming = this.claimAbandoned().catch((err) => log.warn('event stream claim failed', errorFields(err))).finally(() => (this.claiming = undefined));
    };
    claim();
    this.claimTimer = setInterval(claim, Math.max(1000, Math.min(this.claimIdleMs, 10_000)));
    log.info('event stream consumer started', { stream: this.key, consumer: this.consumer });
  }

  /**
   * Finishes the batch in hand (stored and acknowledged), then stops. The blocked XREADGROUP is let
   * run out (BLOCK 1 s) rather than cut off: Redis may already have handed it entries, which would
   * then sit pending under this dead consumer until another replica claimed them, 30 s or more later.
   */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.claimTimer);
    // Bounded: with Redis unreachable the read waits in the client's queue for ever.
    const readerDone = this.loop?.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([readerDone, new Promise((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
    this.reader.disconnect();
    await readerDone;
    await this.claiming;
    this.cmd.disconnect();
  }

  private async ensureGroup(): Promise<void> {
    try {
      // From the start of the stream: events written before reporting first ran are kept too.
      await this.cmd.xgroup('CREATE', this.key, EVENTS_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!/BUSYGROUP/.test((err as Error).message)) throw err;
    }
  }

  private async readLoop(): Promise<void> {
    while (this.running) {
      try {
        // Buffer replies: the field holds protobuf bytes, which UTF-8 decoding would corrupt.
        const res = (await this.reader.callBuffer('XREADGROUP', 'GROUP', EVENTS_GROUP, this.consumer, 'COUNT', this.entriesPerRead, 'BLOCK', 1000, 'STREAMS', this.key, '>')) as
          | [string, Entry[]][]
          | null;
        const entries = res?.[0]?.[1] ?? [];
        if (entries.length) await this.handle(entries);
      } catch (err) {
        if (!this.running) break;
        if (/NOGROUP/.test((err as Error).message)) await this.ensureGroup().catch(() => undefined);
        else log.warn('event stream read failed', errorFields(err));
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Stores then acknowledges. A failed store leaves the entries pending, to be claimed and retried. */
  private async handle(entries: Entry[]): Promise<void> {
    const events: ServingEvent[] = [];
    const ids = entries.map((e) => String(e[0]));
    let largest = 0;
    for (const [rawId, fields] of entries) {
      const id = String(rawId);
      const decoded = decodeEntry(fields);
      if (!decoded) {
        // A malformed entry can never be stored; acknowledging it keeps it from blocking the group.
        log.warn('event stream entry rejected', { entry: id, problem: 'no field b holding a RecordEventsRequest, nor e holding a ServingEvent' });
        streamEntries.inc({ outcome: 'rejected' });
        continue;
      }
      largest = Math.max(largest, decoded.length);
      for (const e of decoded) {
        const problem = eventProblem(e);
        if (problem) {
          log.warn('event stream event rejected', { entry: id, event: e.id.slice(0, 100), problem });
          streamEntries.inc({ outcome: 'rejected' });
        } else events.push(e);
      }
    }
    this.sizeReads(entries.length, largest);
    let stored = 0;
    for (let i = 0; i < events.length; i += this.batch) stored += await this.store(events.slice(i, i + this.batch));
    streamEntries.inc({ outcome: 'stored' }, stored);
    streamEntries.inc({ outcome: 'duplicate' }, events.length - stored);
    await this.cmd.xack(this.key, EVENTS_GROUP, ...ids);
  }

  /**
   * Serving writes batches of up to 500 events per entry; older writers one event per entry. A read
   * asks for about EVENTS_STREAM_BATCH events' worth, at the largest entry of the last read, and grows
   * by at most 4× a read, so that a stream mixing both forms never hands one read a thousand batches.
   */
  private sizeReads(entriesRead: number, largestEntry: number): void {
    if (!entriesRead) return;
    const wanted = Math.max(1, Math.floor(this.batch / Math.max(1, largestEntry)));
    this.entriesPerRead = Math.min(wanted, this.entriesPerRead * 4);
  }

  /**
   * Stores a batch, retrying a failed store a few times over about 3 s (a busy pool, a restarting
   * database): entries left pending after a failure wait for a claim, EVENTS_CLAIM_IDLE_MS or more.
   */
  private async store(events: ServingEvent[]): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await recordEvents(this.knex, events);
      } catch (err) {
        if (attempt >= 4 || !this.running) throw err;
        log.warn('storing stream events failed; retrying', { attempt, events: events.length, ...errorFields(err) });
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }

  /** Takes over entries left pending by consumers that died, then trims what every reader has acknowledged. */
  private async claimAbandoned(): Promise<void> {
    let cursor = '0-0';
    do {
      const res = (await this.cmd.callBuffer('XAUTOCLAIM', this.key, EVENTS_GROUP, this.consumer, this.claimIdleMs, cursor, 'COUNT', this.entriesPerRead)) as [string, (Entry | null)[], string[]?];
      cursor = String(res[0]);
      const entries = (res[1] ?? []).filter((e): e is Entry => Array.isArray(e) && Array.isArray(e[1]));
      if (entries.length) {
        log.info('claimed abandoned event stream entries', { count: entries.length });
        await this.handle(entries);
      }
    } while (cursor !== '0-0' && this.running);
    await this.trim();
    await this.forgetIdleConsumers();
  }

  /** Drops entries older than both the oldest pending one and the group's last delivered id. */
  private async trim(): Promise<void> {
    const groups = (await this.cmd.xinfo('GROUPS', this.key)) as unknown[][];
    const info = groups.map(pairs).find((g) => g.name === EVENTS_GROUP);
    if (!info) return;
    const pending = (await this.cmd.xpending(this.key, EVENTS_GROUP)) as [number, string | null, string | null, unknown];
    const candidates = [String(info['last-delivered-id'])];
    if (Number(pending[0]) > 0 && pending[1]) candidates.push(pending[1]);
    const minId = candidates.sort(compareIds)[0];
    if (minId && minId !== '0-0') await this.cmd.xtrim(this.key, 'MINID', '~', minId);
  }

  /** Removes consumers of the group that hold nothing and have been idle an hour (dead replicas). */
  private async forgetIdleConsumers(): Promise<void> {
    const consumers = ((await this.cmd.xinfo('CONSUMERS', this.key, EVENTS_GROUP)) as unknown[][]).map(pairs);
    for (const c of consumers) {
      if (c.name !== this.consumer && Number(c.pending) === 0 && Number(c.idle) > 3_600_000) {
        await this.cmd.xgroup('DELCONSUMER', this.key, EVENTS_GROUP, String(c.name));
      }
    }
  }
}

function pairs(list: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[String(list[i])] = list[i + 1];
  return out;
}

function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  return am !== bm ? (am < bm ? -1 : 1) : as === bs ? 0 : as < bs ? -1 : 1;
}

/** The events of an entry: a batch (field `b`) or a single event (field `e`); undefined when unreadable. */
function decodeEntry(fields: (string | Buffer)[]): ServingEvent[] | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = String(fields[i]);
    if (name !== 'b' && name !== 'e') continue;
    const v = fields[i + 1];
    const bytes = Buffer.isBuffer(v) ? v : Buffer.from(v);
    try {
      return name === 'b' ? RecordEventsRequest.decode(bytes).events : [ServingEvent.decode(bytes)];
    } catch {
      return undefined;
    }
  }
  return undefined;
}
