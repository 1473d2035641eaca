import { EventIngestService, type RecordEventsRequest, type RecordEventsResponse } from '../../proto/gen/adserver/reporting/v1/events';
import { envStr } from '../shared/config';
import { fail } from '../shared/errors';
import { implement } from '../shared/grpc/server';
import type { ServiceSpec } from '../shared/service-main';
import { batchProblems, recordEvents } from './events-ingest';
import { EventStreamConsumer } from './events-stream';
import { migrations } from './migrations';

const MAX_BATCH = 10_000;

export const reportingService: ServiceSpec = {
  name: 'reporting',
  migrations,
  bindings: (db) => [
    {
      definition: EventIngestService,
      implementation: implement('EventIngest', {
        /** A whole batch is refused when any event is malformed (the caller's bug), so nothing is half-stored. */
        async recordEvents(req: RecordEventsRequest): Promise<RecordEventsResponse> {
          if (req.events.length > MAX_BATCH) throw fail.badRequest(`A batch holds at most ${MAX_BATCH} events; this one holds ${req.events.length}.`);
          const problems = batchProblems(req.events);
          if (problems.length) throw fail.invalid(problems);
          return { stored: await recordEvents(db.knex, req.events) };
        },
      }),
    },
  ],
  /** With REDIS_URL, reads the serving-event stream (every replica joins the same consumer group). */
  async start(db) {
    const url = envStr('REDIS_URL');
    if (!url) return;
    const consumer = new EventStreamConsumer(db.knex, url);
    await consumer.start();
    return () => consumer.stop();
  },
};
