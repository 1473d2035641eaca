import type { Resource } from '../../proto/gen/adserver/resources/v1/resources';
import { findKind, getKind } from '../../services/shared/catalog';
import type { RequestContext } from '../context';
import { backend } from './backend';
import type { ShapeParams } from './params';
import { renderResource, viewOf } from './views';

const FETCH_CHUNK = 500;

/**
 * Renders resources in the caller's version: field filtering on the top level, then expansion of
 * referenced ids into objects, level by level up to `depth`, fetching each level's references in one
 * batched call per kind. In v2 an expanded reference is an array holding the object.
 */
export async function shape(ctx: RequestContext, items: Resource[], params: ShapeParams): Promise<Record<string, unknown>[]> {
  return renderLevel(ctx, items, params, params.depth, true);
}

async function renderLevel(ctx: RequestContext, items: Resource[], params: ShapeParams, depthLeft: number, top: boolean): Promise<Record<string, unknown>[]> {
  const fields = top ? params.fields : undefined;
  const rendered = items.map((r) => renderResource(viewOf(getKind(r.kind), ctx.version)!, r, fields));
  if (!params.expand || depthLeft < 1) return rendered;

  const wanted: { target: Record<string, unknown>; field: string; kind: string; id: number }[] = [];
  items.forEach((r, i) => {
    const view = viewOf(getKind(r.kind), ctx.version)!;
    for (const f of view.output) {
      if (!f.spec || (f.spec.type !== 'ref' && f.spec.type !== 'typed_ref')) continue;
      if (params.expand !== 'all' && !params.expand!.has(f.name)) continue;
      if (!(f.name in rendered[i])) continue;
      const v = r.attributes?.[f.canonical];
      if (v === null || v === undefined) continue;
      const ref = f.spec.type === 'ref' ? { kind: f.spec.ref!, id: v as number } : { kind: (v as { type: string }).type, id: (v as { id: number }).id };
      if (!findKind(ref.kind)?.views[ctx.version]) continue;
      wanted.push({ target: rendered[i], field: f.name, ...ref });
    }
  });
  if (!wanted.length) return rendered;

  const idsByKind = new Map<string, Set<number>>();
  for (const w of wanted) {
    if (!idsByKind.has(w.kind)) idsByKind.set(w.kind, new Set());
    idsByKind.get(w.kind)!.add(w.id);
  }
  const fetched: Resource[] = [];
  for (const [kind, idSet] of idsByKind) {
    const ids = [...idSet];
    for (let i = 0; i < ids.length; i += FETCH_CHUNK) {
      const chunk = ids.slice(i, i + FETCH_CHUNK);
      const res = await backend.list(ctx, { kinds: [kind], ids: chunk, limit: chunk.length });
      fetched.push(...res.items);
    }
  }
  const nested = await renderLevel(ctx, fetched, params, depthLeft - 1, false);
  const byKey = new Map(fetched.map((r, i) => [`${r.kind}:${r.id}`, nested[i]]));
  for (const w of wanted) {
    const obj = byKey.get(`${w.kind}:${w.id}`);
    if (obj) w.target[w.field] = ctx.version === 'v2' ? [obj] : obj;
  }
  return rendered;
}
