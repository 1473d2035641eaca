/**
 * The gateway's edge in front of serving, as a hostile client would try it over raw HTTPS: a request
 * form that skips the proxy's hooks (`Expect: 100-continue`), dot segments that reach serving's
 * internal route, client headers that would speak for a tenant or spoof the host, oversized bodies,
 * and click destinations a header cannot carry raw. Also: a jsonr ranking never yields more
 * impressions than responses.
 */
import fs from 'node:fs';
import https from 'node:https';
import { gatewayPort, newAccount, type TestAccount } from './support/api';
import type { PlatformInfo } from './support/platform';
import { reportedEvents, within, zoneWithCampaign } from '../../services/serving/test/serving-fixtures';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** One HTTPS request exactly as given: the path as is, any headers, Expect honoured. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer, port = gatewayPort()): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', servername: 'localhost', port, method, path, headers, ca: fs.readFileSync(process.env.TEST_CA_FILE!), agent: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: any;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
      });
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    if (body === undefined) return void req.end();
    if (headers.Expect === '100-continue') req.on('continue', () => req.end(body));
    else req.end(body);
  });
}

const platform = (): PlatformInfo => JSON.parse(process.env.TEST_PLATFORM!);
let acct: TestAccount;
let fx: Awaited<ReturnType<typeof zoneWithCampaign>>;

/** The first live decision of the fixture's zone, once serving has the placement. */
async function liveDecision(headers: Record<string, string> = {}, extra = ''): Promise<Raw> {
  let last: Raw | undefined;
  await within(20_000, async () => {
    last = await raw('GET', `/serve/json?account=${acct.id}&zone=${fx.zone.id}&size=300x250${extra}`, headers);
    return last.body?.status === 'SUCCESS';
  }, 100);
  return last!;
}

beforeAll(async () => {
  acct = await newAccount();
  fx = await zoneWithCampaign(acct.live, [1], 'https://advertiser.example');
  expect((await acct.live.put(`/v2/ad-items/image/${fx.items[0].id}`, { location: 'https://example.com/päth/日本?q=✓' })).status).toBe(200);
}, 60_000);

test('POST /v2/adserve with Expect: 100-continue is answered with the key it carries', async () => {
  const body = JSON.stringify({ ID: acct.id, setID: fx.zone.id, type: 'json' });
  const res = await raw('POST', '/v2/adserve', { Authorization: `Basic ${acct.testKey}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), Expect: '100-continue' }, body);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ test: true });
});

test("dot segments never reach serving's internal route, even with its token and a tenant's headers", async () => {
  const spoof = { 'x-internal-token': process.env.INTERNAL_TOKEN!, 'x-account-id': String(acct.id), 'x-mode': 'live' };
  for (const path of ['/serve/../v2/adserve', '/serve/%2e%2e/v2/adserve', '/serve/.%2E/v2/adserve', '/adserve/../v2/adserve', '/serve/./json']) {
    const res = await raw('GET', `${path}?ID=${acct.id}&setID=${fx.zone.id}&type=json`, spoof);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ object: 'error', type: 'invalid_request_error', http_status: 400 });
    expect(res.body.message).toMatch(/segments/);
  }
  // Encoded slashes inside the parameters of the path form are no separators: they pass.
  const ua = encodeURIComponent('Mozilla/5.0 (X11; Linux x86_64)');
  expect((await raw('GET', `/adserve/;ID=${acct.id};setID=${fx.zone.id};type=json;ua=${ua}`)).status).toBe(200);
  // The same headers on a public path (with Expect, which skipped the proxy's header hook) change nothing.
  const res = await raw('POST', `/serve/json?account=${acct.id}&zone=${fx.zone.id}`, { ...spoof, Expect: '100-continue', 'Content-Length': '2' }, '{}');
  expect(res.status).toBe(501);
});

test('a /v2/adserve body over 64 KB answers 413 in the JSON error shape', async () => {
  const body = JSON.stringify({ ID: acct.id, setID: fx.zone.id, type: 'json', pad: 'x'.repeat(70 * 1024) });
  const res = await raw('POST', '/v2/adserve', { Authorization: `Basic ${acct.liveKey}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }, body);
  expect(res.status).toBe(413);
  expect(res.body).toMatchObject({ object: 'error', type: 'request_too_large_error', http_status: 413 });
  expect(res.body.message).toMatch(/64 KB/);
});

test("tracking URLs point at the configured serving origin, never at a client's X-Forwarded-Host", async () => {
  const res = await liveDecision({ 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'http', 'X-Forwarded-For': '203.0.113.9' });
  const p = res.body.placements.placement_1;
  for (const u of [p.redirect_url, p.accupixel_url, p.viewable_url]) expect(new URL(u).origin).toBe(new URL(process.env.SERVE_BASE_URL!).origin);
  expect(res.text).not.toContain('evil.example');
});

test('a click redirect percent-encodes a non-ASCII destination and drops an invalid extra', async () => {
  const first = await liveDecision();
  const click = new URL(first.body.placements.placement_1.redirect_url);
  const res = await raw('GET', `${click.pathname}${click.search}`);
  expect(res.status).toBe(302);
  expect(res.headers.location).toBe('https://example.com/p%C3%A4th/%E6%97%A5%E6%9C%AC?q=%E2%9C%93');
  const bad = await liveDecision({}, '&extra=%ff');
  const badClick = new URL(bad.body.placements.placement_1.redirect_url);
  const res2 = await raw('GET', `${badClick.pathname}${badClick.search}`);
  expect(res2.status).toBe(302);
  expect(res2.headers.location).toBe('https://example.com/p%C3%A4th/%E6%97%A5%E6%9C%AC?q=%E2%9C%93');
  // A good extra is still passed on.
  const good = await liveDecision({}, `&extra=${encodeURIComponent('utm_source=news')}`);
  const goodClick = new URL(good.body.placements.placement_1.redirect_url);
  expect((await raw('GET', `${goodClick.pathname}${goodClick.search}`)).headers.location).toBe('https://example.com/p%C3%A4th/%E6%97%A5%E6%9C%AC?q=%E2%9C%93&utm_source=news');
});

test('a jsonr ranking never yields more impressions than responses', async () => {
  const own = await newAccount();
  const two = await zoneWithCampaign(own.live, [1, 1, 1]);
  const path = `/adserve/;ID=${own.id};setID=${two.zone.id};type=jsonr`;
  await within(20_000, async () => Object.keys((await raw('GET', path)).body?.placements ?? {}).length === 3, 100);
  const before = (await reportedEvents(platform(), own.id)).length;
  let shown = 0;
  for (let i = 0; i < 5; i++) {
    const res = await raw('GET', path);
    // A client showing every ad of the ranking fires every impression URL.
    for (const p of Object.values<any>(res.body.placements)) {
      const u = new URL(p.accupixel_url);
      expect((await raw('GET', `${u.pathname}${u.search}`)).status).toBe(200);
      shown++;
    }
  }
  expect(shown).toBe(15);
  let events: { kind: number }[] = [];
  await within(20_000, async () => {
    events = (await reportedEvents(platform(), own.id)).slice(0);
    return events.filter((e) => e.kind === 2).length >= 15;
  }, 200);
  const responses = events.filter((e) => e.kind === 1).length;
  const impressions = events.filter((e) => e.kind === 2).length;
  expect(before).toBeGreaterThanOrEqual(0);
  expect(impressions).toBe(15);
  expect(responses).toBeGreaterThanOrEqual(impressions);
}, 60_000);



test('conversion pixels: a value counts only after a click, an order reference counts once, and one address is limited per minute', async () => {
  const own = await newAccount();
  const mine = await zoneWithCampaign(own.live, [1]);
  const item = mine.items[0].id;
  const conv = (q: string, headers: Record<string, string> = {}) => raw('GET', `/serve/conversion?account=${own.id}&type=image_ad_item&id=${item}${q}`, headers);
  const stored = async () => {
    const knexFactory = (await import('knex')).default;
    const { platformDatabaseUrl } = await import('./support/service-replica');
    const info = platform();
    const db = knexFactory({ client: 'pg', connection: platformDatabaseUrl(info), searchPath: [`${info.env.DB_SCHEMA_PREFIX ?? ''}reporting`], pool: { min: 0, max: 1 } });
    try {
      return await db('serving_events').where({ account_id: own.id, kind: 4 }).select('id', 'decision', db.raw('conversion_value::text as value'), 'conversion_reference as ref');
    } finally {
      await db.destroy();
    }
  };
  await within(20_000, async () => (await raw('GET', `/serve/json?account=${own.id}&zone=${mine.zone.id}`)).body?.status === 'SUCCESS', 100);
  // Without a click: counted for the tag's ad item, its value not credited.
  expect((await conv('&value=1000.00&ref=order-1')).status).toBe(200);
  // The same order's page reloaded: still one conversion.
  expect((await conv('&value=1000.00&ref=order-1')).status).toBe(200);
  // After a click in this browser: attributed to the click's decision, with its value.
  const d = await raw('GET', `/serve/json?account=${own.id}&zone=${mine.zone.id}`);
  const click = new URL(d.body.placements.placement_1.redirect_url);
  const clicked = await raw('GET', `${click.pathname}${click.search}`);
  const cookie = ([] as string[]).concat(clicked.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).find((c) => c.startsWith('adsrv_c='))!;
  expect((await conv('&value=25.50&ref=order-2', { Cookie: cookie })).status).toBe(200);
  let rows: { id: string; decision: string; value: string | null; ref: string }[] = [];
  await within(20_000, async () => (rows = await stored()).length >= 2, 200);
  await new Promise((r) => setTimeout(r, 500));
  rows = await stored();
  expect(rows).toHaveLength(2);
  const byRef = Object.fromEntries(rows.map((r) => [r.ref, r]));
  expect(byRef['order-1']).toMatchObject({ decision: '', value: null });
  expect(byRef['order-2'].decision).toBe(decisionOf(d.body.placements.placement_1.accupixel_url));
  expect(Number(byRef['order-2'].value)).toBe(25.5);
  // One address may record CONVERSION_LIMIT (30) a minute per account: the rest answer the pixel, unrecorded.
  for (let i = 0; i < 40; i++) expect((await conv(`&ref=burst-${i}`)).status).toBe(200);
  await new Promise((r) => setTimeout(r, 1500));
  expect((await stored()).filter((r) => r.ref.startsWith('burst-')).length).toBe(30 - 3);
}, 60_000);

function decisionOf(url: string): string {
  return JSON.parse(Buffer.from(decodeURIComponent(new URL(url).searchParams.get('t')!).split('.')[0], 'base64url').toString())[1];
}
