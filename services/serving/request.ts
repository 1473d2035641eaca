import { parseBoolean } from '../shared/booleans';
import type http from 'node:http';
import { isHttpUrl } from '../shared/catalog/validate';

/**
 * Reading a serving request: the parameters of every tag form (query, `/adserve/;a=b;c=d` and JSON
 * bodies), with the 400s that say which parameter to fix, and the request's cookies and address.
 */

const MAX_MACRO = 2048;

/** A refusal with the spec's error shape. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly parameters?: { field: string; type: string; message: string }[],
  ) {
    super(message);
  }
}

export const invalid = (field: string, message: string) => new HttpError(400, 'invalid_request_parameters_error', message, [{ field, type: 'invalid_value', message }]);

export interface ServeRequest {
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
  /** Privacy signals the tag passes on (gdpr, gdpr_consent, us_privacy, gpp, gpp_sid), sent to demand as OpenRTB's regs and user.consent. */
  consent: Consent;
}

export interface Consent {
  /** 1: the visitor is subject to the GDPR; 0: not; undefined: unknown. */
  gdpr?: 0 | 1;
  gdprConsent: string;
  usPrivacy: string;
  gpp: string;
  gppSid: number[];
}

/** Consent strings are opaque to us but bounded: a TCF string is a few hundred characters. */
const MAX_CONSENT = 4096;

function consentOf(get: (n: string) => unknown): Consent {
  const text = (name: string) => {
    const v = get(name);
    if (v === null || v === undefined) return '';
    const s = String(v);
    if (s.length > MAX_CONSENT) throw invalid(name, `'${name}' takes at most ${MAX_CONSENT} characters.`);
    return s;
  };
  const gdpr = text('gdpr');
  if (gdpr !== '' && gdpr !== '0' && gdpr !== '1' && gdpr !== 'true' && gdpr !== 'false') throw invalid('gdpr', `'gdpr' must be 1 (the visitor is subject to the GDPR) or 0.`);
  const sids = text('gpp_sid');
  const gppSid = sids ? sids.split(',').map((x) => Number(x.trim())) : [];
  if (gppSid.length > 32 || gppSid.some((n) => !Number.isInteger(n) || n < 0 || n > 65535)) throw invalid('gpp_sid', `'gpp_sid' must be a comma-separated list of GPP section ids (integers).`);
  return {
    gdpr: gdpr === '' ? undefined : gdpr === '1' || gdpr === 'true' ? 1 : 0,
    gdprConsent: text('gdpr_consent'),
    usPrivacy: text('us_privacy'),
    gpp: text('gpp'),
    gppSid,
  };
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
    debug: parseBoolean(get('debug')) ?? false,
    consent: consentOf(get),
  };
}

/** `;ID=1;setID=2;type=json` (after /adserve/) merged with the query string; the query wins. */
export function adserveParams(pathname: string, query: URLSearchParams): URLSearchParams {
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

export function positiveInt(params: URLSearchParams | Record<string, unknown>, name: string, label: string): number {
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

export function macro(raw: unknown, name: string): string {
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
export function serveRequest(p: URLSearchParams | Record<string, unknown>): ServeRequest {
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
    rf: parseBoolean(rf) ?? false,
    click: clickPrefix(get('click')),
    extra: extraParam(get('extra')),
    ...targetingInputs(get),
  };
}

/** The request of a tag path (`account`, `zone`, `size`, `click`, `extra` as inventory writes them). */
export function tagRequest(q: URLSearchParams): ServeRequest {
  return {
    account: positiveInt(q, 'account', 'the account id'),
    zone: positiveInt(q, 'zone', 'the zone id'),
    type: 'json',
    size: parseSize(q.get('size')),
    rf: parseBoolean(q.get('rf')) ?? false,
    click: clickPrefix(q.get('click')),
    extra: extraParam(q.get('extra')),
    ...targetingInputs((n) => q.get(n)),
  };
}

export function cookies(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

export function clientIp(req: http.IncomingMessage): string {
  const fwd = String(req.headers['x-forwarded-for'] ?? '').split(',')[0].trim();
  return fwd || req.socket.remoteAddress || '';
}

export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return '';
  }
}

export function readBody(req: http.IncomingMessage, limit: number): Promise<string> {
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

/** A video player's request (`/vast.spark`): the zone and account in AdButler's names, and what VAST to answer. */
export interface VastServeRequest extends ServeRequest {
  /** The VAST version asked for (`vast=2`, `3`, `4`, or 2.0, 3.0, 4.0, 4.1, 4.2); else the zone's. */
  version?: '2.0' | '3.0' | '4.2';
  /** Ads in the pod (`pod=`, 1 to MAX_POD); a pod needs VAST 3.0 or later. */
  pod: number;
  /** Wrappers of this platform followed to reach this request (`wd=`), for the chain limit. */
  wrapperDepth: number;
}

export const MAX_POD = 10;
const VAST_VERSION_NAMES: Record<string, '2.0' | '3.0' | '4.2'> = { 2: '2.0', '2.0': '2.0', 3: '3.0', '3.0': '3.0', 4: '4.2', '4.0': '4.2', '4.1': '4.2', '4.2': '4.2' };
/** A macro the player left unfilled (`[CACHEBUSTING]`): read as not given. */
const UNFILLED = /^\[[A-Z_]+\]$/;

export function vastRequest(q: URLSearchParams): VastServeRequest {
  const get = (n: string) => {
    const v = q.get(n);
    return v !== null && UNFILLED.test(v) ? null : v;
  };
  const version = get('vast');
  if (version && !VAST_VERSION_NAMES[version]) throw invalid('vast', `'vast' must be a VAST version: 2.0, 3.0 or 4.2 (2, 3, 4, 4.0 and 4.1 are read as 2.0, 3.0 and 4.2).`);
  const pod = get('pod');
  if (pod && (!/^\d{1,2}$/.test(pod) || Number(pod) < 1 || Number(pod) > MAX_POD)) throw invalid('pod', `'pod' (ads in the pod) must be an integer from 1 to ${MAX_POD}.`);
  const depth = get('wd');
  return {
    account: positiveInt(q, 'ID', 'your account id'),
    zone: positiveInt(q, 'setID', 'the VAST zone id'),
    type: 'json',
    rf: false,
    click: '',
    extra: extraParam(get('extra')),
    ...targetingInputs(get),
    version: version ? VAST_VERSION_NAMES[version] : undefined,
    pod: pod ? Number(pod) : 1,
    wrapperDepth: depth && /^\d{1,2}$/.test(depth) ? Number(depth) : 0,
  };
}
