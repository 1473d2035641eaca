import crypto from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { Mode, type Account, type ApiKey } from '../../proto/gen/adserver/accounts/v1/accounts';
import { envInt } from '../../services/shared/config';
import { accounts } from '../../services/shared/grpc/clients';
import { log } from '../../services/shared/log';
import { DEFAULT_LIMITS, type RateLimiter } from '../ratelimit';
import { COPY_JS, SETTINGS_CSS, confirmDeletePage, keysPage, messagePage, signInPage, type KeyRow } from './pages';
import { IDLE_SECONDS, type Session, type SessionStore } from './sessions';

const SESSION_COOKIE = 'settings_session';
/** The sign-in form's token before there is a session (double submit: cookie and hidden field). */
const SIGNIN_COOKIE = 'settings_signin';
const SIGN_IN_LIMIT = envInt('SIGNIN_LIMIT', 5);
/** Attempts for one email from every address together, per hour. */
const SIGN_IN_EMAIL_LIMIT = envInt('SIGNIN_EMAIL_LIMIT', 100);
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";


function cookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function setCookie(res: Response, name: string, value: string, maxAge: number): void {
  res.append('Set-Cookie', `${name}=${value}; Path=/settings; HttpOnly; Secure; SameSite=Strict; Max-Age=${maxAge}`);
}

const sameToken = (a: unknown, b: string) => typeof a === 'string' && a.length === b.length && crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));

function html(res: Response, status: number, body: string): void {
  res.status(status).setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.type('html').send(body);
}

const modeName = (m: Mode) => (m === Mode.MODE_TEST ? 'test' : 'live');

function keyRow(k: ApiKey): KeyRow {
  // Only the hash, the first characters and the last 4 are stored: enough to recognise a key.
  return { id: Number(k.id), mode: modeName(k.mode) as KeyRow['mode'], name: k.name, shown: `${k.prefix.slice(0, 8)}…${k.suffix}`, created: k.createdAt, lastUsed: k.lastUsedAt };
}

/**
 * The account's API settings page: sign-in with email and password (limited per email and per client
 * address), a server-side session in a Secure, HttpOnly, SameSite=Strict cookie scoped to /settings,
 * a synchronizer CSRF token on every form, and the account's keys: list, create (shown once), delete
 * (revoked at once on every gateway through the accounts revocation feed), with its rate-limit budgets
 * as the limiter counts them. HTTPS only.
 */
export function settingsRouter(sessions: SessionStore, limiter: RateLimiter): Router {
  const router = Router();
  router.use('/settings', (req, res, next) => {
    if (!req.secure) return html(res, 403, messagePage('HTTPS required', 'The API settings page is served over HTTPS only.'));
    next();
  });
  router.get('/settings/api/assets/settings.css', (_req, res) => void res.type('text/css').send(SETTINGS_CSS));
  router.get('/settings/api/assets/copy.js', (_req, res) => void res.type('application/javascript').send(COPY_JS));
  router.use('/settings', express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }));

  const session = async (req: Request): Promise<Session | undefined> => sessions.touch(cookies(req)[SESSION_COOKIE]);

  const showSignIn = (res: Response, status: number, opts: { email?: string; error?: string } = {}) => {
    const token = crypto.randomBytes(24).toString('base64url');
    setCookie(res, SIGNIN_COOKIE, token, 3600);
    html(res, status, signInPage({ csrf: token, ...opts }));
  };

  const showKeys = async (res: Response, s: Session, status = 200, extra: Partial<Parameters<typeof keysPage>[0]> = {}) => {
    const [account, keys] = await Promise.all([accounts.getAccount({ id: s.accountId }, { timeoutMs: 5000 }), accounts.listApiKeys({ accountId: s.accountId }, { timeoutMs: 5000 })]);
    const budgets = [];
    for (const bucket of ['general', 'reporting'] as const) {
      const own = bucket === 'general' ? account.generalLimit : account.reportingLimit;
      budgets.push({ name: bucket === 'general' ? 'General requests' : 'Reporting requests', limit: own || DEFAULT_LIMITS[bucket], used: await limiter.used(bucket, s.accountId) });
    }
    html(res, status, keysPage({ account, csrf: s.csrfToken, keys: keys.keys.map(keyRow), budgets, ...extra }));
  };

  /** Runs `handler` for a signed-in request whose form carries the session's CSRF token; 403 otherwise. */
  const withForm = (handler: (req: Request, res: Response, s: Session) => Promise<void>) => async (req: Request, res: Response) => {
    const s = await session(req);
    if (!s) return showSignIn(res, 403, { error: 'Your session has ended. Sign in again.' });
    if (!sameToken(req.body?._csrf, s.csrfToken)) {
      return html(res, 403, messagePage('Form refused', 'This form did not come from your current session of this page (its security token is missing or wrong). Nothing was changed; go back, reload the page and try again.'));
    }
    await handler(req, res, s);
  };

  router.get('/settings/api', async (req, res) => {
    const s = await session(req);
    if (!s) return showSignIn(res, 200);
    const notice = req.query.deleted === '1' ? 'The key was deleted. Requests with it are refused.' : undefined;
    await showKeys(res, s, 200, { notice });
  });

  router.post('/settings/api/sign-in', async (req, res) => {
    const email = String(req.body?.email ?? '').trim().slice(0, 255);
    const password = String(req.body?.password ?? '');
    const token = cookies(req)[SIGNIN_COOKIE];
    if (!token || !sameToken(req.body?._csrf, token)) {
      return html(res, 403, messagePage('Form refused', 'This sign-in form did not come from this site (its security token is missing or wrong). Reload the sign-in page and try again.'));
    }
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    // Per address, and per address and email: one address guessing cannot lock an owner out elsewhere.
    // Per email alone only a much higher ceiling over an hour, against guessing spread over many addresses.
    const emailHash = crypto.createHash('sha256').update(email.toLowerCase()).digest('hex');
    const checks = [
      await limiter.hit('signin-address', address, SIGN_IN_LIMIT),
      await limiter.hit('signin-pair', `${address}:${emailHash}`, SIGN_IN_LIMIT),
      await limiter.hit('signin-email', emailHash, SIGN_IN_EMAIL_LIMIT, 3600_000),
    ];
    const refused = checks.filter((c) => !c.allowed);
    if (refused.length) {
      const wait = Math.max(1, Math.ceil((Math.max(...refused.map((c) => c.resetAt)) - Date.now()) / 1000));
      res.setHeader('Retry-After', String(wait));
      return showSignIn(res, 429, {
        email,
        error: `Too many sign-in attempts: at most ${SIGN_IN_LIMIT} a minute from one address (and for one email from it), ${SIGN_IN_EMAIL_LIMIT} an hour for one email. Try again in ${wait} seconds.`,
      });
    }
    let account: Account;
    try {
      account = await accounts.signIn({ email, password }, { timeoutMs: 5000 });
    } catch (err) {
      if ((err as { code?: number }).code === 5) return showSignIn(res, 401, { email, error: 'The email or the password is wrong.' });
      throw err;
    }
    const { id } = await sessions.create(Number(account.id));
    setCookie(res, SESSION_COOKIE, id, IDLE_SECONDS);
    setCookie(res, SIGNIN_COOKIE, '', 0);
    log.info('settings sign-in', { account_id: account.id });
    res.redirect(303, '/settings/api');
  });

  router.post('/settings/api/sign-out', withForm(async (_req, res, s) => {
    await sessions.endAll(s.accountId);
    setCookie(res, SESSION_COOKIE, '', 0);
    res.redirect(303, '/settings/api');
  }));

  router.post('/settings/api/keys', withForm(async (req, res, s) => {
    const name = String(req.body?.name ?? '').trim();
    const mode = req.body?.mode === 'live' ? Mode.MODE_LIVE : req.body?.mode === 'test' ? Mode.MODE_TEST : undefined;
    if (!name || name.length > 100 || mode === undefined) {
      return showKeys(res, s, 400, { error: !name || name.length > 100 ? 'Give the key a name of 1 to 100 characters.' : 'Choose the mode: test or live.' });
    }
    const out = await accounts.createApiKey({ accountId: s.accountId, mode, name }, { timeoutMs: 5000 });
    // The key's record comes with its secret; without it there is nothing to show but the secret's name.
    await showKeys(res, s, 200, { created: { name: out.key?.name ?? name, mode: modeName(out.key?.mode ?? mode), secret: out.secret } });
  }));

  /** The account's own key by the id in the path: another account's id is simply not found. */
  const ownKey = async (s: Session, raw: string): Promise<KeyRow | undefined> => {
    if (!/^[1-9]\d{0,15}$/.test(raw)) return undefined;
    const { keys } = await accounts.listApiKeys({ accountId: s.accountId }, { timeoutMs: 5000 });
    const k = keys.find((x) => Number(x.id) === Number(raw));
    return k && keyRow(k);
  };

  router.get('/settings/api/keys/:id/delete', async (req, res) => {
    const s = await session(req);
    if (!s) return showSignIn(res, 403, { error: 'Your session has ended. Sign in again.' });
    const key = await ownKey(s, req.params.id as string);
    if (!key) return html(res, 404, messagePage('No such key', 'This account has no key with that id.'));
    html(res, 200, confirmDeletePage({ csrf: s.csrfToken, key }));
  });

  router.post('/settings/api/keys/:id/delete', withForm(async (req, res, s) => {
    const key = await ownKey(s, req.params.id as string);
    if (!key) return html(res, 404, messagePage('No such key', 'This account has no key with that id. Nothing was deleted.'));
    // Accounts checks the account too, and broadcasts the revocation to every gateway.
    await accounts.deleteApiKey({ accountId: s.accountId, keyId: key.id }, { timeoutMs: 5000 });
    res.redirect(303, '/settings/api?deleted=1');
  }));

  router.use('/settings', (_req, res) => html(res, 404, messagePage('Not found', 'There is no such settings page.')));
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  router.use('/settings', (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const unavailable = (err as { code?: number }).code === 14 || (err as { code?: number }).code === 4;
    if (!unavailable) log.error('settings page failed', { error: (err as Error).message });
    html(res, unavailable ? 503 : 500, messagePage('Try again shortly', 'The settings page cannot reach the account service right now. Nothing was changed.'));
  });
  return router;
}
