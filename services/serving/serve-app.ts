import crypto from 'node:crypto';
import type http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { DecisionDataClient, type DecisionEntity, type GetTestDataResponse } from '../../proto/gen/adserver/inventory/v1/decision_data';
import { EventKind } from '../../proto/gen/adserver/reporting/v1/events';
import type { Json } from '../shared/catalog';
import { isHttpUrl } from '../shared/catalog/validate';
import { envInt, serviceAddress } from '../shared/config';
import { channelOptions } from '../shared/grpc/client';
import { internalToken, withInternalToken } from '../shared/internal-token';
import { errorFields, log } from '../shared/log';
import { httpLatency, httpRequests, registry } from '../shared/metrics';
import { Counter } from 'prom-client';
import { tracedRequest } from '../shared/telemetry';
import { renderTemplate } from '../shared/native-template';
import { AD_ITEM_KINDS, dataFrom, pickWeighted, type Candidate, type DecisionData, type Excluded } from './decision-store';
import { countView, decodeFrequencyCookie, encodeFrequencyCookie, FREQUENCY_COOKIE, liveEntries, type FreqEntry } from './targeting/frequency';
import type { GeoDatabase } from './targeting/geo';
import { platformOf } from './targeting/platform';
import { judge, type RequestFacts } from './targeting/rules';
import type { PageMemory } from './targeting/unique-delivery';
import { decisionEvent, type EventContext, type EventSink } from './events';
import { newDecisionId, randomToken, type Decision, type TokenSigner } from './tracking';

/**
 * The public serving paths (AdButler's forms) and the tag paths inventory hands out under
 * SERVE_BASE_URL/serve/..., plus /v2/adserve for the gateway (which authenticates the key and passes
 * account and mode with the internal token). Every decision is made from memory.
 */

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const MAX_MACRO = 2048;
const CONVERSION_KINDS = new Set([...AD_ITEM_KINDS, 'standard_campaign', 'standard_zone', 'email_zone']);

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly parameters?: { field: string; type: string; message: string }[],
  ) {
    super(message);
  }
}

const invalid = (field: string, message: string) => new HttpError(400, 'invalid_request_parameters_error', message, [{ field, type: 'invalid_value', message }]);

export interface ServeDeps {
  data: { current: DecisionData };
  signer: TokenSigner;
  events: EventSink;
  /** Whether a first snapshot of decision data has arrived (readiness). */
  ready(): boolean;
  geo: GeoDatabase;
  pages: PageMemory;
  /** Signs the frequency-cap cookie. */
  secret: string;
}

interface ServeRequest {
  account: number;
  zone: number;
  type: 'json' | 'jsonr';
  size?: { width: number; height: number };
  rf: boolean;
  click: string;
  extra: string;
  /** Targeting inputs a server-side caller may give for its visitor (else read from the request). */
  ip: string;
  ua: string;
  screenWidth?: number;
  keywords: string[];
  /** `_abdk` / `_abdk_json` key-value pairs. */
  data: Record<string, string>;
  /** The reference's `user_freq` (server-side callers keep frequency data themselves). */
  userFreq?: unknown;
  /** The page view (`pid`) whose zones share unique delivery. */
  pid: string;
  debug: boolean;
}

const MAX_KEYWORDS = 100;

/** `kw`: a comma-separated string or (JSON body) an array of strings. */
function keywordsOf(raw: unknown): string[] {
  if (raw === null || raw === undefined || raw === '') return [];
  const list = Array.isArray(raw) ? raw.map(String) : String(raw).split(',');
  if (list.length > MAX_KEYWORDS || list.some((k) => k.length > 255)) throw invalid('kw', `'kw' takes at most ${MAX_KEYWORDS} keywords of at most 255 characters.`);
  return list.map((k) => k.trim()).filter(Boolean);
}

/** `_abdk_json` (an object, or its JSON text) and `_abdk` (`key:value,key:value`, or JSON text). */
function dataKeysOf(json: unknown, plain: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const take = (obj: unknown, name: string) => {
    if (typeof obj === 'string') {
      try {
        obj = JSON.parse(obj);
      } catch {
        throw invalid(name, `'${name}' must be a JSON object of data keys and their values.`);
      }
    }
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw invalid(name, `'${name}' must be a JSON object of data keys and their values.`);
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) if (v !== null && typeof v !== 'object') out[k.slice(0, 64)] = String(v).slice(0, 255);
  };
  if (plain !== null && plain !== undefined && plain !== '') {
    const text = String(plain);
    if (text.trim().startsWith('{')) take(text, '_abdk');
    else {
      for (const pair of text.split(',')) {
        const sep = pair.search(/[:=]/);
        if (sep > 0) out[pair.slice(0, sep).trim().slice(0, 64)] = pair.slice(sep + 1).trim().slice(0, 255);
      }
    }
  }
  if (json !== null && json !== undefined && json !== '') take(json, '_abdk_json');
  return out;
}

function userFreqOf(raw: unknown): unknown {
  if (raw === null || raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw invalid('user_freq', `'user_freq' must be a JSON array of {placement_id, start, expiry, views}.`);
  }
}

function screenWidthOf(raw: unknown): number | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 100_000) throw invalid('sw', `'sw' (screen width) must be a whole number of pixels.`);
  return n;
}

/** Targeting inputs shared by every request form. */
function targetingInputs(get: (n: string) => unknown) {
  const ip = get('ip');
  const ua = get('ua');
  const pid = get('pid');
  return {
    ip: ip === null || ip === undefined ? '' : macro(ip, 'ip').slice(0, 64),
    ua: ua === null || ua === undefined ? '' : macro(ua, 'ua').slice(0, 512),
    screenWidth: screenWidthOf(get('sw')),
    keywords: keywordsOf(get('kw')),
    data: dataKeysOf(get('_abdk_json'), get('_abdk')),
    userFreq: userFreqOf(get('user_freq')),
    pid: pid === null || pid === undefined ? '' : macro(pid, 'pid').slice(0, 64),
    debug: ['1', 'true', true, 1].includes(get('debug') as never),
  };
}

/** `;ID=1;setID=2;type=json` (after /adserve/) merged with the query string; the query wins. */
function adserveParams(pathname: string, query: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  const rest = pathname.replace(/^\/adserve\/?/, '');
  for (const part of rest.split(';')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    let value = eq < 0 ? '' : part.slice(eq + 1);
    try {
      value = decodeURIComponent(value);
    } catch {
      throw invalid(name, `'${name.slice(0, 32)}' is not validly percent-encoded.`);
    }
    out.set(name, value);
  }
  for (const [k, v] of query) out.set(k, v);
  return out;
}

function positiveInt(params: URLSearchParams | Record<string, unknown>, name: string, label: string): number {
  const raw = params instanceof URLSearchParams ? params.get(name) : params[name];
  if (raw === null || raw === undefined || raw === '') throw invalid(name, `'${name}' (${label}) is required.`);
  const n = typeof raw === 'number' ? raw : /^\d{1,15}$/.test(String(raw)) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, `'${name}' (${label}) must be a positive integer.`);
  return n;
}

function parseSize(raw: unknown): { width: number; height: number } | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined;
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(String(raw));
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw invalid('size', `'size' must be WIDTHxHEIGHT in pixels, e.g. 300x250.`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

function macro(raw: unknown, name: string): string {
  if (raw === null || raw === undefined) return '';
  const s = String(raw);
  if (s.length > MAX_MACRO) throw invalid(name, `'${name}' must be at most ${MAX_MACRO} characters long.`);
  return s;
}

/** `extra` for the destination's query; one whose percent-encoding was invalid (decoded to U+FFFD) is dropped. */
function extraParam(raw: unknown): string {
  const s = macro(raw, 'extra');
  return s.includes('\uFFFD') ? '' : s;
}

const conversionsRefused = new Counter({ name: 'serving_conversions_refused_total', help: 'Conversion pixels over CONVERSION_LIMIT per client address and account a minute, not recorded', registers: [registry] });

/**
 * A third-party click tracker put in front of the click URL: only an http(s) URL, the rule for every
 * stored URL. Anything else (`javascript:`, `data:`) would run in the ad's document; it is dropped and
 * the ad links to its own click URL.
 */
function clickPrefix(raw: unknown): string {
  const s = macro(raw, 'click');
  return s && isHttpUrl(s) ? s : '';
}

/** The request of an /adserve or /v2/adserve call (query, semicolon or JSON body parameters). */
function serveRequest(p: URLSearchParams | Record<string, unknown>): ServeRequest {
  const get = (n: string) => (p instanceof URLSearchParams ? p.get(n) : p[n]);
  const type = get('type');
  if (type === null || type === undefined || type === '') throw invalid('type', `'type' is required: json (the most eligible ad) or jsonr (every eligible ad).`);
  if (type !== 'json' && type !== 'jsonr') throw invalid('type', `'type' must be json or jsonr.`);
  const rf = get('rf');
  return {
    account: positiveInt(p, 'ID', 'your account id'),
    zone: positiveInt(p, 'setID', 'the zone id'),
    type,
    size: parseSize(get('size')),
    rf: rf === 1 || rf === '1' || rf === true,
    click: clickPrefix(get('click')),
    extra: extraParam(get('extra')),
    ...targetingInputs(get),
  };
}

/** The request of a tag path (`account`, `zone`, `size`, `click`, `extra` as inventory writes them). */
function tagRequest(q: URLSearchParams): ServeRequest {
  return {
    account: positiveInt(q, 'account', 'the account id'),
    zone: positiveInt(q, 'zone', 'the zone id'),
    type: 'json',
    size: parseSize(q.get('size')),
    rf: q.get('rf') === '1',
    click: clickPrefix(q.get('click')),
    extra: extraParam(q.get('extra')),
    ...targetingInputs((n) => q.get(n)),
  };
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Where this request reached us: the serving host (direct) or the gateway (proxied). */
function baseUrl(req: http.IncomingMessage): string {
  const proto = String(req.headers['x-forwarded-proto'] ?? '').split(',')[0].trim() || ((req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http');
  const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost').split(',')[0].trim();
  return `${proto === 'https' ? 'https' : 'http'}://${host}`;
}

/** What a decided ad looks like to the client: its creative and the signed tracking URLs. */
interface Rendered {
  decision: Decision;
  item: DecisionEntity;
  imageUrl: string;
  body: string;
  clickUrl: string;
  impressionUrl: string;
  viewableUrl: string;
}

function render(data: DecisionData, signer: TokenSigner, c: Candidate, r: ServeRequest, base: string, test: boolean): Rendered | undefined {
  const item = data.get(c.account, c.adItemKind, c.adItem);
  if (!item?.adItem) return undefined;
  const decision: Decision = { ...c, id: newDecisionId(), test, click: r.click, extra: r.extra, at: Math.floor(Date.now() / 1000) };
  const token = signer.sign(decision);
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
  const t = encodeURIComponent(token);
  return {
    decision,
    item,
    imageUrl,
    body,
    clickUrl: `${r.click}${base}/serve/click?t=${t}`,
    impressionUrl: `${base}/serve/imp?t=${t}`,
    viewableUrl: `${base}/serve/view?t=${t}`,
  };
}

/**
 * Every ad document runs in a sandbox without `allow-same-origin`: an opaque origin, whatever host
 * serves it, so a tenant's markup can never read or act on another page of that host (the settings
 * page, the API, another tenant's ads). Scripts, forms and popups still work; a click's landing page
 * opens outside the sandbox, and `_top` links need the user's click.
 */
export const AD_DOCUMENT_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation';

/** The ad as HTML (iframe and js forms): linked image or the item's own markup, and its pixels. */
function adHtml(x: Rendered): string {
  const ad = x.item.adItem!;
  const target = ad.target || '_blank';
  let html = x.body;
  if (!html && x.imageUrl) {
    const img = `<img src="${attr(x.imageUrl)}" width="${ad.width}" height="${ad.height}" alt="${attr(ad.altText)}" border="0" style="display:block" />`;
    html = ad.location ? `<a href="${attr(x.clickUrl)}" target="${attr(target)}">${img}</a>` : img;
  }
  const pixels = [ad.trackingPixel, ...ad.trackingPixels].filter(Boolean).map((u) => `<img src="${attr(u)}" width="1" height="1" border="0" alt="" style="display:none" />`);
  return `${html}${ad.htmlContentBelow}${pixels.join('')}`;
}

/** `placements.placement_1` of the JSON answer: every value a string, as older SDKs expect. */
function placementJson(x: Rendered, r: ServeRequest, refreshSeconds: number, base: string, q: string): Record<string, string> {
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

function cookies(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function clientIp(req: http.IncomingMessage): string {
  const fwd = String(req.headers['x-forwarded-for'] ?? '').split(',')[0].trim();
  return fwd || req.socket.remoteAddress || '';
}

export function createServeHandler(deps: ServeDeps): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const testClient = new DecisionDataClient(serviceAddress('inventory'), grpc.credentials.createInsecure(), channelOptions);
  const deadlineMs = envInt('GRPC_DEADLINE_MS', 5000);

  /** The visitor cookie (set when absent) and what every event of this request carries. */
  /**
   * What an event records of its request. `viewerIp` is the `ip=` a server-side caller passes for its
   * viewer: the decision was targeted by that address, so the event carries its place too.
   */
  function context(req: http.IncomingMessage, res: http.ServerResponse, viewerIp = ''): EventContext {
    let uid = cookies(req).adsrv_uid;
    if (!uid || !/^[A-Za-z0-9_-]{16,64}$/.test(uid)) {
      uid = randomToken(16);
      appendCookie(req, res, `adsrv_uid=${uid}; Max-Age=31536000`);
    }
    const ip = viewerIp || clientIp(req);
    const where = deps.geo.lookup(ip);
    return {
      country: where?.country,
      region: where?.region,
      city: where?.city,
      visitor: deps.signer.visitor(uid),
      ip,
      userAgent: String(req.headers['user-agent'] ?? ''),
      referrer: String(req.headers.referer ?? ''),
    };
  }

  function appendCookie(req: http.IncomingMessage, res: http.ServerResponse, cookie: string): void {
    // Tags load from other sites' pages: over HTTPS the cookie must be allowed cross-site.
    const secure = baseUrl(req).startsWith('https:');
    const prev = res.getHeader('Set-Cookie');
    const list = Array.isArray(prev) ? prev : prev ? [String(prev)] : [];
    res.setHeader('Set-Cookie', [...list, `${cookie}; Path=/; HttpOnly; ${secure ? 'SameSite=None; Secure' : 'SameSite=Lax'}`]);
  }

  /** What the request tells about its visitor, for the targeting rules. */
  function factsOf(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, now: Date): RequestFacts {
    if (data.needsGeo && !deps.geo.loaded) void deps.geo.load();
    const nowSeconds = Math.floor(now.getTime() / 1000);
    return {
      now,
      geo: deps.geo.lookup(r.ip || clientIp(req)),
      platform: platformOf(r.ua || String(req.headers['user-agent'] ?? '')),
      screenWidth: r.screenWidth,
      keywords: r.keywords,
      data: r.data,
      frequency: r.userFreq !== undefined ? liveEntries(r.userFreq, nowSeconds) : decodeFrequencyCookie(cookies(req)[FREQUENCY_COOKIE], deps.secret, nowSeconds),
      // Accounts have no time zone setting yet: day-parting "in the account's zone" reads UTC.
      accountTimezone: 'UTC',
    };
  }

  /**
   * The candidates the targeting rules let through, for this request: every rule of each placement,
   * then unique delivery on the page; keyword "preferred" matches are served ahead of the rest.
   */
  async function targeted(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, explain?: (e: Excluded) => void): Promise<Candidate[]> {
    const now = new Date();
    const candidates = data.eligible(r.account, r.zone, r.size, now.getTime(), explain);
    if (!candidates.length) return candidates;
    const facts = factsOf(data, r, req, now);
    const page = r.pid && candidates.some((c) => data.targetingOf(c).uniqueDelivery) ? await deps.pages.served(r.account, r.pid).catch(() => undefined) : undefined;
    const allowed: Candidate[] = [];
    const preferred: Candidate[] = [];
    for (const c of candidates) {
      const t = data.targetingOf(c);
      const verdict = judge(t.targets, facts);
      if (!verdict.ok) {
        explain?.({ placement: c.placement, adItem: c.adItem, rule: verdict.rule, detail: verdict.detail });
        continue;
      }
      if (page && t.uniqueDelivery && page.adItems.has(c.adItem)) {
        explain?.({ placement: c.placement, adItem: c.adItem, rule: 'unique_delivery', detail: `already shown on page ${r.pid}` });
        continue;
      }
      allowed.push(c);
      if (verdict.preferred) preferred.push(c);
    }
    return preferred.length ? preferred : allowed;
  }

  async function decide(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, base: string, test: boolean, filter?: (x: Rendered) => boolean): Promise<Rendered | undefined> {
    const candidates = await targeted(data, r, req);
    // Pick among those that can render in this form; the weights keep their proportions.
    const pool = filter ? candidates.filter((c) => { const x = render(data, deps.signer, c, r, base, test); return !!x && filter(x); }) : candidates;
    const chosen = pickWeighted(pool);
    if (!chosen) return undefined;
    if (r.pid && !test && data.targetingOf(chosen).uniqueDelivery) await deps.pages.remember(r.account, r.pid, chosen.adItem, chosen.campaign).catch(() => undefined);
    return render(data, deps.signer, chosen, r, base, test);
  }

  /** Counts a view of the decision's placement in the visitor's frequency cookie, when its placement caps views. */
  function countFrequency(data: DecisionData, d: Decision, req: http.IncomingMessage, res: http.ServerResponse): void {
    if (d.test || !d.placement || !data.get(d.account, 'placement', d.placement)) return;
    const window = data.targetingOf(d as Candidate).frequencyWindowSeconds;
    if (!window) return;
    const now = Math.floor(Date.now() / 1000);
    const entries: Map<number, FreqEntry> = decodeFrequencyCookie(cookies(req)[FREQUENCY_COOKIE], deps.secret, now);
    appendCookie(req, res, `${FREQUENCY_COOKIE}=${encodeFrequencyCookie(countView(entries, d.placement, window, now), deps.secret)}; Max-Age=${window}`);
  }

  function record(kind: EventKind.RESPONSE | EventKind.IMPRESSION | EventKind.CLICK, d: Decision, ctx: EventContext): void {
    if (!d.test) deps.events.push(decisionEvent(kind, d, ctx));
  }

  /** The JSON answer of /adserve, /serve/json and /v2/adserve. */
  async function adserveJson(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, res: http.ServerResponse, test: boolean): Promise<Record<string, unknown>> {
    const base = baseUrl(req);
    const zone = data.zone(r.account, r.zone);
    const refresh = zone?.zone?.refreshFrequency ?? 0;
    const q = `ID=${r.account};setID=${r.zone};type=json${r.size ? `;size=${r.size.width}x${r.size.height}` : ''}`;
    const extraFlag = test ? { test: true } : {};
    if (r.type === 'jsonr') {
      // Most eligible first: by weight, ties in random order. Every ad handed out carries signed tracking
      // URLs a client may fire, so each is a response: impressions can never exceed responses.
      const ranked = (await targeted(data, r, req)).map((c) => ({ c, k: Math.random() })).sort((a, b) => b.c.weight - a.c.weight || a.k - b.k);
      const placements: Record<string, Record<string, string>> = {};
      let n = 0;
      const ctx = ranked.length ? context(req, res, r.ip) : undefined;
      for (const { c } of ranked) {
        const x = render(data, deps.signer, c, r, base, test);
        if (!x) continue;
        placements[`placement_${++n}`] = placementJson(x, r, refresh, base, q);
        record(EventKind.RESPONSE, x.decision, ctx!);
      }
      return n ? { status: 'SUCCESS', placements, ...extraFlag } : { status: 'NO_ADS', ...extraFlag };
    }
    const x = await decide(data, r, req, base, test);
    if (!x) return { status: 'NO_ADS', ...extraFlag };
    record(EventKind.RESPONSE, x.decision, context(req, res, r.ip));
    return { status: 'SUCCESS', placements: { placement_1: placementJson(x, r, refresh, base, q) }, ...extraFlag };
  }

  async function testData(account: number): Promise<DecisionData> {
    const md = withInternalToken(new grpc.Metadata());
    md.set('x-account-id', String(account));
    md.set('x-mode', 'test');
    const res = await new Promise<GetTestDataResponse>((resolve, reject) =>
      testClient.getTestData({}, md, { deadline: Date.now() + deadlineMs }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    return dataFrom(res.entities);
  }

  /** /v2/adserve, forwarded by the gateway with the key's account and mode and the internal token. */
  async function v2Adserve(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const expected = internalToken();
    const given = String(req.headers['x-internal-token'] ?? '');
    // No token configured means nobody may speak for a tenant here: serving never trusts these headers bare.
    const ok = !!expected && given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    const account = Number(req.headers['x-account-id']);
    const mode = req.headers['x-mode'];
    if (!ok || !Number.isSafeInteger(account) || account < 1 || (mode !== 'live' && mode !== 'test')) {
      throw new HttpError(403, 'authentication_error', '/v2/adserve is answered through the API gateway with an API key.');
    }
    let params: URLSearchParams | Record<string, unknown> = url.searchParams;
    if (req.method === 'POST') {
      const raw = await readBody(req, 64 * 1024);
      if (raw.trim()) {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          throw new HttpError(400, 'invalid_request_error', 'The request body is not valid JSON.');
        }
        if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'invalid_request_error', 'The request body must be a JSON object of adserve parameters.');
        params = { ...Object.fromEntries(url.searchParams), ...(body as Record<string, unknown>) };
      }
    }
    const r = serveRequest(params);
    if (r.account !== account) throw invalid('ID', `'ID' must be the id of the account your key belongs to (${account}).`);
    const data = mode === 'test' ? await testData(account) : deps.data.current;
    if (r.debug) {
      // Decision debug for the account's own key: every ad of the zone and the rule that excluded it.
      const excluded: Excluded[] = [];
      const eligible = await targeted(data, r, req, (e) => excluded.push(e));
      return sendJson(res, 200, {
        object: 'decision_debug',
        zone: r.zone,
        test: mode === 'test',
        eligible: eligible.map((c) => ({ placement: c.placement, ad_item: c.adItem, ad_item_type: c.adItemKind, campaign: c.campaign || null, weight: c.weight })),
        excluded: excluded.map((e) => ({ placement: e.placement, ad_item: e.adItem || null, rule: e.rule, detail: e.detail })),
      });
    }
    sendJson(res, 200, await adserveJson(data, r, req, res, mode === 'test'));
  }

  /**
   * Conversions a client address may record per account and minute (CONVERSION_LIMIT), in this
   * serving process: past it the pixel still answers and records nothing.
   */
  const conversionWindows = new Map<string, { start: number; count: number }>();
  const conversionLimit = envInt('CONVERSION_LIMIT', 30);
  function conversionAllowed(key: string, now = Date.now()): boolean {
    if (conversionWindows.size > 100_000) conversionWindows.clear();
    const w = conversionWindows.get(key);
    if (!w || now - w.start >= 60_000) {
      conversionWindows.set(key, { start: now, count: 1 });
      return true;
    }
    if (w.count >= conversionLimit) {
      conversionsRefused.inc();
      return false;
    }
    w.count++;
    return true;
  }

  function conversion(req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): void {
    const account = positiveInt(q, 'account', 'the account id');
    const kind = q.get('type') ?? '';
    if (!CONVERSION_KINDS.has(kind)) throw invalid('type', `'type' must name what converted: ${[...CONVERSION_KINDS].join(', ')}.`);
    const id = positiveInt(q, 'id', `the ${kind} id`);
    const value = q.get('value') ?? '';
    if (value && !/^\d{1,12}(\.\d{1,4})?$/.test(value)) throw invalid('value', `'value' must be a decimal amount such as 19.99.`);
    const reference = macro(q.get('ref'), 'ref').slice(0, 255);
    // A test tag (test=1) and an unknown target answer the pixel and record nothing.
    const data = deps.data.current;
    const target = q.get('test') === '1' ? undefined : data.get(account, kind, id);
    if (target && conversionAllowed(`${account}:${clientIp(req)}`)) {
      const ctx = context(req, res);
      // Attribute to the last click on this account's ads when this browser made one.
      const clicked = deps.signer.verify(safeDecode(cookies(req).adsrv_c ?? ''));
      const attributed = !!clicked && !clicked.test && clicked.account === account;
      const d: Partial<Decision> & { account: number } = attributed ? { ...clicked } : { account };
      if (!attributed) {
        if (AD_ITEM_KINDS.has(kind)) d.adItem = id;
        else if (kind === 'standard_campaign') d.campaign = id;
        else d.zone = id;
      }
      // One conversion per order reference and account, however often its page is reloaded.
      const eventId = reference ? `conversion:${account}:${crypto.createHash('sha256').update(reference).digest('base64url').slice(0, 32)}` : `conversion:${crypto.randomUUID()}`;
      const e = decisionEvent(EventKind.CONVERSION, d, ctx, eventId);
      // A value is credited only to a conversion that follows a click: anyone can load the pixel.
      e.conversionValue = attributed ? value : '';
      e.conversionReference = reference;
      deps.events.push(e);
    }
    sendGif(res);
  }

  async function click(req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): Promise<void> {
    let d: Decision | undefined;
    if (q.has('t')) {
      d = deps.signer.verify(q.get('t') ?? '');
      if (!d) throw new HttpError(400, 'invalid_request_error', 'This click link is not valid: it was altered or not made by this ad server.');
    } else {
      // The image tag's link: the ad its image showed in this browser (a signed cookie per zone).
      const r = tagRequest(q);
      const shown = deps.signer.verify(safeDecode(cookies(req)[`adsrv_i${r.zone}`] ?? ''));
      if (shown && shown.account === r.account && shown.zone === r.zone) d = shown;
      else {
        // Nothing shown here before: follow an eligible ad without counting a click nobody saw.
        const x = await decide(deps.data.current, r, req, baseUrl(req), false, (y) => !!y.item.adItem?.location);
        return redirectTo(res, x ? destination(x.item.adItem!.location, r.extra) : '');
      }
    }
    const item = deps.data.current.get(d.account, d.adItemKind, d.adItem);
    if (d.test) return redirectTo(res, '');
    record(EventKind.CLICK, d, context(req, res));
    appendCookie(req, res, `adsrv_c=${encodeURIComponent(deps.signer.sign(d))}; Max-Age=2592000`);
    redirectTo(res, item?.adItem?.location ? destination(item.adItem.location, d.extra) : '');
  }

  function beacon(res: http.ServerResponse, req: http.IncomingMessage, q: URLSearchParams, count: boolean): void {
    const d = deps.signer.verify(q.get('t') ?? '');
    if (!d) throw new HttpError(400, 'invalid_request_error', 'This tracking link is not valid: it was altered or not made by this ad server.');
    if (count) {
      record(EventKind.IMPRESSION, d, context(req, res));
      countFrequency(deps.data.current, d, req, res);
    }
    sendGif(res);
  }

  /** iframe, js and image forms: the served document is the impression. */
  async function documentForm(form: 'iframe' | 'js' | 'image', req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): Promise<void> {
    const r = tagRequest(q);
    const x = await decide(deps.data.current, r, req, baseUrl(req), false, form === 'image' ? (y) => !!y.imageUrl : undefined);
    if (x) {
      const ctx = context(req, res, r.ip);
      record(EventKind.RESPONSE, x.decision, ctx);
      record(EventKind.IMPRESSION, x.decision, ctx);
      countFrequency(deps.data.current, x.decision, req, res);
    }
    if (form === 'image') {
      if (!x) return sendGif(res);
      appendCookie(req, res, `adsrv_i${r.zone}=${encodeURIComponent(deps.signer.sign(x.decision))}; Max-Age=86400`);
      res.writeHead(302, { Location: x.imageUrl, 'Cache-Control': 'no-store' });
      return void res.end();
    }
    const html = x ? adHtml(x) : '';
    if (form === 'iframe') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Security-Policy': AD_DOCUMENT_CSP });
      return void res.end(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0;overflow:hidden}</style></head><body>${html}</body></html>`);
    }
    res.writeHead(200, { 'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(html ? `document.write(${JSON.stringify(html).replace(/</g, '\\u003c')});\n` : '');
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<string> {
    const p = url.pathname;
    const method = req.method ?? 'GET';
    const getOnly = () => {
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(501, 'method_not_supported_error', `${method} is not supported on ${p}.`);
    };
    if (p === '/healthz') {
      // Not ready until the first snapshot is in memory: before that every zone would answer NO_ADS.
      const ready = deps.ready();
      sendJson(res, ready ? 200 : 503, { status: ready ? 'ok' : 'loading decision data', events_pending: deps.events.pending });
      return 'healthz';
    }
    if (p === '/v2/adserve') {
      if (method !== 'GET' && method !== 'POST') throw new HttpError(501, 'method_not_supported_error', `${method} is not supported on /v2/adserve.`);
      await v2Adserve(req, res, url);
      return 'v2-adserve';
    }
    // The JSON forms are read by scripts of any page (no credentials involved).
    if (p === '/adserve' || p.startsWith('/adserve/') || p === '/serve/json') res.setHeader('Access-Control-Allow-Origin', '*');
    if (p === '/adserve' || p.startsWith('/adserve/')) {
      getOnly();
      sendJson(res, 200, await adserveJson(deps.data.current, serveRequest(adserveParams(p, url.searchParams)), req, res, false));
      return 'adserve';
    }
    switch (p) {
      case '/serve/json':
        getOnly();
        sendJson(res, 200, await adserveJson(deps.data.current, tagRequest(url.searchParams), req, res, false));
        return 'serve-json';
      case '/serve/iframe':
      case '/serve/js':
      case '/serve/image':
        getOnly();
        await documentForm(p.slice(7) as 'iframe' | 'js' | 'image', req, res, url.searchParams);
        return p.slice(1);
      case '/serve/async.js':
        getOnly();
        res.writeHead(200, { 'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'max-age=300' });
        res.end(ASYNC_JS);
        return 'serve-async';
      case '/serve/click':
        getOnly();
        await click(req, res, url.searchParams);
        return 'serve-click';
      case '/serve/imp':
        getOnly();
        beacon(res, req, url.searchParams, true);
        return 'serve-imp';
      case '/serve/view':
        getOnly();
        beacon(res, req, url.searchParams, false);
        return 'serve-view';
      case '/serve/conversion':
        getOnly();
        conversion(req, res, url.searchParams);
        return 'serve-conversion';
      default:
        throw new HttpError(404, 'resource_not_found_error', `No route ${method} ${p.slice(0, 200)} on the ad server.`);
    }
  }

  return (req, res) => {
    let routeName = 'unmatched';
    tracedRequest(req, res, () => serve(req, res, (name) => (routeName = name)), () => routeName);
  };

  function serve(req: http.IncomingMessage, res: http.ServerResponse, routed: (name: string) => void): void {
    const started = process.hrtime.bigint();
    let routeName = 'unmatched';
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const done = () => {
      const labels = { route: routeName, method: req.method ?? 'GET', code: String(res.statusCode), version: 'serve' };
      httpRequests.inc(labels);
      httpLatency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.on('finish', done);
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://serving.invalid');
    } catch {
      return sendJson(res, 400, { object: 'error', type: 'invalid_request_error', message: 'The request URL is malformed.', http_status: 400 });
    }
    route(req, res, url).then(
      (name) => routed((routeName = name)),
      (err: unknown) => {
        if (res.headersSent) return res.destroy();
        if (err instanceof HttpError) {
          return sendJson(res, err.status, { object: 'error', type: err.type, message: err.message, http_status: err.status, ...(err.parameters ? { parameters: err.parameters } : {}) });
        }
        const code = (err as { code?: unknown })?.code;
        if (typeof code === 'number') {
          res.setHeader('Retry-After', '1');
          return sendJson(res, 503, { object: 'error', type: 'service_unavailable_error', message: 'Test data could not be read; retry shortly.', http_status: 503 });
        }
        log.error('serve request failed', { path: url.pathname, ...errorFields(err) });
        sendJson(res, 500, { object: 'error', type: 'api_error', message: 'Internal error.', http_status: 500 });
      },
    );
  }
}

/** A destination with the tag's `extra` passed on as query parameters. */
export function destination(location: string, extra: string): string {
  if (!extra) return location;
  const hash = location.indexOf('#');
  const head = hash < 0 ? location : location.slice(0, hash);
  const tail = hash < 0 ? '' : location.slice(hash);
  return `${head}${head.includes('?') ? '&' : '?'}${extra.replace(/^[?&]+/, '')}${tail}`;
}

function redirectTo(res: http.ServerResponse, target: string): void {
  // The WHATWG serialisation percent-encodes what a header may not carry raw (non-ASCII paths and queries).
  let location = '';
  try {
    location = target ? new URL(target).href : '';
  } catch {
    /* a destination that is not a URL: no redirect */
  }
  if (!location) {
    res.writeHead(204, { 'Cache-Control': 'no-store' });
    return void res.end();
  }
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store' });
  res.end();
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return '';
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
  res.end(text);
}

function sendGif(res: http.ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'image/gif', 'Content-Length': GIF.length, 'Cache-Control': 'no-store' });
  res.end(GIF);
}

function readBody(req: http.IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        // Answer 413 and discard the rest: destroying the socket would leave the caller (the gateway) no answer.
        req.removeAllListeners('data');
        req.resume();
        reject(new HttpError(413, 'request_too_large_error', `The request body is larger than ${limit / 1024} KB; send the adserve parameters only.`));
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * async.js: fills every not yet filled `<ins class="adserver-zone">` of the page with an iframe of
 * the zone's ad, from the host the script itself was loaded from.
 */
const ASYNC_JS = `(function(){
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
