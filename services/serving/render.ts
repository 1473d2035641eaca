import { DecisionAdItem, type DecisionEntity } from '../../proto/gen/adserver/inventory/v1/decision_data';
import { isDemand, type DemandCandidate } from './demand/candidate';
import { landingOf, substituteClickMacros } from './demand/openrtb';
import type { Json } from '../shared/catalog';
import { renderTemplate } from '../shared/native-template';
import type { Candidate, DecisionData } from './decision-store';
import type { ServeRequest } from './request';
import { newDecisionId, REPLICA_TAG, type Decision, type TokenSigner } from './tracking';

/**
 * Rendering a decision: the creative of the chosen ad (pure, from the snapshot), its signed tracking
 * URLs, and each answer form's shape (JSON placement, HTML for the iframe and js forms).
 */

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** What an ad shows: a linked image, or markup of its own. */
export interface Creative {
  item: DecisionEntity;
  imageUrl: string;
  body: string;
  /** A winning bid's advertiser domain (OpenRTB `adomain[0]`); direct ads' decision data has none. */
  advertiserDomain?: string;
}

/** A decided ad as the client gets it: its creative and the signed tracking URLs. */
export interface Rendered extends Creative {
  decision: Decision;
  clickUrl: string;
  impressionUrl: string;
  viewableUrl: string;
}

/** The creative of a candidate ad, from the snapshot; undefined when its ad item is gone. */
export function creativeOf(data: DecisionData, c: Candidate): Creative | undefined {
  if (isDemand(c)) return demandCreative(c);
  const item = data.get(c.account, c.adItemKind, c.adItem);
  if (!item?.adItem) return undefined;
  const ad = item.adItem;
  let imageUrl = '';
  let body = '';
  if (item.kind === 'image_ad_item' || item.kind === 'flash_ad_item') {
    imageUrl = ad.creativeUrl || data.get(c.account, 'image_creative', ad.creative)?.creative?.fileUrl || '';
  } else if (item.kind === 'custom_html_ad_item') {
    body = ad.customHtml;
  } else if (item.kind === 'native_ad_item') {
    const tpl = data.get(c.account, 'native_template', ad.template)?.nativeTemplate;
    if (tpl) {
      let vars: { id: number; placeholder: string; type?: string }[] = [];
      let values: Record<string, Json> = {};
      try {
        vars = JSON.parse(tpl.variablesJson || '[]');
        values = JSON.parse(ad.variablesJson || '{}');
      } catch {
        /* malformed stored JSON renders the bare template */
      }
      body = renderTemplate(tpl.rawHtml, vars, values);
    }
  } else if (item.kind === 'rich_media_ad_item') {
    const file = data.get(c.account, 'rich_media_creative', ad.creative)?.creative?.fileUrl ?? '';
    if (file) body = `<iframe src="${attr(file)}" width="${ad.width}" height="${ad.height}" frameborder="0" scrolling="no"></iframe>`;
  }
  return { item, imageUrl, body };
}

/**
 * A winning bid's creative: its markup as a custom HTML ad of the bid's size. It clicks through by its
 * own links, which count as this platform's clicks where the markup uses a click macro (`rendered`).
 */
function demandCreative(c: DemandCandidate): Creative {
  const d = c.demand;
  const adItem = DecisionAdItem.fromPartial({ width: d.width, height: d.height, customHtml: d.adm });
  return { item: { kind: 'demand_bid', id: 0, account: c.account, adItem }, imageUrl: '', body: d.adm, advertiserDomain: d.advertiserDomain };
}

/** A new decision for a chosen candidate: its id, and what its tracking tokens must carry. */
export function decisionOf(c: Candidate, r: Pick<ServeRequest, 'click' | 'extra'>, test: boolean, nowMs: number): Decision {
  const d: Decision = { ...c, id: newDecisionId(), test, click: r.click, extra: r.extra, at: Math.floor(nowMs / 1000), replica: REPLICA_TAG };
  if (isDemand(c)) {
    delete (d as Partial<DemandCandidate>).demand;
    Object.assign(d, { demandEndpoint: c.demand.endpoint, demandSource: c.demand.source, revenueShare: c.demand.revenueShare, billingUrl: c.demand.billingUrl });
  }
  return d;
}

/**
 * The last parameter of a programmatic win's click URL: its markup appends the buyer's landing page
 * to it, and the click, once counted, redirects there (see demandLanding).
 */
export const LANDING_PARAM = 'url';

export function rendered(creative: Creative, c: Candidate, r: Pick<ServeRequest, 'click' | 'extra'>, signer: TokenSigner, base: string, test: boolean, nowMs: number): Rendered {
  const decision = decisionOf(c, r, test, nowMs);
  const t = encodeURIComponent(signer.sign(decision));
  const clickUrl = `${r.click}${base}/serve/click?t=${t}`;
  return {
    ...(isDemand(c) ? withClickUrl(creative, `${clickUrl}&${LANDING_PARAM}=`) : creative),
    decision,
    clickUrl,
    impressionUrl: `${base}/serve/imp?t=${t}`,
    viewableUrl: `${base}/serve/view?t=${t}`,
  };
}

/** A winning bid's markup with its click macros pointing at this decision's click URL, so its clicks count. */
function withClickUrl(creative: Creative, clickPrefix: string): Creative {
  const body = substituteClickMacros(creative.body, clickPrefix);
  return { ...creative, body, item: { ...creative.item, adItem: { ...creative.item.adItem!, customHtml: body } } };
}

/**
 * The landing page of a click on a programmatic win: whatever its markup appended after `url=`; ''
 * when nothing was (the macro used as a click tracker), undefined when it is not an http(s) URL.
 */
export function demandLanding(search: string): string | undefined {
  const at = search.indexOf(`&${LANDING_PARAM}=`);
  const appended = at < 0 ? '' : search.slice(at + LANDING_PARAM.length + 2);
  return appended ? landingOf(appended) : '';
}

/**
 * Every ad document runs in a sandbox without `allow-same-origin`: an opaque origin, whatever host
 * serves it, so a tenant's markup can never read or act on another page of that host (the settings
 * page, the API, another tenant's ads). Scripts, forms and popups still work; a click's landing page
 * opens outside the sandbox, and `_top` links need the user's click.
 */
export const AD_DOCUMENT_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation';

/** The ad as HTML (iframe and js forms): linked image or the item's own markup, and its pixels. */
export function adHtml(x: Rendered): string {
  const pixels = adPixels(x).map((u) => `<img src="${attr(u)}" width="1" height="1" border="0" alt="" style="display:none" />`);
  return `${adMarkup(x)}${pixels.join('')}`;
}

/** The ad's markup without its tracking pixels: linked image or the item's own markup, and the HTML below it. */
export function adMarkup(x: Rendered): string {
  const ad = x.item.adItem!;
  const target = ad.target || '_blank';
  let html = x.body;
  if (!html && x.imageUrl) {
    const img = `<img src="${attr(x.imageUrl)}" width="${ad.width}" height="${ad.height}" alt="${attr(ad.altText)}" border="0" style="display:block" />`;
    html = ad.location ? `<a href="${attr(x.clickUrl)}" target="${attr(target)}">${img}</a>` : img;
  }
  return `${html}${ad.htmlContentBelow}`;
}

/** The ad item's own third-party tracking pixels. */
export function adPixels(x: Creative): string[] {
  const ad = x.item.adItem!;
  return [ad.trackingPixel, ...ad.trackingPixels].filter(Boolean);
}

/** `placements.placement_1` of the JSON answer: every value a string, as older SDKs expect. */
export function placementJson(x: Rendered, r: ServeRequest, refreshSeconds: number, base: string, q: string): Record<string, string> {
  const ad = x.item.adItem!;
  const out: Record<string, string> = {
    banner_id: String(x.item.id),
    width: String(ad.width),
    height: String(ad.height),
    alt_text: ad.altText,
    accompanied_html: ad.htmlContentBelow,
    target: ad.target || '_blank',
    tracking_pixel: ad.trackingPixel,
    body: x.body,
    redirect_url: ad.location ? x.clickUrl : '',
    refresh_url: refreshSeconds > 0 ? `${base}/adserve/;${q}` : '',
    refresh_time: refreshSeconds > 0 ? String(refreshSeconds) : '',
    image_url: x.imageUrl,
    accupixel_url: x.impressionUrl,
    eligible_url: x.impressionUrl,
    viewable_url: x.viewableUrl,
  };
  if (r.rf) out.is_redirectable = ad.location ? '1' : '0';
  return out;
}

/** The iframe form's document. */
export function iframeDocument(html: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0;overflow:hidden}</style></head><body>${html}</body></html>`;
}

/** The js form's script: writes the ad into the page where the tag stands. */
export function jsDocument(html: string): string {
  return html ? `document.write(${JSON.stringify(html).replace(/</g, '\\u003c')});\n` : '';
}

/**
 * async.js: fills every not yet filled `<ins class="adserver-zone">` of the page with an iframe of
 * the zone's ad, from the host the script itself was loaded from.
 */
export const ASYNC_JS = `(function(){
var s=document.currentScript,b=s&&s.src?s.src.replace(/\\/serve\\/async\\.js.*$/,''):'';
function fill(){var l=document.querySelectorAll('ins.adserver-zone:not([data-filled])');
for(var i=0;i<l.length;i++){var n=l[i],d=n.dataset;n.setAttribute('data-filled','1');
var q='account='+encodeURIComponent(d.account||'')+'&zone='+encodeURIComponent(d.zone||'');
if(d.size)q+='&size='+encodeURIComponent(d.size);if(d.click)q+='&click='+d.click;if(d.extra)q+='&extra='+d.extra;
q+='&rnd='+Math.floor(Math.random()*1e10);var f=document.createElement('iframe');
var wh=(d.size||'').split('x');if(wh.length==2){f.width=wh[0];f.height=wh[1];}
f.frameBorder='0';f.scrolling='no';f.style.border='0';f.src=b+'/serve/iframe?'+q;n.appendChild(f);}}
if(document.readyState==='loading')document.addEventListener('DOMContentLoaded',fill);else fill();})();
`;
