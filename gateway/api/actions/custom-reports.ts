import type { NextFunction, Request, Response, Router } from 'express';
import type { GeneratedReport } from '../../../proto/gen/adserver/reporting/v1/custom_reports';
import { ctxOf } from '../../context';
import { apiErrors, methodNotSupported } from '../../errors';
import { asCaller } from '../backend';
import { customReports } from '../../../services/shared/grpc/clients';
import { parseId, parseListParams } from '../params';
import { documentedRoute } from '../route-docs';
import { reportOut } from './reports';

const DISPLAY = '/v2/reports/report-configurations';
const VAST = '/v2/vast-custom-reports';
/** The contract's name for display configurations; the same resources as the reference's path. */
const DISPLAY_ALIAS = '/v2/custom-reports';

function generatedOut(g: GeneratedReport, base: string, single: boolean, vast: boolean) {
  const self = g.schedule ? `${base}/${g.configuration}/schedules/${g.schedule}/generated/${g.id}` : `${base}/${g.configuration}/generated/${g.id}`;
  return {
    object: 'generated_report_configuration',
    self,
    id: g.id,
    name: g.name,
    report_configuration: g.configuration,
    report_configuration_schedule: g.schedule || null,
    status: g.status,
    created_at: g.createdAt,
    sent_at: g.status === 'success' ? g.completedAt : null,
    completed_at: g.completedAt || null,
    error: g.error || null,
    // Results are fetched through the API with a key; no contacts are e-mailed yet.
    active_recipients: [],
    removed_recipients: [],
    display_as: { details: g.displayDetails, summary: g.displaySummary },
    ...(single && g.report ? { report: reportOut(g.report, self, vast) } : {}),
  };
}

/**
 * Custom reports beyond the configurations' and schedules' CRUD (which the catalog serves): queue a
 * generation, list and fetch generated results, under the display and VAST names alike.
 */
export function customReportActions(router: Router): void {
  // `/v2/custom-reports/...` is `/v2/reports/report-configurations/...` under the contract's name.
  router.use((req: Request, _res: Response, next: NextFunction) => {
    if (req.path === DISPLAY_ALIAS || req.path.startsWith(`${DISPLAY_ALIAS}/`)) req.url = DISPLAY + req.url.slice(DISPLAY_ALIAS.length);
    next();
  });

  for (const [base, vast] of [[DISPLAY, false], [VAST, true]] as const) {
    const tag = vast ? 'vast-custom-reports' : 'report-configurations';
    const generated = { type: 'object', properties: { object: { const: 'generated_report_configuration' }, self: { type: 'string' }, id: { type: 'integer' }, status: { type: 'string' } } };
    const ids = { id: 'The report configuration id.', sid: 'The schedule id.', gid: 'The generated report id.' };
    const listQuery = { limit: { type: 'integer', min: 1, max: 100 }, offset: { type: 'integer', min: 0 }, id: { type: 'string', description: 'Comma-separated ids.' } } as const;
    documentedRoute(router, { method: 'post', path: `${base}/:id/generate`, summary: 'Queue a generation of a report configuration', tag, pathParams: ids, response: { schema: generated } }, async (req, res) => {
      const configuration = parseId(req.params.id as string, 'report configuration');
      const g = await asCaller(ctxOf(res), (metadata) => customReports.generate({ configuration, vast }, { metadata }));
      res.json(generatedOut(g, base, false, vast));
    });
    const list = (withConfiguration: boolean, withSchedule: boolean) => async (req: Request, res: Response) => {
      const lp = parseListParams(req);
      for (const name of Object.keys(req.query)) {
        if (!['limit', 'offset', 'id'].includes(name)) throw apiErrors.invalid([{ field: name, type: 'unknown_field', message: `'${name.slice(0, 64)}' is not a parameter of this list; use limit, offset or id.` }]);
      }
      const list = await asCaller(ctxOf(res), (metadata) => customReports.listGenerated({
        configuration: withConfiguration ? parseId(req.params.id as string, 'report configuration') : 0,
        schedule: withSchedule ? parseId(req.params.sid as string, 'report configuration schedule') : 0,
        vast, limit: lp.limit, offset: lp.offset, ids: lp.ids,
      }, { idempotent: true, metadata }));
      res.json({ object: 'list', has_more: list.hasMore, limit: lp.limit, offset: lp.offset, url: req.path, data: list.items.map((g) => generatedOut(g, base, false, vast)) });
    };
    const one = (withSchedule: boolean) => async (req: Request, res: Response) => {
      const g = await asCaller(ctxOf(res), (metadata) => customReports.getGenerated({
        configuration: parseId(req.params.id as string, 'report configuration'),
        schedule: withSchedule ? parseId(req.params.sid as string, 'report configuration schedule') : 0,
        id: parseId(req.params.gid as string, 'generated report'),
        vast,
      }, { idempotent: true, metadata }));
      res.json(generatedOut(g, base, true, vast));
    };
    const listed = (path: string, summary: string, handler: (req: Request, res: Response) => Promise<void>) =>
      documentedRoute(router, { method: 'get', path, summary, tag, pathParams: ids, query: listQuery, response: { listOf: generated } }, handler);
    const single = (path: string, summary: string, handler: (req: Request, res: Response) => Promise<void>) =>
      documentedRoute(router, { method: 'get', path, summary, tag, pathParams: ids, response: { schema: generated } }, handler);
    listed(`${base}/generated`, 'Every generated report', list(false, false));
    listed(`${base}/:id/generated`, 'The generated reports of a configuration', list(true, false));
    single(`${base}/:id/generated/:gid`, 'A generated report with its result', one(false));
    listed(`${base}/:id/schedules/:sid/generated`, 'The generated reports of a schedule', list(true, true));
    single(`${base}/:id/schedules/:sid/generated/:gid`, 'A generated report of a schedule with its result', one(true));
    for (const p of [`${base}/:id/generate`, `${base}/generated`, `${base}/:id/generated`, `${base}/:id/generated/:gid`, `${base}/:id/schedules/:sid/generated`, `${base}/:id/schedules/:sid/generated/:gid`]) {
      router.all(p, methodNotSupported);
    }
  }
}
