import type { Request, Response, Router } from 'express';
import { getKind, type ApiVersion } from '../../../services/shared/catalog';
import { ctxOf } from '../../context';
import { apiErrors, methodNotSupported } from '../../errors';
import { asCaller } from '../backend';
import { tags } from '../../../services/shared/grpc/clients';
import { parseId, queryFlag } from '../params';
import { viewOf } from '../views';
import { documentedRoute } from '../route-docs';
import type { ActionModule } from './index';

const TAG_QUERY = {
  type: { type: 'string', description: 'Comma-separated tag types to return (all when omitted).' },
  protocol: { type: 'string', enum: ['http', 'https'], description: 'Protocol of the tag URLs.' },
  fallback: { type: 'boolean', description: 'Include the fallback markup.' },
  click: { type: 'string', description: 'Click-tracking URL to wrap clicks in.' },
  extra: { type: 'string', description: 'Extra data passed through to the ad.' },
} as const;

/**
 * Which kinds have zone tags and conversion tags, per version (spec 4.3 for v1; v2 per the reference).
 * v1 banner zones get tags too: the spec lists them for email and text zones only, but a v1 client
 * placing a banner zone needs its tags as much, and v2 has them for the same (standard) zone.
 */
const ZONE_TAGS: Record<ApiVersion, string[]> = { v1: ['standard_zone', 'email_zone', 'text_zone'], v2: ['standard_zone', 'email_zone', 'vast_zone'] };
const CONVERSION_TAGS: Record<ApiVersion, string[]> = {
  v1: ['text_zone', 'image_ad_item'],
  v2: [
    'standard_zone', 'email_zone', 'standard_campaign', 'image_ad_item', 'custom_html_ad_item', 'native_ad_item', 'rich_media_ad_item',
    'vast_ad_item', 'vast_zone', 'vast_campaign', 'vast_placement',
  ],
};


function query(req: Request, name: string): string {
  const v = req.query[name];
  if (v === undefined) return '';
  if (typeof v !== 'string') throw apiErrors.invalid([{ field: name, type: 'invalid_value', message: `'${name}' must be given once, as a plain value.` }]);
  return v;
}

function flag(req: Request, name: string): boolean {
  return queryFlag(req, name) ?? false;
}

/** GET {zone}/{id}/tags and GET {resource}/{id}/conversion-tag, answered by inventory's Tags API. */
export const tagActions: ActionModule = (router: Router) => {
  for (const version of ['v1', 'v2'] as const) {
    for (const kindName of ZONE_TAGS[version]) {
      const view = viewOf(getKind(kindName), version);
      if (!view) continue;
      documentedRoute(router, {
        method: 'get',
        path: `${view.path}/:id/tags`,
        summary: `The ad tags of a ${view.kind.title}`,
        pathParams: { id: `The ${view.kind.title} id.` },
        query: TAG_QUERY,
        response: { schema: { type: 'object', properties: { object: { const: kindName === 'vast_zone' ? 'vast_zone_tag' : 'zone_tag' }, url: { type: 'string' }, data: { type: 'object', additionalProperties: true } } } },
      }, async (req: Request, res: Response) => {
        const ctx = ctxOf(res);
        const id = parseId(req.params.id as string, view.kind.title);
        const types = query(req, 'type')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const out = await asCaller(ctx, (metadata) => tags.getZoneTags({
          kind: kindName,
          id,
          types,
          protocol: query(req, 'protocol'),
          fallback: flag(req, 'fallback'),
          click: query(req, 'click'),
          extra: query(req, 'extra'),
        }, { idempotent: true, metadata }));
        // Spec 2.4: a text zone's tags are held under the key `text`.
        const data = kindName === 'text_zone' ? { text: out.tags } : out.tags;
        res.json({ object: kindName === 'vast_zone' ? 'vast_zone_tag' : 'zone_tag', url: req.path, data });
      });
      router.all(`${view.path}/:id/tags`, methodNotSupported);
    }
    for (const kindName of CONVERSION_TAGS[version]) {
      const view = viewOf(getKind(kindName), version);
      if (!view) continue;
      documentedRoute(router, {
        method: 'get',
        path: `${view.path}/:id/conversion-tag`,
        summary: `The conversion tag of a ${view.kind.title}`,
        pathParams: { id: `The ${view.kind.title} id.` },
        query: { protocol: TAG_QUERY.protocol },
        response: { schema: { type: 'object', properties: { object: { const: 'conv_tag' }, url: { type: 'string' }, data: { type: 'object', properties: { src: { type: 'string' }, html: { type: 'string' } } } } } },
      }, async (req: Request, res: Response) => {
        const ctx = ctxOf(res);
        const id = parseId(req.params.id as string, view.kind.title);
        const out = await asCaller(ctx, (metadata) => tags.getConversionTag({ kind: kindName, id, protocol: query(req, 'protocol') }, { idempotent: true, metadata }));
        res.json({ object: 'conv_tag', url: req.path, data: { src: out.src, html: out.html } });
      });
      router.all(`${view.path}/:id/conversion-tag`, methodNotSupported);
    }
  }
};
