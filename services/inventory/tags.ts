import {
  TagsService,
  type GetConversionTagRequest,
  type GetConversionTagResponse,
  type GetZoneTagsRequest,
  type GetZoneTagsResponse,
} from '../../proto/gen/adserver/inventory/v1/tags';
import type { ParameterError } from '../shared/catalog';
import { badText } from '../shared/catalog/validate';
import { serveBaseUrl } from '../shared/config';
import { fail } from '../shared/errors';
import { implement, type ServiceBinding } from '../shared/grpc/server';
import type { ResourceStore } from '../shared/resource-store';
import { tenantFromMetadata, type Tenant } from '../shared/tenant';

export const ZONE_TAG_TYPES = ['async', 'js', 'iframe', 'image', 'json', 'iframe-no-js'] as const;
type TagType = (typeof ZONE_TAG_TYPES)[number];
const ZONE_KINDS = new Set(['standard_zone', 'email_zone', 'text_zone']);
const MAX_MACRO = 2048;

/** RFC 3986 percent-encoding (encodeURIComponent leaves !'()* alone). */
export function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function checkCommon(protocol: string, errors: ParameterError[]): void {
  if (protocol && protocol !== 'http' && protocol !== 'https') {
    errors.push({ field: 'protocol', type: 'invalid_value', message: `'protocol' must be http or https.` });
  }
}

function checkMacro(name: string, value: string, errors: ParameterError[]): void {
  if (value.length > MAX_MACRO) errors.push({ field: name, type: 'invalid_value', message: `'${name}' must be at most ${MAX_MACRO} characters long.` });
  else if (badText(value)) errors.push({ field: name, type: 'invalid_value', message: `'${name}' ${badText(value)}.` });
}

interface ZoneInfo {
  tenant: Tenant;
  kind: string;
  id: number;
  width: number;
  height: number;
}

/** Every tag form of one zone; each loads from the serving host with the zone, account and size. */
function zoneTags(z: ZoneInfo, req: GetZoneTagsRequest, types: readonly TagType[]): Record<string, string> {
  const base = serveBaseUrl((req.protocol || 'https') as 'http' | 'https');
  const sized = z.width > 0 && z.height > 0;
  const query = [`account=${z.tenant.accountId}`, `zone=${z.id}`, ...(sized ? [`size=${z.width}x${z.height}`] : [])];
  if (req.click) query.push(`click=${rfc3986(req.click)}`);
  if (req.extra) query.push(`extra=${rfc3986(req.extra)}`);
  const q = query.join('&');
  const dims = sized ? ` width="${z.width}" height="${z.height}"` : '';
  const image = `<a href="${attr(`${base}/serve/click?${q}`)}" target="_blank"><img src="${attr(`${base}/serve/image?${q}`)}"${dims} border="0" alt="" /></a>`;
  const iframe = `<iframe src="${attr(`${base}/serve/iframe?${q}`)}"${dims} frameborder="0" scrolling="no" marginwidth="0" marginheight="0"></iframe>`;
  const fallback = req.fallback ? `<noscript>${image}</noscript>` : '';
  const all: Record<TagType, () => string> = {
    async: () =>
      `<ins class="adserver-zone" data-account="${z.tenant.accountId}" data-zone="${z.id}"${sized ? ` data-size="${z.width}x${z.height}"` : ''}` +
      `${req.click ? ` data-click="${attr(rfc3986(req.click))}"` : ''}${req.extra ? ` data-extra="${attr(rfc3986(req.extra))}"` : ''}></ins>` +
      `<script async src="${attr(`${base}/serve/async.js`)}"></script>${fallback}`,
    // Synchronous: the loaded script writes the ad into the page where the tag stands.
    js: () =>
      `<script type="text/javascript">document.write('<scr'+'ipt type="text/javascript" src="${attr(`${base}/serve/js?${q}`)}&amp;rnd='+Math.floor(Math.random()*1e10)+'"></scr'+'ipt>');</script>${fallback}`,
    // A cache-busting number is added by script so every page view asks for a fresh ad.
    iframe: () =>
      `<script type="text/javascript">document.write('<ifr'+'ame src="${attr(`${base}/serve/iframe?${q}`)}&amp;rnd='+Math.floor(Math.random()*1e10)+'"${dims} frameborder="0" scrolling="no" marginwidth="0" marginheight="0"></ifr'+'ame>');</script>${fallback}`,
    image: () => image,
    json: () => `${base}/serve/json?${q}`,
    'iframe-no-js': () => iframe,
  };
  const out: Record<string, string> = {};
  for (const t of types) out[t] = all[t]();
  return out;
}

export const VAST_TAG_TYPES = ['basic', 'url_encoded', 'amp'] as const;

/**
 * A VAST zone's tag: the URL a video player asks for its ad (AdButler's `/vast.spark?setID=&ID=`
 * form). `[CACHEBUSTING]` and `[PAGEURL]` are the IAB player macros (VAST 4.1+ players fill them;
 * serving ignores one left unfilled); the AMP form uses AMP's own variables instead, which amp-ima-video
 * fills. `url_encoded` is the basic tag made safe to nest in another URL or a player setting.
 */
function vastTags(z: ZoneInfo, req: GetZoneTagsRequest, types: readonly string[]): Record<string, string> {
  const base = serveBaseUrl((req.protocol || 'https') as 'http' | 'https');
  const head = `${base}/vast.spark?setID=${z.id}&ID=${z.tenant.accountId}`;
  const extra = req.extra ? `&extra=${rfc3986(req.extra)}` : '';
  const basic = `${head}${extra}&rnd=[CACHEBUSTING]&pageUrl=[PAGEURL]`;
  const all: Record<string, () => string> = {
    basic: () => basic,
    url_encoded: () => rfc3986(basic),
    amp: () => `${head}${extra}&rnd=RANDOM&pageUrl=CANONICAL_URL`,
  };
  const out: Record<string, string> = {};
  for (const t of types) out[t] = all[t]();
  return out;
}

/** The Tags gRPC API: zone tags and conversion tags of this service's resources. */
export function tagsBinding(store: ResourceStore): ServiceBinding {
  return implement('inventory.Tags', TagsService, {
    getZoneTags: async (req: GetZoneTagsRequest, call): Promise<GetZoneTagsResponse> => {
      const tenant = tenantFromMetadata(call.metadata);
      const vast = req.kind === 'vast_zone';
      if (!ZONE_KINDS.has(req.kind) && !vast) throw fail.badRequest(`A ${req.kind} has no zone tags.`);
      const errors: ParameterError[] = [];
      const known: readonly string[] = vast ? VAST_TAG_TYPES : ZONE_TAG_TYPES;
      const types = req.types.length ? req.types : [...known];
      const unknown = types.filter((t) => !known.includes(t));
      if (unknown.length) {
        errors.push({ field: 'type', type: 'invalid_value', message: `'type' names '${unknown[0].slice(0, 32)}'; it must be one or more of: ${known.join(', ')}.` });
      }
      checkCommon(req.protocol, errors);
      checkMacro('click', req.click, errors);
      checkMacro('extra', req.extra, errors);
      if (errors.length) throw fail.invalid(errors);
      const zone = await store.get(tenant, req.kind, req.id);
      const a = zone.attributes ?? {};
      const info: ZoneInfo = { tenant, kind: req.kind, id: req.id, width: Number(a.width ?? 0), height: Number(a.height ?? 0) };
      if (vast) return { tags: vastTags(info, req, [...new Set(types)]) };
      const tags = zoneTags(info, req, [...new Set(types)] as TagType[]);
      // An email zone is read in mail clients, which run no script: its tag is the linked image.
      if (req.kind === 'email_zone') tags.email = zoneTags(info, req, ['image']).image;
      return { tags };
    },
    getConversionTag: async (req: GetConversionTagRequest, call): Promise<GetConversionTagResponse> => {
      const tenant = tenantFromMetadata(call.metadata);
      const errors: ParameterError[] = [];
      checkCommon(req.protocol, errors);
      if (errors.length) throw fail.invalid(errors);
      await store.get(tenant, req.kind, req.id);
      // Test-mode tags say so: test traffic never reaches the ad-serving infrastructure.
      const src = `${serveBaseUrl((req.protocol || 'https') as 'http' | 'https')}/serve/conversion?account=${tenant.accountId}&type=${req.kind}&id=${req.id}${tenant.mode === 'test' ? '&test=1' : ''}`;
      return { src, html: `<img src="${attr(src)}" height="1" width="1" border="0" style="display:none" alt="" />` };
    },
  });
}
