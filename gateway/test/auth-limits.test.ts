/**
 * What a hostile client does to authentication, over raw HTTPS from several loopback addresses
 * (127.0.0.x, so each is a client address of its own) against gateways of this file's own:
 * - a flood of well-formed unknown keys ends in 429s for that address, while a valid key from another
 *   address, or one the gateway already knows, keeps answering;
 * - failed sign-ins from one address cannot lock the owner out of signing in from another, while a
 *   per-email ceiling still holds across addresses;
 * - sign-out everywhere during a Redis outage still ends the sessions Redis held, and the per-account
 *   session index is renewed by use.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import { startGatewayProcess, type GatewayProcess } from './support/gateway-process';
import { redisServerAvailable, startOwnRedis, type OwnRedis } from './support/own-redis';
import { admin } from './support/platform';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function raw(port: number, method: string, path: string, opts: { from?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const headers = { ...opts.headers, ...(opts.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(opts.body)) } : {}) };
    const req = https.request(
      { host: '127.0.0.1', servername: 'localhost', port, method, path, headers, localAddress: opts.from ?? '127.0.0.1', ca: fs.readFileSync(process.env.TEST_CA_FILE!), agent: false, timeout: 30_000 },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    req.end(opts.body);
  });
}

const run = async (...args: string[]) => JSON.parse((await admin(...args)).stdout);
const stamp = `${Date.now()}-${process.pid}`;
const unknownKey = () => `live_${crypto.randomBytes(32).toString('base64url')}`;
const cookieOf = (res: Raw, name: string) => ([] as string[]).concat(res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).find((c) => c.startsWith(`${name}=`));

/** Signs in through the form, from `from`; the session cookie, or the refusal's status. */
async function signIn(port: number, email: string, password: string, from = '127.0.0.1'): Promise<{ status: number; cookie?: string }> {
  const page = await raw(port, 'GET', '/settings/api', { from });
  const pre = cookieOf(page, 'settings_signin')!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
  const res = await raw(port, 'POST', '/settings/api/sign-in', {
    from,
    headers: { Cookie: pre, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  return { status: res.status, cookie: cookieOf(res, 'settings_session') };
}

/** Whether the cookie opens the keys page (its new-key form), not the sign-in form. */
const signedIn = async (port: number, cookie: string) => (await raw(port, 'GET', '/settings/api', { headers: { Cookie: cookie } })).text.includes('id="key-mode"');

test('a flood of unknown keys from one address ends in 429; known keys and other addresses are untouched', async () => {
  const gw = await startGatewayProcess({ AUTH_FAILURE_LIMIT: '20', REDIS_KEY_PREFIX: `adserver-test:auth-${stamp}:` });
  try {
    const owner = await run('create-account', '--name', `Flooded ${stamp}`);
    const known = await raw(gw.httpsPort, 'GET', '/v2/publishers', { headers: { Authorization: `Basic ${owner.keys.live}` } });
    expect(known.status).toBe(200);
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) answers.push((await raw(gw.httpsPort, 'GET', '/v2/publishers', { headers: { Authorization: `Basic ${unknownKey()}` } })).status);
    expect(answers.slice(0, 20)).toEqual(Array(20).fill(403));
    expect(answers.slice(20)).toEqual(Array(10).fill(429));
    const refused = await raw(gw.httpsPort, 'GET', '/v2/publishers', { headers: { Authorization: `Basic ${unknownKey()}` } });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(JSON.parse(refused.text)).toMatchObject({ object: 'error', type: 'rate_limit_error', http_status: 429 });
    // The key this gateway already knows still answers from the flooding address.
    expect((await raw(gw.httpsPort, 'GET', '/v2/publishers', { headers: { Authorization: `Basic ${owner.keys.live}` } })).status).toBe(200);
    // Another address is not affected: its first use of a key is looked up as usual.
    expect((await raw(gw.httpsPort, 'GET', '/v2/publishers', { from: '127.0.0.2', headers: { Authorization: `Basic ${owner.keys.test}` } })).status).toBe(200);
    expect((await raw(gw.httpsPort, 'GET', '/v2/publishers', { from: '127.0.0.2', headers: { Authorization: `Basic ${unknownKey()}` } })).status).toBe(403);
  } finally {
    await gw.stop();
  }
}, 90_000);

test('failed sign-ins from one address do not lock the owner out elsewhere; the per-email ceiling holds across addresses', async () => {
  const gw = await startGatewayProcess({ SIGNIN_LIMIT: '3', SIGNIN_EMAIL_LIMIT: '6', REDIS_KEY_PREFIX: `adserver-test:signin-pair-${stamp}:` });
  try {
    const email = `owner-${stamp}@limits.example`;
    const password = `pw-owner-${stamp}`;
    await run('create-account', '--name', `Locked ${stamp}`, '--email', email, '--password', password);
    for (let i = 0; i < 3; i++) expect((await signIn(gw.httpsPort, email, 'wrong-password', '127.0.0.3')).status).toBe(401);
    expect((await signIn(gw.httpsPort, email, password, '127.0.0.3')).status).toBe(429);
    // The owner, elsewhere, signs in.
    const owner = await signIn(gw.httpsPort, email, password, '127.0.0.4');
    expect(owner.status).toBe(303);
    expect(await signedIn(gw.httpsPort, owner.cookie!)).toBe(true);
    // Six attempts for the email in all (4 from .3, 1 from .4, 1 from .5): the seventh is refused anywhere.
    expect((await signIn(gw.httpsPort, email, 'wrong-password', '127.0.0.5')).status).toBe(401);
    expect((await signIn(gw.httpsPort, email, password, '127.0.0.6')).status).toBe(429);
  } finally {
    await gw.stop();
  }
}, 90_000);

const withRedis = redisServerAvailable() ? test : test.skip;

describe('sessions in Redis', () => {
  let redis: OwnRedis;
  let gw: GatewayProcess;
  const prefix = `adserver-test:sessions-${stamp}:`;
  const cli = (...args: string[]) => redis.cli(...args);

  beforeAll(async () => {
    if (!redisServerAvailable()) return;
    // A Redis of this test's own, so that its outage touches nothing else.
    redis = await startOwnRedis();
    gw = await startGatewayProcess({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    redis?.stop();
  });

  withRedis('sign-out everywhere during a Redis outage ends the sessions Redis held once it is back', async () => {
    const email = `outage-${stamp}@limits.example`;
    const password = `pw-outage-${stamp}`;
    await run('create-account', '--name', `Outage ${stamp}`, '--email', email, '--password', password);
    const before = await signIn(gw.httpsPort, email, password, '127.0.0.7');
    expect(before.status).toBe(303);
    expect(await signedIn(gw.httpsPort, before.cookie!)).toBe(true);
    expect(cli('--scan', '--pattern', `${prefix}settings-session:*`)).not.toBe('');

    let during: { status: number; cookie?: string } = { status: 0 };
    redis.proc.kill('SIGSTOP');
    try {
      // During the outage: a session in accounts' database, and sign-out everywhere from it.
      during = await signIn(gw.httpsPort, email, password, '127.0.0.8');
      expect(during.status).toBe(303);
      const page = await raw(gw.httpsPort, 'GET', '/settings/api', { headers: { Cookie: during.cookie! } });
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
      const out = await raw(gw.httpsPort, 'POST', '/settings/api/sign-out', {
        headers: { Cookie: during.cookie!, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf }).toString(),
      });
      expect(out.status).toBeLessThan(400);
      expect(await signedIn(gw.httpsPort, during.cookie!)).toBe(false);
    } finally {
      redis.proc.kill('SIGCONT');
    }
    // Redis is back with the old session still in it: it is refused, and removed.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await signedIn(gw.httpsPort, before.cookie!)).toBe(false);
    const hashOf = (cookie: string) => crypto.createHash('sha256').update(cookie.split('=')[1]).digest('hex');
    expect(cli('exists', `${prefix}settings-session:${hashOf(before.cookie!)}`)).toBe('0');
    // A write Redis took during the outage but carried out only afterwards (the timed-out sign-in's)
    // holds an ended session too: it is refused as well.
    expect(await signedIn(gw.httpsPort, during.cookie!)).toBe(false);
  }, 90_000);

  withRedis("using a session renews the account's session index for as long as the session", async () => {
    const email = `index-${stamp}@limits.example`;
    const password = `pw-index-${stamp}`;
    const made = await run('create-account', '--name', `Index ${stamp}`, '--email', email, '--password', password);
    const s = await signIn(gw.httpsPort, email, password, '127.0.0.9');
    expect(s.status).toBe(303);
    const index = `${prefix}settings-sessions-of:${made.account.id}`;
    expect(Number(cli('ttl', index))).toBeLessThanOrEqual(12 * 3600);
    // An index close to expiring (as an old one would be) is renewed by the next use of a session.
    cli('expire', index, '30');
    expect(await signedIn(gw.httpsPort, s.cookie!)).toBe(true);
    expect(Number(cli('ttl', index))).toBeGreaterThan(12 * 3600 - 60);
  }, 60_000);
});
