import type { NextFunction, Request, Response, Router } from 'express';
import type { ConversionErrors, DraftErrors } from '../../../proto/gen/adserver/inventory/v1/drafts';
import type { Resource } from '../../../proto/gen/adserver/resources/v1/resources';
import { getKind } from '../../../services/shared/catalog';
import { DRAFT_AD_ITEM_KINDS } from '../../../services/shared/catalog/kinds/drafts';
import { drafts } from '../../../services/shared/grpc/clients';
import { ctxOf } from '../../context';
import { apiErrors, methodNotSupported } from '../../errors';
import { asCaller, backend } from '../backend';
import { parseId, parseShapeParams, queryFlag } from '../params';
import { documentedRoute, type JsonSchema } from '../route-docs';
import { shape } from '../shape';
import { renderResource, viewOf } from '../views';
import type { ActionModule } from './index';

/**
 * The draft campaigns' actions (the reference's /v2/drafts group): save, which turns a draft campaign
 * and its parts into real resources (inventory's Drafts API, one transaction), all-resources, and
 * the retrieval of a display ad item draft of any type. The drafts' CRUD is the catalog's.
 */

const CAMPAIGNS = [
  {
    kind: 'draft_vast_campaign',
    real: 'vast_campaign',
    allResourcesPath: '/v2/drafts/vast-campaigns/:id/all-resources',
    saveObject: 'draft_vast_campaign_save',
    allObject: 'draft_vast_campaign_all_resources',
    companions: false,
  },
  {
    kind: 'draft_standard_campaign',
    real: 'standard_campaign',
    // The reference puts it under /drafts/campaigns, not /drafts/campaigns/standard.
    allResourcesPath: '/v2/drafts/campaigns/:id/all-resources',
    saveObject: 'draft_conversion',
    allObject: 'draft_standard_campaign_all_resources',
    // Companion product drafts are not supported (see the module's report): always none.
    companions: true,
  },
] as const;

const GROUPS = ['ad_items', 'placements', 'schedules', 'campaign_assignments'] as const;
const idList: JsonSchema = { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } };

const errorsOut = (e: DraftErrors) => ({ draft_id: e.draftId, errors: e.errors.map((x) => ({ field: x.field, type: x.type, message: x.message })) });

/** The reference's grouped conversion error, with the platform's error members beside it. */
function conversionError(e: ConversionErrors) {
  const groups = { ad_items: e.adItems, placements: e.placements, schedules: e.schedules, campaign_assignments: e.campaignAssignments };
  const failing = (e.campaign ? 1 : 0) + Object.values(groups).reduce((n, g) => n + g.length, 0);
  return {
    object: 'error',
    status: 400,
    http_status: 400,
    type: 'invalid_request_parameters_error',
    message: `The draft campaign was not saved: ${failing} draft${failing === 1 ? ' has' : 's have'} invalid fields (listed by draft id). Nothing was created.`,
    ...(e.campaign ? { campaign: errorsOut(e.campaign) } : {}),
    ...Object.fromEntries(Object.entries(groups).map(([k, g]) => [k, g.map(errorsOut)])),
  };
}

export const draftActions: ActionModule = (router: Router) => {
  for (const c of CAMPAIGNS) {
    const view = viewOf(getKind(c.kind), 'v2')!;
    const realView = viewOf(getKind(c.real), 'v2')!;
    const savePath = `${view.path}/:id/save`;
    documentedRoute(router, {
      method: 'post',
      path: savePath,
      tag: 'drafts',
      summary: `Save a ${view.kind.title}: create the real ${realView.kind.title} and its parts`,
      description:
        'Creates, in one transaction, the real campaign and the real ad items, schedules, campaign assignments and placements of its drafts, ' +
        'validated as the real resources are, then marks the drafts converted (asset_created). When any draft fails, nothing is created and the ' +
        'answer (400) lists the errors by draft id. A converted draft answers 405.',
      response: {
        schema: {
          type: 'object',
          properties: { object: { const: c.saveObject }, campaign: { type: 'object' }, ...Object.fromEntries(GROUPS.map((g) => [g, idList])) },
        },
      },
      errors: [405],
    }, async (req: Request, res: Response) => {
      const ctx = ctxOf(res);
      const id = parseId(req.params.id as string, view.kind.title);
      const out = await asCaller(ctx, (metadata) => drafts.saveCampaign({ kind: c.kind, id }, { metadata, timeoutMs: 30_000 }));
      if (out.errors) {
        res.status(400).json(conversionError(out.errors));
        return;
      }
      const saved = out.saved!;
      res.json({
        object: c.saveObject,
        campaign: renderResource(realView, saved.campaign!),
        ad_items: saved.adItems.map((i) => ({ id: i })),
        placements: saved.placements.map((i) => ({ id: i })),
        schedules: saved.schedules.map((i) => ({ id: i })),
        campaign_assignments: saved.campaignAssignments.map((i) => ({ id: i })),
      });
    });
    router.all(savePath, methodNotSupported);

    documentedRoute(router, {
      method: 'get',
      path: c.allResourcesPath,
      tag: 'drafts',
      summary: `A ${view.kind.title} and the drafts that belong to it`,
      query: { expand: { type: 'boolean', description: 'Return the drafts themselves instead of their ids.' } },
      response: {
        schema: {
          type: 'object',
          properties: {
            object: { const: c.allObject },
            campaign: { type: 'object' },
            ...Object.fromEntries([...GROUPS, ...(c.companions ? ['ad_item_companion_products'] : [])].map((g) => [g, { type: 'array', items: { type: 'object' } }])),
          },
        },
      },
    }, async (req: Request, res: Response) => {
      const ctx = ctxOf(res);
      const id = parseId(req.params.id as string, view.kind.title);
      const expand = queryFlag(req, 'expand') ?? false;
      const out = await asCaller(ctx, (metadata) => drafts.getCampaignResources({ kind: c.kind, id }, { metadata, idempotent: true }));
      const render = (r: Resource) => (expand ? renderResource(viewOf(getKind(r.kind), 'v2')!, r) : { id: r.id });
      res.json({
        object: c.allObject,
        campaign: render(out.campaign!),
        ad_items: out.adItems.map(render),
        placements: out.placements.map(render),
        schedules: out.schedules.map(render),
        campaign_assignments: out.campaignAssignments.map(render),
        ...(c.companions ? { ad_item_companion_products: [] } : {}),
      });
    });
    router.all(c.allResourcesPath, methodNotSupported);
  }

  // One display ad item draft of any type by id (the list is the catalog's group at /v2/drafts/ad-items).
  const itemViews = DRAFT_AD_ITEM_KINDS.map((k) => viewOf(getKind(k), 'v2')!);
  const fieldNames = new Set(itemViews.flatMap((v) => v.output.map((f) => f.name)));
  const expandable = new Set(itemViews.flatMap((v) => [...v.expandable]));
  documentedRoute(router, {
    method: 'get',
    path: '/v2/drafts/ad-items/:id',
    tag: 'drafts',
    summary: 'A display ad item draft of any type',
    response: { schema: { type: 'object', properties: { object: { enum: DRAFT_AD_ITEM_KINDS }, id: { type: 'integer' }, draft: { type: 'object' } } } },
  }, async (req: Request, res: Response, next?: NextFunction) => {
    // The typed collections (/v2/drafts/ad-items/image...) are mounted after the actions.
    if (!/^\d+$/.test(req.params.id as string)) return next?.();
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, 'draft ad item');
    const sp = parseShapeParams(req, fieldNames, expandable);
    const found = await backend.list(ctx, { kinds: DRAFT_AD_ITEM_KINDS, ids: [id], limit: 1 });
    if (!found.items.length) throw apiErrors.notFound(`No draft ad item with id ${id} exists.`);
    res.json((await shape(ctx, found.items, sp))[0]);
  });
};
