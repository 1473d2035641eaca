import { status } from '@grpc/grpc-js';
import Redis from 'ioredis';
import type { Knex } from 'knex';
import { RecordEventsRequest, ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import { EventKind, recordEvents, reportingDb, servingEvent, startReportingReplica, waitFor } from './events-fixtures';

// Account ids here are far above the shared platform's, so these events never meet another test's.
const ACCOUNT = 900_000_000 + Math.floor(Math.random() * 1_000_000);
const withRedis = process.env.REDIS_URL ? describe : describe.skip;

async function rollupTotals(db: Knex, account: number) {
  const rows = await db.raw(
    `select coalesce(sum(responses),0)::int as responses, coalesce(sum(impressions),0)::int as impressions, coalesce(sum(clicks),0)::int as clicks,
            coalesce(sum(conversions),0)::int as conversions, coalesce(sum(amount),0)::text as amount
       from event_rollups where account_id = ?`,
    [account],
  );
  return rows.rows[0];
}

async function rawCount(db: Knex, account: number): Promise<number> {
  const rows = await db.raw('select count(*)::int as n from serving_events where account_id = ?', [account]);
  return rows.rows[0].n;
}

describe('EventIngest.RecordEvents', () => {
  test('overlapping batches store each event once; duplicates inside a batch collapse', async () => {
    const account = ACCOUNT;
    const events = Array.from({ length: 15 }, (_, i) => servingEvent({ account, id: `d${i}:impression`, kind: EventKind.IMPRESSION, pricingModel: 'cpm', price: '2.50', currency: 'USD' }));
    expect(await recordEvents(events.slice(0, 10))).toEqual({ stored: 10 });
    expect(await recordEvents(events.slice(5, 15))).toEqual({ stored: 5 });
    expect(await recordEvents([events[0], events[0], events[14]])).toEqual({ stored: 0 });
    const fresh = servingEvent({ account, id: 'x1:click', kind: EventKind.CLICK, pricingModel: 'cpc', price: '0.40', currency: 'USD' });
    expect(await recordEvents([fresh, fresh])).toEqual({ stored: 1 });
    const db = reportingDb();
    try {
      expect(await rawCount(db, account)).toBe(16);
      // 15 impressions at 2.50 CPM cost 0.0375; one click at 0.40 CPC.
      expect(await rollupTotals(db, account)).toEqual({ responses: 0, impressions: 15, clicks: 1, conversions: 0, amount: '0.437500000' });
    } finally {
      await db.destroy();
    }
  });

  test('a batch holding a malformed event is refused whole, naming the event', async () => {
    const good = servingEvent({ account: ACCOUNT + 1 });
    const bad = servingEvent({ account: ACCOUNT + 1, price: '2,50', pricingModel: 'cpm' });
    const err = await recordEvents([good, bad]).catch((e) => e);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/events\[1\]: price must be a decimal string/);
    const noAccount = await recordEvents([servingEvent({ account: 0 })]).catch((e) => e);
    expect(noAccount.code).toBe(status.INVALID_ARGUMENT);
    // Nothing of the refused batch was stored: the good event is new on its own.
    expect(await recordEvents([good])).toEqual({ stored: 1 });
  });
});

describe('concurrent batches', () => {
  test('the same events sent by many callers at once are counted once', async () => {
    const account = ACCOUNT + 2;
    const events = Array.from({ length: 300 }, (_, i) => servingEvent({ account, id: `c${i}:response`, zone: (i % 7) + 1 }));
    const results = await Promise.all(Array.from({ length: 6 }, (_, k) => recordEvents([...events.slice(k * 20), ...events.slice(0, k * 20)])));
    expect(results.reduce((s, r) => s + r.stored, 0)).toBe(300);
    const db = reportingDb();
    try {
      expect(await rawCount(db, account)).toBe(300);
      expect((await rollupTotals(db, account)).responses).toBe(300);
    } finally {
      await db.destroy();
    }
  });
});

withRedis('the serving-event stream', () => {
  const key = `${process.env.REDIS_KEY_PREFIX}serving-events`;
  let redis: Redis;
  let replica: Awaited<ReturnType<typeof startReportingReplica>>;
  let db: Knex;
  beforeAll(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    db = reportingDb();
    // A second reporting replica next to the platform's, quick to claim what dead consumers left.
    replica = await startReportingReplica({ EVENTS_CLAIM_IDLE_MS: '1000' });
  });
  afterAll(async () => {
    await replica?.stop();
    redis?.disconnect();
    await db?.destroy();
  });

  /** Adds one entry per event; resolves with the entries' ids. */
  const add = async (events: ServingEvent[]): Promise<string[]> => {
    const p = redis.pipeline();
    for (const e of events) p.xadd(key, '*', 'e', Buffer.from(ServingEvent.encode(e).finish()));
    return ((await p.exec()) ?? []).map(([, id]) => String(id));
  };
  /**
   * Whether none of these entries (in the order they were added) is pending in the group. Only these:
   * the serving tests running alongside keep other entries of the same stream pending at any moment.
   */
  const noneOfPending = async (ids: string[]): Promise<boolean> => {
    const pending = (await redis.xpending(key, 'reporting', ids[0], ids[ids.length - 1], 1_000_000)) as [string, ...unknown[]][];
    const mine = new Set(ids);
    return !pending.some(([id]) => mine.has(id));
  };

  test('entries read by two reporting replicas are stored once each, redelivered duplicates included, and acknowledged', async () => {
    const account = ACCOUNT + 3;
    const events = Array.from({ length: 2000 }, (_, i) =>
      servingEvent({ account, id: `s${i}:${i % 2 ? 'impression' : 'response'}`, kind: i % 2 ? EventKind.IMPRESSION : EventKind.RESPONSE, zone: (i % 5) + 1 }),
    );
    // Every event twice (a serving retry), in interleaved chunks so both replicas see both copies.
    const ids: string[] = [];
    for (let i = 0; i < events.length; i += 250) {
      ids.push(...(await add(events.slice(i, i + 250))));
      ids.push(...(await add(events.slice(Math.max(0, i - 250), i + 250))));
    }
    // Malformed entries (not a ServingEvent, no field e, an invalid event) are acknowledged and dropped.
    ids.push(String(await redis.xadd(key, '*', 'e', Buffer.from([0xff, 0xff, 0xff]))));
    ids.push(String(await redis.xadd(key, '*', 'other', 'x')));
    ids.push(...(await add([servingEvent({ account, id: '' })])));
    await waitFor('all events stored', async () => (await rawCount(db, account)) === 2000);
    await waitFor('none of them pending', () => noneOfPending(ids));
    const consumers = (await redis.xinfo('CONSUMERS', key, 'reporting')) as unknown[][];
    expect(consumers.length).toBeGreaterThanOrEqual(2);
    expect(await rollupTotals(db, account)).toMatchObject({ responses: 1000, impressions: 1000 });
  });

  test('a batch entry (field b, as serving writes) is stored event by event; an invalid event in it is dropped alone', async () => {
    const account = ACCOUNT + 7;
    const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => servingEvent({ account, id: `b${from + i}:response`, zone: ((from + i) % 3) + 1 }));
    const ids: string[] = [];
    const entry = async (events: ServingEvent[]) => {
      ids.push(String(await redis.xadd(key, '*', 'b', Buffer.from(RecordEventsRequest.encode({ events }).finish()))));
    };
    // 1,500 events in 3 entries of 500 (serving's batch size), one of them also carrying an invalid event
    // and a duplicate of an event of another entry.
    await entry(batch(0, 500));
    await entry([...batch(500, 500), servingEvent({ account, id: '' }), ...batch(0, 1)]);
    await entry(batch(1000, 500));
    ids.push(String(await redis.xadd(key, '*', 'b', Buffer.from([0xff, 0xff, 0xff]))));
    await waitFor('all batched events stored', async () => (await rawCount(db, account)) === 1500);
    await waitFor('none of them pending', () => noneOfPending(ids));
    expect(await rollupTotals(db, account)).toMatchObject({ responses: 1500 });
  });

  test('a replica stopped gracefully while entries keep arriving leaves none pending under its name', async () => {
    const account = ACCOUNT + 6;
    let sent = 0;
    let writing = true;
    // A steady trickle, so that the replica's blocked read is answered at any moment, its stop included.
    const writer = (async () => {
      while (writing) {
        await add([servingEvent({ account, id: `stop${sent}:response` })]);
        sent++;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    for (let round = 0; round < 3; round++) {
      const stopping = await startReportingReplica();
      const name = `-${stopping.proc.pid}-`;
      await new Promise((r) => setTimeout(r, 300));
      expect(await stopping.stop()).toBe(0);
      const consumers = ((await redis.xinfo('CONSUMERS', key, 'reporting')) as unknown[][]).map((c) => Object.fromEntries(Array.from({ length: c.length / 2 }, (_, i) => [c[2 * i], c[2 * i + 1]])));
      const mine = consumers.find((c) => String(c.name).includes(name));
      expect(mine && Number(mine.pending)).toBeFalsy();
    }
    writing = false;
    await writer;
    await waitFor('every event stored', async () => (await rawCount(db, account)) === sent);
  }, 90_000);

  test('entries a consumer read and never acknowledged (it died) are claimed and stored', async () => {
    const account = ACCOUNT + 4;
    const events = Array.from({ length: 50 }, (_, i) => servingEvent({ account, id: `dead${i}:click`, kind: EventKind.CLICK }));
    // A consumer that reads the entries and dies before storing them: they stay pending under its name.
    // Adding and reading in one MULTI gives it every entry before the live consumers are woken.
    const tx = redis.multi();
    for (const e of events) tx.xadd(key, '*', 'e', Buffer.from(ServingEvent.encode(e).finish()));
    tx.xreadgroup('GROUP', 'reporting', 'dead-consumer', 'COUNT', 1000, 'STREAMS', key, '>');
    const results = await tx.exec();
    const got = results![results!.length - 1][1] as [string, unknown[]][] | null;
    const taken = got?.[0]?.[1]?.length ?? 0;
    // And whatever else was waiting undelivered: tests running alongside write to the same stream.
    expect(taken).toBeGreaterThanOrEqual(50);
    await waitFor('claimed events stored', async () => (await rawCount(db, account)) === 50, 30_000);
    await waitFor('dead consumer holds nothing', async () => {
      const consumers = ((await redis.xinfo('CONSUMERS', key, 'reporting')) as unknown[][]).map((c) => Object.fromEntries(Array.from({ length: c.length / 2 }, (_, i) => [c[2 * i], c[2 * i + 1]])));
      const d = consumers.find((c) => c.name === 'dead-consumer');
      return !d || Number(d.pending) === 0;
    });
    expect((await rollupTotals(db, account)).clicks).toBe(50);
  });
});

describe('raw-event retention', () => {
  test('a lease-holding replica deletes raw events past the retention; the rollups keep counting them', async () => {
    const account = ACCOUNT + 5;
    const old = servingEvent({ account, id: 'old:impression', kind: EventKind.IMPRESSION, occurredAt: new Date(Date.now() - 3 * 86_400_000).toISOString() });
    const recent = servingEvent({ account, id: 'recent:impression', kind: EventKind.IMPRESSION });
    expect(await recordEvents([old, recent])).toEqual({ stored: 2 });
    const db = reportingDb();
    // A replica that keeps raw events one day; the platform's own replica holds the sweep lease, so
    // let it lapse: the next claimant takes it over.
    const replica = await startReportingReplica({ EVENT_RETENTION_DAYS: '1', EVENT_RETENTION_INTERVAL_MS: '1000' });
    try {
      await db.raw("update reporting_leases set expires_at = now() - interval '1 second' where name = 'retention'");
      await waitFor('the old raw event to be deleted', async () => (await rawCount(db, account)) === 1);
      const left = await db.raw('select id from serving_events where account_id = ?', [account]);
      expect(left.rows.map((r: { id: string }) => r.id)).toEqual(['recent:impression']);
      expect((await rollupTotals(db, account)).impressions).toBe(2);
      const lease = await db.raw("select holder from reporting_leases where name = 'retention'");
      expect(lease.rows).toHaveLength(1);
    } finally {
      await replica.stop();
      // Hand the sweep back to the platform's replica with its default retention.
      await db.raw("update reporting_leases set expires_at = now() - interval '1 second' where name = 'retention'");
      await db.destroy();
    }
  });
});
