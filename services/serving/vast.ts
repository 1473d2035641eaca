/**
 * VAST documents (IAB Video Ad Serving Template) of one decision: VAST 2.0, 3.0 and 4.2, each valid
 * against the IAB's schema of its version (services/serving/test/fixtures/vast/). Each version gets
 * only what its schema allows: skip offsets, progress events and ad pods from 3.0 on; UniversalAdId,
 * AdServingId, AdVerifications, Mezzanine and ClosedCaptionFiles in 4.2. URLs and free text go in
 * CDATA sections, so macros such as [ERRORCODE] reach the player as written.
 */

export type VastVersion = '2.0' | '3.0' | '4.2';
export const VAST_VERSIONS: readonly VastVersion[] = ['2.0', '3.0', '4.2'];

/** Tracking events; `progress` needs an offset. Some exist only in some versions (EVENT_VERSIONS). */
export type LinearEvent =
  | 'creativeView' | 'start' | 'firstQuartile' | 'midpoint' | 'thirdQuartile' | 'complete' | 'mute' | 'unmute'
  | 'pause' | 'resume' | 'rewind' | 'skip' | 'close' | 'closeLinear' | 'progress' | 'fullscreen' | 'exitFullscreen'
  | 'expand' | 'collapse' | 'acceptInvitation' | 'acceptInvitationLinear' | 'playerExpand' | 'playerCollapse'
  | 'loaded' | 'otherAdInteraction' | 'interactiveStart' | 'adExpand' | 'adCollapse' | 'minimize' | 'overlayViewDuration';

export interface VastTracking {
  event: LinearEvent;
  url: string;
  /** `progress` only: seconds into the ad, or a percentage such as `25%`. */
  offset?: number | string;
}

export interface VastMediaFile {
  url: string;
  /** MIME type: video/mp4, video/webm, application/javascript (VPAID), … */
  type: string;
  width: number;
  height: number;
  delivery?: 'progressive' | 'streaming';
  bitrate?: number;
  codec?: string;
}

export interface VastResource {
  /** static (an image), html or iframe. */
  kind: 'static' | 'html' | 'iframe';
  /** The image or iframe URL, or the HTML. */
  value: string;
  /** static only: the image's MIME type. */
  type?: string;
}

/** An icon over a linear ad (AdChoices and the like), 3.0 and later. */
export interface VastIcon {
  program: string;
  width: number;
  height: number;
  /** Pixels from the left/top, or left/right, top/bottom. */
  xPosition: number | string;
  yPosition: number | string;
  /** Seconds. */
  duration?: number;
  offset?: number;
  apiFramework?: string;
  /** 4.2: the ratio of the icon's pixels to the player's. */
  pxratio?: number;
  resource: VastResource;
  clickThrough?: string;
  clickTracking: string[];
  viewTracking: string[];
  /** 4.2: images a player without a browser shows on a click. */
  fallbackImages?: { width?: number; height?: number; altText?: string; url: string }[];
}

export interface VastLinear {
  /** Seconds. */
  duration: number;
  /** Seconds after which the player may offer to skip (3.0 and later). */
  skipOffset?: number;
  adParameters?: string;
  mediaFiles: VastMediaFile[];
  clickThrough?: string;
  clickTracking: string[];
  tracking: VastTracking[];
  /** 4.2: the high-quality source file, for players that transcode. */
  mezzanine?: { url: string; type: string; width: number; height: number; delivery: 'progressive' | 'streaming' };
  /** 4.2: captions. */
  closedCaptions?: { url: string; type: string; language: string }[];
  /** 4.2: interactive creative files (SIMID and the like). */
  interactiveFiles?: { url: string; type: string; apiFramework?: string; variableDuration?: boolean }[];
  /** 3.0 and later: custom click URLs the player may call. */
  customClicks?: string[];
  icons?: VastIcon[];
}

export interface VastNonLinear {
  width: number;
  height: number;
  resource: VastResource;
  /** Seconds the player should show it. */
  minSuggestedDuration?: number;
  clickThrough?: string;
  clickTracking: string[];
  tracking: VastTracking[];
}

export interface VastCompanion {
  width: number;
  height: number;
  resource: VastResource;
  clickThrough?: string;
  clickTracking: string[];
  /** Called when the companion is shown. */
  creativeView: string[];
}

export interface VastVerification {
  vendor: string;
  jsUrl: string;
  parameters?: string;
}

interface VastAdBase {
  id: string;
  /** Position in an ad pod (3.0 and later). */
  sequence?: number;
  adSystem: string;
  impressions: string[];
  /** Called by the player on an error, with [ERRORCODE] filled by the player. */
  error?: string;
}

export interface VastInlineAd extends VastAdBase {
  title: string;
  /** 4.2: a pseudo-unique id of this serving of the ad (the decision id). */
  adServingId: string;
  description?: string;
  advertiser?: string;
  /** One creative id per ad (the ad item). */
  creativeId: string;
  /** 4.2: the creative's id in a registry (ad-id.org, …). */
  universalAdId?: { registry: string; value: string };
  linear?: VastLinear;
  nonLinear?: VastNonLinear[];
  /** Tracking of the non-linear ads as a group. */
  nonLinearTracking?: VastTracking[];
  companions?: VastCompanion[];
  /** 3.0 and later: which companions the player must show with the ad (all, any or none of them). */
  companionsRequired?: 'all' | 'any' | 'none';
  verifications?: VastVerification[];
}

export interface VastWrapperAd extends VastAdBase {
  /** The next VAST document of the chain. */
  adTagUri: string;
  followAdditionalWrappers?: boolean;
  linearTracking?: VastTracking[];
  clickTracking?: string[];
}

export type VastAd = ({ inline: VastInlineAd } | { wrapper: VastWrapperAd });

/** Events each schema does not know everywhere: the versions that have them (others have every event). */
const EVENT_VERSIONS: Partial<Record<LinearEvent, readonly VastVersion[]>> = {
  skip: ['3.0', '4.2'],
  progress: ['3.0', '4.2'],
  closeLinear: ['3.0', '4.2'],
  exitFullscreen: ['3.0'],
  acceptInvitationLinear: ['3.0'],
  // 4.x speaks of the player instead of the ad going full screen.
  fullscreen: ['2.0', '3.0'],
  expand: ['2.0', '3.0'],
  collapse: ['2.0', '3.0'],
  playerExpand: ['4.2'],
  playerCollapse: ['4.2'],
  loaded: ['4.2'],
  otherAdInteraction: ['4.2'],
  interactiveStart: ['4.2'],
  adExpand: ['4.2'],
  adCollapse: ['4.2'],
  minimize: ['4.2'],
  overlayViewDuration: ['4.2'],
};

const EVENT_NAMES = new Set<string>([
  'creativeView', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'mute', 'unmute', 'pause', 'resume', 'rewind', 'skip', 'close',
  'closeLinear', 'progress', 'fullscreen', 'exitFullscreen', 'expand', 'collapse', 'acceptInvitation', 'acceptInvitationLinear', 'playerExpand',
  'playerCollapse', ...Object.keys(EVENT_VERSIONS),
]);

/** Whether a name is a tracking event some VAST version has. */
export const isLinearEvent = (name: string): name is LinearEvent => EVENT_NAMES.has(name);

/** Whether `version`'s schema has this tracking event. */
export const hasEvent = (version: VastVersion, event: LinearEvent): boolean => EVENT_VERSIONS[event]?.includes(version) ?? true;

/** A CDATA section for any text ("]]>" split across two sections). */
function cdata(s: string): string {
  return `<![CDATA[${s.replace(/]]>/g, ']]]]><![CDATA[>')}]]>`;
}

function attr(s: string | number): string {
  return String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `HH:MM:SS.mmm` of a number of seconds. */
export function vastTime(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)}.${p(ms % 1000, 3)}`;
}

function trackingEvents(version: VastVersion, list: VastTracking[] | undefined): string {
  const events = (list ?? []).filter((t) => hasEvent(version, t.event));
  if (!events.length) return '';
  const one = (t: VastTracking) => {
    const offset = t.event === 'progress' && t.offset !== undefined ? ` offset="${attr(typeof t.offset === 'number' ? vastTime(t.offset) : t.offset)}"` : '';
    return `<Tracking event="${t.event}"${offset}>${cdata(t.url)}</Tracking>`;
  };
  return `<TrackingEvents>${events.map(one).join('')}</TrackingEvents>`;
}

function resource(r: VastResource): string {
  if (r.kind === 'static') return `<StaticResource creativeType="${attr(r.type ?? 'image/png')}">${cdata(r.value)}</StaticResource>`;
  if (r.kind === 'iframe') return `<IFrameResource>${cdata(r.value)}</IFrameResource>`;
  return `<HTMLResource>${cdata(r.value)}</HTMLResource>`;
}

function icons(version: VastVersion, list: VastIcon[] | undefined): string {
  if (version === '2.0' || !list?.length) return '';
  const one = (i: VastIcon) => {
    const times = `${i.duration !== undefined ? ` duration="${vastTime(i.duration)}"` : ''}${i.offset !== undefined ? ` offset="${vastTime(i.offset)}"` : ''}`;
    const api = i.apiFramework ? ` apiFramework="${attr(i.apiFramework)}"` : '';
    const ratio = version === '4.2' && i.pxratio ? ` pxratio="${i.pxratio}"` : '';
    const head = `<Icon program="${attr(i.program)}" width="${i.width}" height="${i.height}" xPosition="${attr(i.xPosition)}" yPosition="${attr(i.yPosition)}"${times}${api}${ratio}>`;
    const through = i.clickThrough ? `<IconClickThrough>${cdata(i.clickThrough)}</IconClickThrough>` : '';
    const tracking = i.clickTracking.map((u) => `<IconClickTracking>${cdata(u)}</IconClickTracking>`).join('');
    const fallbacks = version === '4.2' && i.fallbackImages?.length
      ? `<IconClickFallbackImages>${i.fallbackImages
          .map((f) => `<IconClickFallbackImage${f.width ? ` width="${f.width}"` : ''}${f.height ? ` height="${f.height}"` : ''}>${f.altText ? `<AltText>${cdata(f.altText)}</AltText>` : ''}<StaticResource>${cdata(f.url)}</StaticResource></IconClickFallbackImage>`)
          .join('')}</IconClickFallbackImages>`
      : '';
    // 3.0 lists the trackers before the click-through; 4.2 the fallback images, the click-through, then the trackers.
    const clicks = through || tracking || fallbacks ? `<IconClicks>${version === '4.2' ? fallbacks + through + tracking : tracking + through}</IconClicks>` : '';
    const views = i.viewTracking.map((u) => `<IconViewTracking>${cdata(u)}</IconViewTracking>`).join('');
    return `${head}${resource(i.resource)}${clicks}${views}</Icon>`;
  };
  return `<Icons>${list.map(one).join('')}</Icons>`;
}

function linear(version: VastVersion, l: VastLinear): string {
  const skip = version !== '2.0' && l.skipOffset !== undefined ? ` skipoffset="${vastTime(l.skipOffset)}"` : '';
  const through = l.clickThrough ? `<ClickThrough>${cdata(l.clickThrough)}</ClickThrough>` : '';
  const tracked = l.clickTracking.map((u) => `<ClickTracking>${cdata(u)}</ClickTracking>`).join('');
  const custom = version === '2.0' ? '' : (l.customClicks ?? []).map((u, i) => `<CustomClick id="custom${i + 1}">${cdata(u)}</CustomClick>`).join('');
  // 4.2 lists the click trackers before the click-through.
  const clicks = through || tracked || custom ? `<VideoClicks>${version === '4.2' ? tracked + through : through + tracked}${custom}</VideoClicks>` : '';
  const media = l.mediaFiles
    .map((m) => {
      const extra = `${m.bitrate ? ` bitrate="${m.bitrate}"` : ''}${m.codec && version !== '2.0' ? ` codec="${attr(m.codec)}"` : ''}`;
      return `<MediaFile delivery="${m.delivery ?? 'progressive'}" type="${attr(m.type)}" width="${m.width}" height="${m.height}"${extra}>${cdata(m.url)}</MediaFile>`;
    })
    .join('');
  const mezzanine = version === '4.2' && l.mezzanine
    ? `<Mezzanine delivery="${l.mezzanine.delivery}" type="${attr(l.mezzanine.type)}" width="${l.mezzanine.width}" height="${l.mezzanine.height}">${cdata(l.mezzanine.url)}</Mezzanine>`
    : '';
  const captions = version === '4.2' && l.closedCaptions?.length
    ? `<ClosedCaptionFiles>${l.closedCaptions.map((c) => `<ClosedCaptionFile type="${attr(c.type)}" language="${attr(c.language)}">${cdata(c.url)}</ClosedCaptionFile>`).join('')}</ClosedCaptionFiles>`
    : '';
  const params = l.adParameters !== undefined ? `<AdParameters>${cdata(l.adParameters)}</AdParameters>` : '';
  const interactive = version === '4.2'
    ? (l.interactiveFiles ?? [])
        .map((f) => `<InteractiveCreativeFile type="${attr(f.type)}"${f.apiFramework ? ` apiFramework="${attr(f.apiFramework)}"` : ''}${f.variableDuration !== undefined ? ` variableDuration="${f.variableDuration}"` : ''}>${cdata(f.url)}</InteractiveCreativeFile>`)
        .join('')
    : '';
  const iconList = icons(version, l.icons);
  const duration = `<Duration>${vastTime(l.duration)}</Duration>`;
  // 2.0 and 3.0 order Duration, TrackingEvents, AdParameters, VideoClicks, MediaFiles; 4.2 puts
  // TrackingEvents first and VideoClicks last, captions before the media files and the mezzanine after.
  if (version === '4.2') {
    return `<Linear${skip}>${iconList}${trackingEvents(version, l.tracking)}${params}${duration}<MediaFiles>${captions}${media}${mezzanine}${interactive}</MediaFiles>${clicks}</Linear>`;
  }
  return `<Linear${skip}>${iconList}${duration}${trackingEvents(version, l.tracking)}${params}${clicks}<MediaFiles>${media}</MediaFiles></Linear>`;
}

function nonLinearAds(version: VastVersion, list: VastNonLinear[], tracking: VastTracking[] | undefined): string {
  const one = (n: VastNonLinear) => {
    const min = n.minSuggestedDuration !== undefined ? ` minSuggestedDuration="${vastTime(n.minSuggestedDuration)}"` : '';
    const click = n.clickThrough ? `<NonLinearClickThrough>${cdata(n.clickThrough)}</NonLinearClickThrough>` : '';
    // Click tracking of non-linear and companion ads came with 4.x (3.0's schema has neither).
    const clickTracking = version !== '4.2' ? '' : n.clickTracking.map((u) => `<NonLinearClickTracking>${cdata(u)}</NonLinearClickTracking>`).join('');
    return `<NonLinear width="${n.width}" height="${n.height}"${min}>${resource(n.resource)}${click}${clickTracking}</NonLinear>`;
  };
  const track = trackingEvents(version, [...(tracking ?? []), ...list.flatMap((n) => n.tracking)]);
  return `<NonLinearAds>${track}${list.map(one).join('')}</NonLinearAds>`;
}

function companionAds(version: VastVersion, list: VastCompanion[], required?: 'all' | 'any' | 'none'): string {
  const one = (c: VastCompanion) => {
    const views = c.creativeView.length ? `<TrackingEvents>${c.creativeView.map((u) => `<Tracking event="creativeView">${cdata(u)}</Tracking>`).join('')}</TrackingEvents>` : '';
    const through = c.clickThrough ? `<CompanionClickThrough>${cdata(c.clickThrough)}</CompanionClickThrough>` : '';
    const tracking = version !== '4.2' ? '' : c.clickTracking.map((u, i) => `<CompanionClickTracking id="c${i}">${cdata(u)}</CompanionClickTracking>`).join('');
    if (version === '4.2') return `<Companion width="${c.width}" height="${c.height}">${resource(c.resource)}${through}${tracking}${views}</Companion>`;
    return `<Companion width="${c.width}" height="${c.height}">${resource(c.resource)}${views}${through}${tracking}</Companion>`;
  };
  const req = required && version !== '2.0' ? ` required="${required}"` : '';
  return `<CompanionAds${req}>${list.map(one).join('')}</CompanionAds>`;
}

function inline(version: VastVersion, ad: VastInlineAd): string {
  const creatives: string[] = [];
  const uid = ad.universalAdId ?? { registry: 'unknown', value: 'unknown' };
  const universal = version === '4.2' ? `<UniversalAdId idRegistry="${attr(uid.registry)}">${cdata(uid.value)}</UniversalAdId>` : '';
  // 4.2 names the creative's UniversalAdId after its body.
  const creative = (body: string, seq: number) => `<Creative id="${attr(ad.creativeId)}" sequence="${seq}"${version === '4.2' ? ` adId="${attr(ad.creativeId)}"` : ''}>${body}${universal}</Creative>`;
  let seq = 1;
  if (ad.linear) creatives.push(creative(linear(version, ad.linear), seq++));
  if (ad.nonLinear?.length) creatives.push(creative(nonLinearAds(version, ad.nonLinear, ad.nonLinearTracking), seq++));
  if (ad.companions?.length) creatives.push(creative(companionAds(version, ad.companions, ad.companionsRequired), seq++));
  const system = `<AdSystem>${cdata(ad.adSystem)}</AdSystem>`;
  const error = ad.error ? `<Error>${cdata(ad.error)}</Error>` : '';
  const impressions = ad.impressions.map((u, i) => `<Impression id="i${i}">${cdata(u)}</Impression>`).join('');
  const title = `<AdTitle>${cdata(ad.title)}</AdTitle>`;
  const description = ad.description ? `<Description>${cdata(ad.description)}</Description>` : '';
  const advertiser = version !== '2.0' && ad.advertiser ? `<Advertiser>${cdata(ad.advertiser)}</Advertiser>` : '';
  const body = `<Creatives>${creatives.join('')}</Creatives>`;
  if (version === '4.2') {
    const verifications = ad.verifications?.length
      ? `<AdVerifications>${ad.verifications
          .map((v) => `<Verification vendor="${attr(v.vendor)}"><JavaScriptResource apiFramework="omid" browserOptional="true">${cdata(v.jsUrl)}</JavaScriptResource>${v.parameters ? `<VerificationParameters>${cdata(v.parameters)}</VerificationParameters>` : ''}</Verification>`)
          .join('')}</AdVerifications>`
      : '';
    return `<InLine>${system}${error}${impressions}<AdServingId>${cdata(ad.adServingId)}</AdServingId>${title}${verifications}${advertiser}${body}${description}</InLine>`;
  }
  return `<InLine>${system}${title}${description}${advertiser}${error}${impressions}${body}</InLine>`;
}

function wrapper(version: VastVersion, ad: VastWrapperAd): string {
  const system = `<AdSystem>${cdata(ad.adSystem)}</AdSystem>`;
  const error = ad.error ? `<Error>${cdata(ad.error)}</Error>` : '';
  // 2.0 and 3.0 wrappers give their impressions no id.
  const impressions = ad.impressions.map((u, i) => `<Impression${version === '4.2' ? ` id="i${i}"` : ''}>${cdata(u)}</Impression>`).join('');
  const tag = `<VASTAdTagURI>${cdata(ad.adTagUri)}</VASTAdTagURI>`;
  const clicks = ad.clickTracking?.length ? `<VideoClicks>${ad.clickTracking.map((u) => `<ClickTracking>${cdata(u)}</ClickTracking>`).join('')}</VideoClicks>` : '';
  const tracking = trackingEvents(version, ad.linearTracking);
  const creatives = tracking || clicks ? `<Creatives><Creative><Linear>${tracking}${clicks}</Linear></Creative></Creatives>` : '';
  const follow = version === '4.2' && ad.followAdditionalWrappers !== undefined ? ` followAdditionalWrappers="${ad.followAdditionalWrappers}"` : '';
  // 4.2 names the next document after the wrapper's own creatives.
  if (version === '4.2') return `<Wrapper${follow}>${system}${error}${impressions}${creatives}${tag}</Wrapper>`;
  return `<Wrapper${follow}>${system}${tag}${error}${impressions}${creatives}</Wrapper>`;
}

/** One `<Ad>` element. */
export function vastAdXml(version: VastVersion, a: VastAd): string {
  const base = 'inline' in a ? a.inline : a.wrapper;
  const sequence = version !== '2.0' && base.sequence !== undefined ? ` sequence="${base.sequence}"` : '';
  return `<Ad id="${attr(base.id)}"${sequence}>${'inline' in a ? inline(version, a.inline) : wrapper(version, a.wrapper)}</Ad>`;
}

/** The VAST document around `<Ad>` elements (vastAdXml); none: an empty VAST. */
export function vastDocument(version: VastVersion, adElements: readonly string[]): string {
  const ns = version === '4.2' ? ' xmlns="http://www.iab.com/VAST"' : '';
  return `<?xml version="1.0" encoding="UTF-8"?><VAST version="${version}"${ns}>${adElements.join('')}</VAST>`;
}

/** The VAST document of the ads (an ad pod when several carry a sequence); no ad: an empty VAST. */
export function vastXml(version: VastVersion, ads: VastAd[]): string {
  return vastDocument(version, ads.map((a) => vastAdXml(version, a)));
}
