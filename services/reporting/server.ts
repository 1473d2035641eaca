import type { ServerUnaryCall } from '@grpc/grpc-js';
import { EventIngestService, type RecordEventsRequest, type RecordEventsResponse } from '../../proto/gen/adserver/reporting/v1/events';
import {
  ReportsService, type EventDetailsPage, type EventDetailsQuery, type EventLogExport, type EventLogQuery, type RebuildRollupsRequest,
  type RebuildRollupsResponse, type Report, type ReportQuery, type AuctionPlacementsQuery, type AuctionReport, type DemandSourceQuery, type DemandSourceReport, type DeliveryQuery, type DeliveryTotals, type PlatformEstimate, type PlatformEstimateQuery, type Traffic, type TrafficQuery,
} from '../../proto/gen/adserver/reporting/v1/reports';
import { envStr } from '../shared/config';
import { fail } from '../shared/errors';
import { implement } from '../shared/grpc/server';
import type { ServiceSpec } from '../shared/service-main';
import { tenantFromMetadata } from '../shared/tenant';
import { buildAuctionReport } from './auction-placements';
import { buildDemandSourceReport } from './demand-source';
import { deliveryTotals } from './delivery-totals';
import { platformEstimate, traffic } from './traffic';
import { exportEventLog, listEventDetails } from './event-details';
import { customReportHooks, customReportsBinding, startReportGeneration } from './custom-reports';
import { batchProblems, recordEvents } from './events-ingest';
import { EventStreamConsumer } from './events-stream';
import { migrations } from './migrations';
import { buildGeoSummary, buildReport, parseReportQuery } from './report-query';
import { rebuildRollups, startRetentionSweep } from './rollup-maintenance';

const MAX_BATCH = 10_000;
const tenantOf = (call: ServerUnaryCall<unknown, unknown>) => tenantFromMetadata(call.metadata);

export const reportingService: ServiceSpec = {
  name: 'reporting',
  migrations,
  hooks: customReportHooks,
  bindings: (db) => [
    customReportsBinding(db.knex),
    implement('EventIngest', EventIngestService, {
      /** A whole batch is refused when any event is malformed (the caller's bug), so nothing is half-stored. */
      async recordEvents(req: RecordEventsRequest): Promise<RecordEventsResponse> {
        if (req.events.length > MAX_BATCH) throw fail.badRequest(`A batch holds at most ${MAX_BATCH} events; this one holds ${req.events.length}.`);
        const problems = batchProblems(req.events);
        if (problems.length) throw fail.invalid(problems);
        return { stored: await recordEvents(db.knex, req.events) };
      },
    }),
    implement('Reports', ReportsService, {
      async getReport(req: ReportQuery, call): Promise<Report> {
        return buildReport(db.knex, tenantOf(call), parseReportQuery(req));
      },
      async getGeoSummary(req: ReportQuery, call): Promise<Report> {
        return buildGeoSummary(db.knex, tenantOf(call), parseReportQuery(req, { periodRequired: false }));
      },
      async listEventDetails(req: EventDetailsQuery, call): Promise<EventDetailsPage> {
        if (req.kind !== 'click' && req.kind !== 'conversion') throw fail.badRequest("kind must be 'click' or 'conversion'.");
        if (req.limit < 1 || req.limit > 100 || req.offset < 0) throw fail.badRequest('limit must be 1-100 and offset non-negative.');
        return listEventDetails(db.knex, tenantOf(call), req);
      },
      async exportEventLog(req: EventLogQuery, call): Promise<EventLogExport> {
        return exportEventLog(db.knex, tenantOf(call), req);
      },
      /** An operator call (admin CLI): it spans every account, so it carries no tenant. */
      async rebuildRollups(req: RebuildRollupsRequest): Promise<RebuildRollupsResponse> {
        return rebuildRollups(db.knex, req);
      },
      /** Serving (no tenant) asks for any account; an API caller only for its own. */
      async getDelivery(req: DeliveryQuery, call): Promise<DeliveryTotals> {
        const tenant = call.metadata.get('x-account-id').length ? tenantOf(call) : undefined;
        if (tenant && tenant.accountId !== req.account) throw fail.notFound('account', req.account);
        return deliveryTotals(db.knex, req);
      },
      async getTraffic(req: TrafficQuery, call): Promise<Traffic> {
        return traffic(db.knex, tenantOf(call), req);
      },
      async getPlatformEstimate(req: PlatformEstimateQuery, call): Promise<PlatformEstimate> {
        return platformEstimate(db.knex, tenantOf(call), req);
      },
      async getAuctionPlacements(req: AuctionPlacementsQuery, call): Promise<AuctionReport> {
        if (!req.query) throw fail.badRequest('query is required.');
        return buildAuctionReport(db.knex, tenantOf(call), req);
      },
      async getDemandSourceReport(req: DemandSourceQuery, call): Promise<DemandSourceReport> {
        return buildDemandSourceReport(db.knex, tenantOf(call), req);
      },
    }),
  ],
  /**
   * Report generation (schedules and queued results, lease-claimed), the raw-event retention sweep (lease-claimed, one replica at a time) and, with REDIS_URL, the
   * serving-event stream reader (every replica joins the same consumer group).
   */
  async start(db) {
    const stopRetention = startRetentionSweep(db.knex);
    const stopGeneration = startReportGeneration(db.knex);
    const url = envStr('REDIS_URL');
    const consumer = url ? new EventStreamConsumer(db.knex, url) : undefined;
    await consumer?.start();
    return async () => {
      await consumer?.stop();
      await stopGeneration();
      await stopRetention();
    };
  },
};
