import type { DecisionEntity } from '../../proto/gen/adserver/inventory/v1/decision_data';
import type { Candidate, DecisionData } from './decision-store';
import type { Decision } from './tracking';
import { vast4AdFor, vast4Playable } from './vast4-serving';
import { hasEvent, vastAdXml, type LinearEvent, type VastAd, type VastCompanion, type VastNonLinear, type VastResource, type VastTracking, type VastVersion } from './vast';

/**
 * A decision as a VAST ad: the VAST ad item of the 2/3 model with its media files, companions and
 * third-party tracking URLs, and this platform's own signed URLs for the impression, every player
 * event, clicks and errors (each counts once per decision and event). Third-party URLs keep their
 * macros ([CACHEBUSTING], [ERRORCODE], [CONTENTPLAYHEAD]...) for the player to fill, as VAST says.
 */

export const AD_SYSTEM = 'adserver';

/** Our own player events per version, as the report names them (VAST 4's player expand/collapse count as full screen). */
const OWN_EVENTS: readonly { event: LinearEvent; report: string }[] = [
  { event: 'creativeView', report: 'creativeView' },
  { event: 'start', report: 'start' },
  { event: 'firstQuartile', report: 'firstQuartile' },
  { event: 'midpoint', report: 'midpoint' },
  { event: 'thirdQuartile', report: 'thirdQuartile' },
  { event: 'complete', report: 'complete' },
  { event: 'mute', report: 'mute' },
  { event: 'unmute', report: 'unmute' },
  { event: 'pause', report: 'pause' },
  { event: 'resume', report: 'resume' },
  { event: 'rewind', report: 'rewind' },
  { event: 'skip', report: 'skip' },
  { event: 'fullscreen', report: 'fullscreen' },
  { event: 'exitFullscreen', report: 'exitFullscreen' },
  { event: 'playerExpand', report: 'fullscreen' },
  { event: 'playerCollapse', report: 'exitFullscreen' },
  { event: 'expand', report: 'expand' },
  { event: 'collapse', report: 'collapse' },
  { event: 'acceptInvitationLinear', report: 'acceptInvitationLinear' },
  { event: 'closeLinear', report: 'closeLinear' },
  // 2.0 has no closeLinear: its `close` on a linear ad is the same act.
  { event: 'close', report: 'closeLinear' },
];

/** Seconds into the ad of the `progress` event we track (a view that lasted this long). */
export const PROGRESS_SECONDS = 5;

/** The reference's tracking types that are linear events, by the VAST event each is in each version. */
export function thirdPartyEvent(type: string, version: VastVersion): LinearEvent | undefined {
  if (type === 'exitFullScreen') return version === '4.2' ? 'playerCollapse' : 'exitFullscreen';
  if (type === 'fullscreen') return version === '4.2' ? 'playerExpand' : 'fullscreen';
  const same: readonly string[] = ['creativeView', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'mute', 'unmute', 'pause', 'rewind', 'resume', 'expand', 'collapse'];
  return same.includes(type) ? (type as LinearEvent) : undefined;
}

const HMS = /^(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?$/;

/** Seconds of an `hh:mm:ss` length (NaN when it is not one). */
export function seconds(hms: string): number {
  const m = HMS.exec(hms);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0) : NaN;
}

/** Where the player may offer to skip: `hh:mm:ss`, or a percentage of the duration. */
export function skipOffset(skip: string, duration: number): number | undefined {
  if (!skip) return undefined;
  const at = seconds(skip);
  if (!Number.isNaN(at)) return Math.min(at, duration);
  const pct = /^(\d{1,3})%?$/.exec(skip);
  return pct ? (duration * Math.min(100, Number(pct[1]))) / 100 : undefined;
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml' };
/** A static resource's MIME type from its URL's extension (png when unknown). */
export function imageType(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase() ?? '';
  return IMAGE_TYPES[ext] ?? 'image/png';
}

export interface VastUrls {
  /** This platform's serving origin. */
  base: string;
  /** The decision's signed token, URL-encoded. */
  token: string;
}

export const own = (u: VastUrls, path: string, extra = '') => `${u.base}${path}?t=${u.token}${extra}`;
export const eventUrl = (u: VastUrls, report: string, extra = '') => own(u, '/vast/event', `&e=${report}${extra}`);

/** This platform's own tracking of a linear ad's player events in `version`. */
export function ownTracking(version: VastVersion, urls: VastUrls, duration: number): VastTracking[] {
  const list: VastTracking[] = OWN_EVENTS.filter((e) => hasEvent(version, e.event)).map((e) => ({ event: e.event, url: eventUrl(urls, e.report) }));
  if (hasEvent(version, 'progress') && duration > PROGRESS_SECONDS) list.push({ event: 'progress', offset: PROGRESS_SECONDS, url: eventUrl(urls, 'progress') });
  return list;
}

/** Whether an ad item can be answered as VAST: a wrapper, or an ad with something to show. */
export function vastPlayable(data: DecisionData, c: Pick<Candidate, 'account' | 'adItem' | 'adItemKind'>, allowWrapper: boolean): boolean {
  // Asked for every candidate of every request; the answer only changes with the snapshot.
  return data.memo(`vast-playable:${c.adItemKind}:${c.account}:${c.adItem}:${allowWrapper}`, () => playable(data, c, allowWrapper));
}

function playable(data: DecisionData, c: Pick<Candidate, 'account' | 'adItem' | 'adItemKind'>, allowWrapper: boolean): boolean {
  if (c.adItemKind === 'vast4_ad') return vast4Playable(data, c.account, c.adItem, allowWrapper);
  if (c.adItemKind !== 'vast_ad_item') return false;
  const ad = data.get(c.account, 'vast_ad_item', c.adItem)?.vastAd;
  if (!ad) return false;
  if (ad.wrapperUrl) return allowWrapper;
  const parts = data.vastParts(c.account, c.adItem);
  return parts.media.some((m) => mediaUrl(data, c.account, m)) || parts.companions.length > 0;
}

function mediaUrl(data: DecisionData, account: number, m: DecisionEntity): string {
  const media = m.vastMedia!;
  if (!media.linear) return media.creativeSource;
  return media.url || (media.creative ? data.get(account, 'video_creative', media.creative)?.creative?.fileUrl ?? '' : '');
}

/** A wrapper pointing at this platform's own /vast.spark carries the depth it was reached at (the chain limit). */
export function nextTagUri(wrapperUrl: string, base: string, depth: number): string {
  if (!wrapperUrl.startsWith(`${base}/vast.spark?`)) return wrapperUrl;
  return `${wrapperUrl.replace(/([?&])wd=\d*(&|$)/, '$1').replace(/&$/, '')}&wd=${depth + 1}`;
}

export interface VastAdOptions {
  version: VastVersion;
  urls: VastUrls;
  /** Position in a pod (pods only). */
  sequence?: number;
  /** Wrappers of this platform already followed to reach this request. */
  wrapperDepth: number;
}

/** Stand-ins for a decision's token and id in a cached `<Ad>` (no stored text holds a NUL). */
const TOKEN = '\u0000T';
const DECISION = '\u0000D';

/**
 * A decision's `<Ad>` element. Everything but its token and id is the same for every decision of the
 * ad item (in a version, position and wrapper depth), so it is rendered once per snapshot and each
 * decision only fills in those two: a VAST document carries its token some twenty-five times.
 */
export function vastAdElement(data: DecisionData, d: Decision, o: VastAdOptions): string {
  const key = `vast-ad:${d.account}:${d.adItem}:${o.version}:${o.sequence ?? 0}:${o.wrapperDepth}:${o.urls.base}`;
  const template = data.memo(key, () => vastAdXml(o.version, vastAdFor(data, { ...d, id: DECISION }, { ...o, urls: { base: o.urls.base, token: TOKEN } })));
  return template.replaceAll(TOKEN, o.urls.token).replaceAll(DECISION, d.id);
}

/** The VAST ad of a decision (the caller checked it with vastPlayable). */
export function vastAdFor(data: DecisionData, d: Decision, o: VastAdOptions): VastAd {
  if (d.adItemKind === 'vast4_ad') return vast4AdFor(data, d, o);
  const ad = data.get(d.account, 'vast_ad_item', d.adItem)!.vastAd!;
  const parts = data.vastParts(d.account, d.adItem);
  const { version, urls } = o;
  const duration = Math.max(0, seconds(ad.duration) || 0);
  const impressions = [own(urls, '/vast/imp')];
  const error = own(urls, '/vast/error', '&code=[ERRORCODE]');
  const thirdParty = parts.tracking.map((t) => t.vastTracking!);
  const tracking = ownTracking(version, urls, duration);
  for (const t of thirdParty) {
    const event = thirdPartyEvent(t.event, version);
    if (event && hasEvent(version, event)) tracking.push({ event, url: t.url });
  }
  const clickTracking = [eventUrl(urls, 'click'), ...thirdParty.filter((t) => t.event === 'clicks').map((t) => t.url)];
  const base = { id: `${d.adItem}`, sequence: o.sequence, adSystem: AD_SYSTEM, impressions, error };
  if (ad.wrapperUrl) {
    return { wrapper: { ...base, adTagUri: nextTagUri(ad.wrapperUrl, urls.base, o.wrapperDepth), followAdditionalWrappers: true, linearTracking: tracking, clickTracking } };
  }
  const linearFiles = parts.media.filter((m) => m.vastMedia!.linear && mediaUrl(data, d.account, m));
  const nonLinear: VastNonLinear[] = parts.media
    .filter((m) => !m.vastMedia!.linear && m.vastMedia!.creativeSource)
    .map((m) => {
      const n = m.vastMedia!;
      const resource: VastResource =
        n.creativeType === 'html' ? { kind: 'html', value: n.creativeSource }
          : n.creativeType === 'iframe_url' ? { kind: 'iframe', value: n.creativeSource }
            : { kind: 'static', value: n.creativeSource, type: n.creativeType === 'javascript_url' ? 'application/javascript' : imageType(n.creativeSource) };
      return {
        width: n.width, height: n.height, resource, minSuggestedDuration: n.minSuggestedDuration || undefined,
        // A non-linear's click is told apart (nl=1) for the VAST reports' non-linear columns.
        clickThrough: ad.location ? own(urls, '/vast/click', '&nl=1') : undefined, clickTracking: [], tracking: [],
      };
    });
  const companions: VastCompanion[] = parts.companions.map((e) => {
    const c = e.vastCompanion!;
    const file = c.creative ? data.get(d.account, 'image_creative', c.creative)?.creative?.fileUrl : '';
    const resource: VastResource =
      c.resourceType === 'html' ? { kind: 'html', value: c.content } : c.resourceType === 'iframe' ? { kind: 'iframe', value: c.content }
        : { kind: 'static', value: c.content || file || '', type: c.type || imageType(c.content || file || '') };
    const seq = Math.min(5, Math.max(1, c.sequence));
    return {
      width: c.width, height: c.height, resource,
      // The click goes through this platform (counted as companionClick<n>) to the companion's own destination.
      clickThrough: c.location ? own(urls, '/vast/companion-click', `&c=${e.id}`) : undefined,
      clickTracking: thirdParty.filter((t) => t.event === `companionClicks${seq}`).map((t) => t.url),
      creativeView: [eventUrl(urls, `companionView${seq}`), ...thirdParty.filter((t) => t.event === `companionViews${seq}`).map((t) => t.url)],
    };
  });
  return {
    inline: {
      ...base,
      title: ad.name || `Ad ${d.adItem}`,
      adServingId: d.id,
      description: ad.description || undefined,
      creativeId: `${d.adItem}`,
      linear: linearFiles.length
        ? {
          duration,
          skipOffset: ad.skippable ? skipOffset(ad.skipDuration, duration) ?? 0 : undefined,
          adParameters: ad.adParameters || undefined,
          mediaFiles: linearFiles.map((m) => {
            const f = m.vastMedia!;
            return {
              url: mediaUrl(data, d.account, m), type: f.type, width: f.width, height: f.height, delivery: f.delivery === 'streaming' ? 'streaming' : 'progressive',
              bitrate: f.maxBitrate || f.minBitrate || undefined, codec: f.codec || undefined,
            };
          }),
          clickThrough: ad.location ? own(urls, '/vast/click') : undefined,
          clickTracking: clickTracking.slice(1),
          tracking,
        }
        : undefined,
      nonLinear: nonLinear.length ? nonLinear : undefined,
      nonLinearTracking: nonLinear.length
        ? [{ event: 'creativeView' as const, url: eventUrl(urls, 'nonLinearCreativeView') }, ...thirdParty.filter((t) => t.event === 'nlCreativeView').map((t) => ({ event: 'creativeView' as const, url: t.url }))]
        : undefined,
      companions: companions.length ? companions : undefined,
      companionsRequired: companions.length ? (ad.companionDisplay as 'all' | 'any' | 'none') : undefined,
    },
  };
}
