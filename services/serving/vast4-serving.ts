import type { DecisionEntity, DecisionVast4Overlay, Vast4Tracking } from '../../proto/gen/adserver/inventory/v1/decision_data';
import type { DecisionData } from './decision-store';
import type { Decision } from './tracking';
import { hasEvent, isLinearEvent, type VastAd, type VastCompanion, type VastIcon, type VastLinear, type VastNonLinear, type VastResource, type VastTracking, type VastVersion } from './vast';
import { AD_SYSTEM, eventUrl, imageType, nextTagUri, own, ownTracking, seconds, skipOffset, type VastAdOptions } from './vast-serving';

/**
 * Ads of the VAST 4.2 model (/v2/vast/...) as VAST documents: the ad's creatives give its linear (media
 * files, mezzanine, closed captions, interactive files, icons, Universal Ad IDs), non-linears and
 * companions; their resources are the model's stand-alone resources. The platform's own impression,
 * event and click URLs are added as for the 2/3 model; the model's third-party tracking keeps its macros.
 */

/** A 4.2 time (`HH:MM:SS.mmm`) or percentage (`25%`) as seconds into an ad of `duration` seconds. */
function offsetSeconds(offset: string, duration: number): number | undefined {
  if (!offset) return undefined;
  return offset.endsWith('%') ? skipOffset(offset.slice(0, -1), duration) : seconds(offset);
}

/** The model's tracking events that the version has, progress offsets as written. */
function thirdParty(version: VastVersion, list: readonly Vast4Tracking[]): VastTracking[] {
  const out: VastTracking[] = [];
  for (const t of list) {
    if (!isLinearEvent(t.event) || !hasEvent(version, t.event) || (t.event === 'progress' && !t.offset)) continue;
    out.push({ event: t.event, url: t.uri, offset: t.event === 'progress' ? t.offset : undefined });
  }
  return out;
}

function resourceOf(data: DecisionData, account: number, ids: readonly number[]): VastResource | undefined {
  for (const id of ids) {
    const r = data.get(account, 'vast4_resource', id)?.vast4Resource;
    if (!r) continue;
    if (r.type === 'html' && r.html) return { kind: 'html', value: r.html };
    if (r.type === 'iframe' && r.iframeUri) return { kind: 'iframe', value: r.iframeUri };
    const url = r.staticUri || (r.staticFile ? data.get(account, 'image_creative', r.staticFile)?.creative?.fileUrl ?? '' : '');
    if (r.type === 'static' && url) return { kind: 'static', value: url, type: r.staticType || imageType(url) };
  }
  return undefined;
}

const fileUrl = (data: DecisionData, account: number, f: { url: string; videoCreative: number }) =>
  f.url || (f.videoCreative ? data.get(account, 'video_creative', f.videoCreative)?.creative?.fileUrl ?? '' : '');

interface Vast4Parts {
  creatives: DecisionEntity[];
  /** The first creative's linear with a file a player can load, and its creative. */
  linear?: { linear: DecisionEntity; creative: DecisionEntity };
  overlays: { overlay: DecisionVast4Overlay; id: number; creative: DecisionEntity }[];
}

function partsOf(data: DecisionData, account: number, ad: number): Vast4Parts {
  const creatives = data
    .partsOf(account, 'vast4_ad', ad)
    .filter((c) => c.vast4Creative)
    .sort((a, b) => (a.vast4Creative!.sequence < 0 ? 1e9 : a.vast4Creative!.sequence) - (b.vast4Creative!.sequence < 0 ? 1e9 : b.vast4Creative!.sequence) || a.id - b.id);
  const parts: Vast4Parts = { creatives, overlays: [] };
  for (const creative of creatives) {
    for (const p of data.partsOf(account, 'vast4_creative', creative.id)) {
      if (p.vast4Linear && !parts.linear) {
        const files = data.partsOf(account, 'vast4_linear', p.id).filter((f) => f.vast4File?.role === 'media' && fileUrl(data, account, f.vast4File));
        if (files.length) parts.linear = { linear: p, creative };
      } else if (p.vast4Overlay) {
        if (resourceOf(data, account, p.vast4Overlay.resources)) parts.overlays.push({ overlay: p.vast4Overlay, id: p.id, creative });
      }
    }
  }
  return parts;
}

/** Whether a 4.2 ad can be answered: a wrapper with its address, or an ad with something to show. */
export function vast4Playable(data: DecisionData, account: number, adId: number, allowWrapper: boolean): boolean {
  const ad = data.get(account, 'vast4_ad', adId)?.vast4Ad;
  if (!ad) return false;
  if (ad.type === 'wrapper') return allowWrapper && !!ad.adUrl;
  const parts = partsOf(data, account, adId);
  return !!parts.linear || parts.overlays.length > 0;
}

function icon(data: DecisionData, account: number, id: number): VastIcon | undefined {
  const i = data.get(account, 'vast4_icon', id)?.vast4Icon;
  const resource = i && resourceOf(data, account, i.resources);
  if (!i || !resource || !i.width || !i.height) return undefined;
  const fallbackImages = data
    .partsOf(account, 'vast4_icon', id)
    .map((f) => f.vast4IconFallback!)
    .map((f) => ({ f, r: resourceOf(data, account, [f.resource]) }))
    .filter((x) => x.r?.kind === 'static')
    .map(({ f, r }) => ({ width: f.width || undefined, height: f.height || undefined, altText: f.altText || undefined, url: r!.value }));
  return {
    program: i.program || 'unknown', width: i.width, height: i.height, xPosition: i.xPosition, yPosition: i.yPosition,
    duration: i.duration ? seconds(i.duration) : undefined, offset: i.offset ? seconds(i.offset) : undefined, apiFramework: i.apiFramework || undefined,
    pxratio: i.pixelRatio || undefined, resource, clickThrough: i.destinationUrl || undefined, clickTracking: i.clickTracking, viewTracking: i.viewTracking,
    fallbackImages,
  };
}

/** The VAST ad of a decision of a 4.2 ad (the caller checked it with vastPlayable). */
export function vast4AdFor(data: DecisionData, d: Decision, o: VastAdOptions): VastAd {
  const { version, urls } = o;
  const ad = data.get(d.account, 'vast4_ad', d.adItem)!.vast4Ad!;
  const base = { id: `${d.adItem}`, sequence: o.sequence, adSystem: AD_SYSTEM, impressions: [own(urls, '/vast/imp')], error: own(urls, '/vast/error', '&code=[ERRORCODE]') };
  if (ad.type === 'wrapper') {
    return {
      wrapper: {
        ...base, adTagUri: nextTagUri(ad.adUrl, urls.base, o.wrapperDepth), followAdditionalWrappers: ad.followAdditionalWrappers,
        linearTracking: ownTracking(version, urls, 0), clickTracking: [eventUrl(urls, 'click')],
      },
    };
  }
  const parts = partsOf(data, d.account, d.adItem);
  let linear: VastLinear | undefined;
  let universalAdId: { registry: string; value: string } | undefined;
  if (parts.linear) {
    const l = parts.linear.linear.vast4Linear!;
    const duration = Math.max(0, seconds(l.duration) || 0);
    const files = data.partsOf(d.account, 'vast4_linear', parts.linear.linear.id).map((f) => f.vast4File!);
    const uid = data.partsOf(d.account, 'vast4_creative', parts.linear.creative.id).find((p) => p.vast4UniversalAdId)?.vast4UniversalAdId;
    if (uid) universalAdId = { registry: uid.registry, value: uid.value };
    const mezzanine = files.find((f) => f.role === 'mezzanine' && fileUrl(data, d.account, f));
    linear = {
      duration,
      skipOffset: l.skipOffset ? offsetSeconds(l.skipOffset, duration) : undefined,
      adParameters: l.adParameters || undefined,
      mediaFiles: files
        .filter((f) => f.role === 'media' && fileUrl(data, d.account, f))
        .map((f) => ({
          url: fileUrl(data, d.account, f), type: f.type || 'video/mp4', width: f.width || 640, height: f.height || 360,
          delivery: f.delivery === 'streaming' ? 'streaming' : 'progressive', bitrate: f.bitrate || f.maxBitrate || f.minBitrate || undefined, codec: f.codec || undefined,
        })),
      mezzanine: mezzanine
        ? { url: fileUrl(data, d.account, mezzanine), type: mezzanine.type || 'video/mp4', width: mezzanine.width || 1920, height: mezzanine.height || 1080, delivery: mezzanine.delivery === 'streaming' ? 'streaming' : 'progressive' }
        : undefined,
      closedCaptions: files.filter((f) => f.role === 'captions' && f.url).map((f) => ({ url: f.url, type: f.type || 'text/vtt', language: f.language || 'en' })),
      interactiveFiles: files.filter((f) => f.role === 'interactive' && f.url).map((f) => ({ url: f.url, type: f.type || 'text/html', apiFramework: f.apiFramework || undefined, variableDuration: f.variableDuration })),
      clickThrough: l.destinationUrl ? own(urls, '/vast/click', `&p=${parts.linear.linear.id}`) : undefined,
      clickTracking: l.clickTracking,
      customClicks: l.customClicks,
      tracking: [...ownTracking(version, urls, duration), ...thirdParty(version, l.tracking)],
      icons: l.icons.map((id) => icon(data, d.account, id)).filter((i): i is VastIcon => !!i),
    };
  }
  const nonLinear: VastNonLinear[] = [];
  const companions: VastCompanion[] = [];
  let companionsRequired: 'all' | 'any' | 'none' | undefined;
  for (const { overlay: n, id, creative } of parts.overlays) {
    const resource = resourceOf(data, d.account, n.resources)!;
    if (!n.companion) {
      nonLinear.push({
        width: n.width || 480, height: n.height || 70, resource, minSuggestedDuration: n.minSuggestedDuration ? seconds(n.minSuggestedDuration) : undefined,
        clickThrough: n.destinationUrl ? own(urls, '/vast/click', `&p=${id}`) : undefined, clickTracking: n.clickTracking, tracking: thirdParty(version, n.tracking),
      });
      continue;
    }
    const seq = Math.min(5, companions.length + 1);
    companionsRequired ??= (creative.vast4Creative!.companionRequired || undefined) as typeof companionsRequired;
    companions.push({
      width: n.width || 300, height: n.height || 250, resource,
      clickThrough: n.destinationUrl ? own(urls, '/vast/companion-click', `&c=${id}`) : undefined,
      clickTracking: n.clickTracking,
      creativeView: [eventUrl(urls, `companionView${seq}`), ...n.viewTracking],
    });
  }
  return {
    inline: {
      ...base,
      title: ad.name || `Ad ${d.adItem}`,
      adServingId: d.id,
      creativeId: `${(parts.linear?.creative ?? parts.creatives[0])?.id ?? d.adItem}`,
      universalAdId,
      linear,
      nonLinear: nonLinear.length ? nonLinear : undefined,
      nonLinearTracking: nonLinear.length ? [{ event: 'creativeView', url: eventUrl(urls, 'nonLinearCreativeView') }] : undefined,
      companions: companions.length ? companions : undefined,
      companionsRequired: companions.length ? companionsRequired : undefined,
    },
  };
}

/**
 * Where a click on a 4.2 ad's part goes: the destination of the ad's own linear, non-linear or (for
 * companions) companion named by `part`, or nothing when the part is not the ad's.
 */
export function vast4Destination(data: DecisionData, account: number, ad: number, part: number, companion: boolean): { url: string; sequence: number } | undefined {
  const p = data.get(account, 'vast4_linear', part) ?? data.get(account, companion ? 'vast4_companion' : 'vast4_non_linear', part);
  const creative = p?.vast4Linear?.creative ?? p?.vast4Overlay?.creative;
  if (!creative || data.get(account, 'vast4_creative', creative)?.vast4Creative?.ad !== ad) return undefined;
  if (companion && !p?.vast4Overlay?.companion) return undefined;
  const url = p!.vast4Linear?.destinationUrl ?? p!.vast4Overlay?.destinationUrl ?? '';
  // A companion's number is its place among the ad's companions, as its view URL names it.
  const sequence = companion ? Math.min(5, 1 + partsOf(data, account, ad).overlays.filter((o) => o.overlay.companion).findIndex((o) => o.id === part)) : 0;
  return url ? { url, sequence: Math.max(1, sequence) } : undefined;
}
