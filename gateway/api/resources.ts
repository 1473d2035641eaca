import type { Request, RequestHandler, Response, Router } from 'express';
import { GROUPS, KINDS, getKind, type ApiVersion, type KindGroup, type Operation } from '../../services/shared/catalog';
import { checkJsonShape } from '../../services/shared/catalog/validate';
import { ctxOf } from '../context';
import { apiErrors, methodNotSupported } from '../errors';
import { markReplayed } from '../idempotency';
import { ACTION_MODULES } from './actions';
import { backend } from './backend';
import { parseId, parseListParams, parseShapeParams, queryFlag } from './params';
import { RouteTable } from './route-table';
import { shape } from './shape';
import { translateInput, viewOf, objectNameOf, type View } from './views';

const ALL_OPERATIONS: readonly Operation[] = ['list', 'create', 'get', 'update', 'delete'];
/** Bodies may not nest deeper than this (free-form fields have their own, lower limit). */
const MAX_BODY_NESTING = 16;

/** Names a response of this view can contain: what `fields` may ask for. */
function knownFields(views: View[]): Set<string> {
  return new Set(views.flatMap((v) => v.output.map((f) => f.name)));
}

function bodyAttributes(view: View, req: Request) {
  const body = req.body === undefined ? {} : req.body;
  const deep = checkJsonShape(body, 0, MAX_BODY_NESTING);
  if (deep) throw apiErrors.badRequest(`The request body ${deep}.`);
  const { attributes, errors } = translateInput(view, body);
  if (errors.length) throw apiErrors.invalid(errors);
  return attributes;
}

function deleteResult(version: ApiVersion, id: number | string) {
  return version === 'v1' ? { id, delete: true } : { id, deleted: true };
}

function refsOut(version: ApiVersion, refs: { kind: string; id: number }[]) {
  return refs.map((r) => ({ object: objectNameOf(r.kind, version) ?? r.kind, id: r.id }));
}

/**
 * For a nested collection: the parent ids named in the path, checked to exist (404 otherwise), as the
 * reference values they bind.
 */
async function scopeOf(view: View, req: Request, res: Response): Promise<Record<string, number>> {
  const scope = view.spec.scope;
  if (!scope) return {};
  const bound: Record<string, number> = {};
  for (const [param, field] of Object.entries(scope)) {
    const parentKind = getKind(view.kind.fields[field].ref!);
    const id = parseId(req.params[param] as string, parentKind.title);
    await backend.get(ctxOf(res), parentKind.kind, id);
    bound[field] = id;
  }
  return bound;
}

/** Loads a resource of a nested collection, 404 unless it sits under the parent(s) in the path. */
async function loadScoped(view: View, req: Request, res: Response, id: number) {
  const bound = await scopeOf(view, req, res);
  const r = await backend.get(ctxOf(res), view.kind.kind, id);
  for (const [field, parentId] of Object.entries(bound)) {
    if (r.attributes?.[field] !== parentId) throw apiErrors.notFound(`No ${view.kind.title} with id ${id} exists here.`);
  }
  return { resource: r, bound };
}

/** Mounts list/create/retrieve/update/delete (and archive) routes of one kind in one version. */
function mountKind(router: Router, view: View): void {
  const { path, kind } = view;
  const scoped = !!view.spec.scope;
  const ops = new Set(view.spec.operations ?? ALL_OPERATIONS);
  const disabled = view.spec.disabled ?? {};
  // Operations a view does not serve are not mounted: the catch-alls below answer them with 501, and
  // the OpenAPI document (built from the same views) leaves them out.
  const on = (method: 'get' | 'post' | 'put' | 'delete', p: string, op: Operation, handler: (req: Request, res: Response) => Promise<void>) => {
    if (!ops.has(op)) return;
    router[method](p, async (req: Request, res: Response) => {
      if (disabled[op]) throw apiErrors.badRequest(disabled[op]!, 'operation_disabled_error');
      await handler(req, res);
    });
  };
  const fieldNames = knownFields([view]);

  if (view.spec.archive) mountArchive(router, view, fieldNames);

  on('get', path, 'list', async (req, res) => {
    const ctx = ctxOf(res);
    const lp = parseListParams(req);
    const sp = parseShapeParams(req, fieldNames, view.expandable);
    const bound = await scopeOf(view, req, res);
    const filters = Object.entries(bound).map(([field, equals]) => ({ field, equals, anyOf: [] }));
    const out = await backend.list(ctx, { kinds: [kind.kind], limit: lp.limit, offset: lp.offset, ids: lp.ids, newestFirst: view.version === 'v1', filters });
    const url = req.path.replace(/\/+$/, '');
    res.json({ object: 'list', has_more: out.hasMore, limit: lp.limit, offset: lp.offset, url, data: await shape(ctx, out.items, sp) });
  });
  on('post', path, 'create', async (req, res) => {
    const ctx = ctxOf(res);
    const sp = parseShapeParams(req, fieldNames, view.expandable);
    const attributes = bodyAttributes(view, req);
    for (const [field, parentId] of Object.entries(await scopeOf(view, req, res))) {
      if (attributes[field] !== undefined && attributes[field] !== parentId) {
        throw apiErrors.invalid([{ field: view.versionName(field), type: 'invalid_value', message: `'${view.versionName(field)}' must match the ${field} in the path (${parentId}).` }]);
      }
      attributes[field] = parentId;
    }
    const created = await backend.create(ctx, kind.kind, attributes);
    markReplayed(res, created.replayed);
    res.json((await shape(ctx, [created], sp))[0]);
  });
  on('get', `${path}/:id`, 'get', async (req, res) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, kind.title);
    const sp = parseShapeParams(req, fieldNames, view.expandable);
    const found = scoped ? (await loadScoped(view, req, res, id)).resource : await backend.get(ctx, kind.kind, id);
    res.json((await shape(ctx, [found], sp))[0]);
  });
  on('put', `${path}/:id`, 'update', async (req, res) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, kind.title);
    const sp = parseShapeParams(req, fieldNames, view.expandable);
    const attributes = bodyAttributes(view, req);
    if (scoped) {
      const { bound } = await loadScoped(view, req, res, id);
      for (const field of Object.keys(bound)) {
        if (attributes[field] !== undefined && attributes[field] !== bound[field]) {
          throw apiErrors.invalid([{ field: view.versionName(field), type: 'invalid_value', message: `'${view.versionName(field)}' cannot be moved to another ${field}.` }]);
        }
      }
    }
    const updated = await backend.update(ctx, kind.kind, id, attributes);
    res.json((await shape(ctx, [updated], sp))[0]);
  });
  on('delete', `${path}/:id`, 'delete', async (req, res) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, kind.title);
    if (scoped) await loadScoped(view, req, res, id);
    const out = await backend.delete(ctx, kind.kind, id);
    res.json(deleteResult(view.version, view.spec.stringId ? String(out.id) : out.id));
  });
  router.all(path, methodNotSupported);
  router.all(`${path}/:id`, methodNotSupported);
}

function includesOf(req: Request): string[] {
  const include: string[] = [];
  for (const [param, group] of [
    ['include_campaign_assignments', 'campaign_assignments'],
    ['include_placements', 'placements'],
  ] as const) {
    if (queryFlag(req, param)) include.push(group);
  }
  return include;
}

/**
 * Archive routes. v1: GET /{id}/archive and /{id}/unarchive. v2 adds the archived collection:
 * GET /archived, /archived/{id} and /archived/{id}/unarchive, and DELETE /archived/{id} where the view asks for it.
 */
function mountArchive(router: Router, view: View, fieldNames: Set<string>): void {
  const { path, kind, version } = view;
  const unarchive = async (req: Request, res: Response) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, kind.title);
    const out = await backend.unarchive(ctx, kind.kind, id, includesOf(req));
    const data: Record<string, unknown> = { unarchived_resources: refsOut(version, out.unarchived) };
    if (out.notRestored.length) {
      data.not_restored_resources = out.notRestored.map((n) => ({ ...refsOut(version, [n.resource!])[0], reason: n.reason }));
    }
    res.json({ object: 'unarchive', url: req.path, data });
  };
  router.get(`${path}/:id/archive`, async (req, res) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, kind.title);
    const out = await backend.archive(ctx, kind.kind, id);
    res.json({ object: 'archive', url: req.path, data: { archived_resources: refsOut(version, out.archived) } });
  });
  if (version === 'v1') {
    router.get(`${path}/:id/unarchive`, unarchive);
    return;
  }
  router.get(`${path}/archived`, async (req, res) => {
    const ctx = ctxOf(res);
    const lp = parseListParams(req);
    const sp = parseShapeParams(req, fieldNames, view.expandable);
    const out = await backend.list(ctx, { kinds: [kind.kind], limit: lp.limit, offset: lp.offset, ids: lp.ids, archived: true });
    const data = (await shape(ctx, out.items, sp)).map((o) => ({ ...o, self: `${path}/archived/${o.id}` }));
    res.json({ object: 'list', has_more: out.hasMore, limit: lp.limit, offset: lp.offset, url: `${path}/archived`, data });
  });
  router.get(`${path}/archived/:id`, async (req, res) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, kind.title);
    const sp = parseShapeParams(req, fieldNames, view.expandable);
    const [o] = await shape(ctx, [await backend.get(ctx, kind.kind, id, true)], sp);
    res.json({ ...o, self: `${path}/archived/${id}` });
  });
  router.get(`${path}/archived/:id/unarchive`, unarchive);
  if (view.spec.archivedDelete) {
    router.delete(`${path}/archived/:id`, async (req, res) => {
      const ctx = ctxOf(res);
      const id = parseId(req.params.id as string, kind.title);
      const out = await backend.delete(ctx, kind.kind, id, true);
      res.json(deleteResult(version, out.id));
    });
  }
}

/** GET on an "all types" collection: one list over several kinds, each rendered in its own shape. */
function mountGroup(router: Router, group: KindGroup): void {
  const views = group.kinds.map((k) => viewOf(getKind(k), group.version)!);
  const fieldNames = knownFields(views);
  const expandable = new Set(views.flatMap((v) => [...v.expandable]));
  const service = views[0].kind.service;
  if (views.some((v) => v.kind.service !== service)) throw new Error(`catalog: group ${group.path} spans services`);
  router.get(group.path, async (req, res) => {
    const ctx = ctxOf(res);
    const lp = parseListParams(req);
    const sp = parseShapeParams(req, fieldNames, expandable);
    const filters = Object.entries(group.idFilters ?? {}).flatMap(([param, field]) => {
      const raw = req.query[param];
      if (raw === undefined || raw === '') return [];
      const ids = String(raw).split(',').map((s) => s.trim());
      if (ids.length > 1000 || ids.some((id) => !/^[1-9]\d{0,15}$/.test(id))) {
        throw apiErrors.invalid([{ field: param, type: 'invalid_value', message: `'${param}' must be a comma-separated list of ids, e.g. 12,15.` }]);
      }
      return [{ field, equals: undefined, anyOf: ids.map(Number) }];
    });
    const out = await backend.list(ctx, { kinds: [...group.kinds], limit: lp.limit, offset: lp.offset, ids: lp.ids, newestFirst: group.version === 'v1', filters });
    res.json({ object: 'list', has_more: out.hasMore, limit: lp.limit, offset: lp.offset, url: group.path, data: await shape(ctx, out.items, sp) });
  });
  router.all(group.path, (req) => {
    throw apiErrors.notSupported(req.method, group.path);
  });
}

/** Every catalog-described route of both versions. Specific paths mount before `/{id}` patterns. */
export function resourceRouter(): RequestHandler {
  return resourceRouteTable().handler();
}

/** The table of every catalog-described route and every route beyond CRUD, in mounting order. */
export function resourceRouteTable(): RouteTable {
  const table = new RouteTable();
  // The mount functions only add routes, which the table takes like a Router.
  const router = table as unknown as Router;
  // Operations beyond CRUD (tags, conversion tags, tasks, add-funds...) mount first: they are more specific.
  for (const mount of ACTION_MODULES) mount(router);
  for (const version of ['v1', 'v2'] as const) {
    for (const group of GROUPS.filter((g) => g.version === version)) mountGroup(router, group);
    const views = KINDS.map((k) => viewOf(k, version)).filter((v): v is View => !!v);
    // Longer collection paths first, so /v1/zones/text is never taken for /v1/zones/{id}.
    views.sort((a, b) => b.path.length - a.path.length);
    for (const view of views) mountKind(router, view);
  }
  return table;
}

