import type http from 'node:http';
import { serveBaseUrl } from '../shared/config';
import type { DecisionRequest } from './decide';
import type { Candidate, DecisionData } from './decision-store';
import type { EventContext } from './events';
import { countView, decodeFrequencyCookie, encodeFrequencyCookie, FREQUENCY_COOKIE, liveEntries } from './targeting/frequency';
import type { GeoDatabase } from './targeting/geo';
import { platformOf } from './targeting/platform';
import { clientIp, cookies, type ServeRequest } from './request';
import { randomToken, type Decision, type TokenSigner } from './tracking';

/**
 * What serving knows of a visitor, and keeps in the visitor's browser: the visitor cookie, the signed
 * frequency cookie, where the request comes from and on what platform. The decision reads these as
 * facts; the events record them.
 */
export class Visitors {
  /** Tags load from other sites' pages: over HTTPS the cookies must be allowed cross-site. */
  private readonly cookieFlags = `Path=/; HttpOnly; ${serveBaseUrl().startsWith('https:') ? 'SameSite=None; Secure' : 'SameSite=Lax'}`;

  constructor(
    private readonly geo: GeoDatabase,
    private readonly signer: TokenSigner,
    /** Signs the frequency-cap cookie. */
    private readonly secret: string,
  ) {}

  setCookie(res: http.ServerResponse, cookie: string): void {
    const prev = res.getHeader('Set-Cookie');
    const list = Array.isArray(prev) ? prev : prev ? [String(prev)] : [];
    res.setHeader('Set-Cookie', [...list, `${cookie}; ${this.cookieFlags}`]);
  }

  /**
   * What an event records of its request (the visitor cookie is set when absent). `viewerIp` is the
   * `ip=` a server-side caller passes for its viewer: the decision was targeted by that address, so
   * the event carries its place too. Without `res` (decision debug) no cookie is minted: a visitor
   * without one is anonymous ('').
   */
  context(req: http.IncomingMessage, res: http.ServerResponse | undefined, viewerIp = ''): EventContext {
    let uid = cookies(req).adsrv_uid;
    if (!uid || !/^[A-Za-z0-9_-]{16,64}$/.test(uid)) {
      uid = res ? randomToken(16) : '';
      if (res) this.setCookie(res, `adsrv_uid=${uid}; Max-Age=31536000`);
    }
    const ip = viewerIp || clientIp(req);
    const where = this.geo.lookup(ip);
    return {
      country: where?.country,
      region: where?.region,
      city: where?.city,
      visitor: uid ? this.signer.visitor(uid) : '',
      ip,
      userAgent: String(req.headers['user-agent'] ?? ''),
      referrer: String(req.headers.referer ?? ''),
    };
  }

  /** What the request tells about its visitor, for the targeting rules. */
  facts(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, nowMs: number): DecisionRequest['visitor'] {
    if (data.needsGeo && !this.geo.loaded) void this.geo.load();
    const nowSeconds = Math.floor(nowMs / 1000);
    return {
      now: new Date(nowMs),
      geo: this.geo.lookup(r.ip || clientIp(req)),
      platform: platformOf(r.ua || String(req.headers['user-agent'] ?? '')),
      screenWidth: r.screenWidth,
      keywords: r.keywords,
      data: r.data,
      frequency: r.userFreq !== undefined ? liveEntries(r.userFreq, nowSeconds) : decodeFrequencyCookie(cookies(req)[FREQUENCY_COOKIE], this.secret, nowSeconds),
      // Accounts have no time zone setting yet: day-parting "in the account's zone" reads UTC.
      accountTimezone: 'UTC',
    };
  }

  /** Counts a view of the decision's placement in the visitor's frequency cookie, when its placement caps views. */
  countView(data: DecisionData, d: Decision, req: http.IncomingMessage, res: http.ServerResponse): void {
    if (d.test || !d.placement || !data.get(d.account, 'placement', d.placement)) return;
    const window = data.targetingOf(d as Candidate).frequencyWindowSeconds;
    if (!window) return;
    const now = Math.floor(Date.now() / 1000);
    const entries = decodeFrequencyCookie(cookies(req)[FREQUENCY_COOKIE], this.secret, now);
    this.setCookie(res, `${FREQUENCY_COOKIE}=${encodeFrequencyCookie(countView(entries, d.placement, window, now), this.secret)}; Max-Age=${window}`);
  }
}
