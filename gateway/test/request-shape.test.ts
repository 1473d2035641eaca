/**
 * Requests the API cannot take as sent: bracketed or repeated query parameters, JSON bodies with a
 * repeated member, and requests Node's HTTP parser refuses before the application sees them (oversized
 * request lines and headers, malformed lines). Every answer is the contract's JSON error and nothing
 * changes.
 */
import net from 'node:net';
import tls from 'node:tls';
import fs from 'node:fs';
import { expectError, gatewayPort, httpPort, newAccount, paramFor, request, type TestAccount } from './support/api';

let acct: TestAccount;
beforeAll(async () => {
  acct = await newAccount();
});

/** Sends raw bytes and returns the raw answer (the parser's own answers never reach a normal client). */
function raw(bytes: string, secure: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = secure
      ? tls.connect({ host: '127.0.0.1', port: gatewayPort(), servername: 'localhost', ca: fs.readFileSync(process.env.TEST_CA_FILE!) })
      : net.connect({ host: '127.0.0.1', port: httpPort() });
    let out = '';
    sock.on(secure ? 'secureConnect' : 'connect', () => sock.write(bytes));
    sock.on('data', (c) => (out += c));
    sock.on('end', () => resolve(out));
    sock.on('close', () => resolve(out));
    sock.on('error', (err) => (out ? resolve(out) : reject(err)));
    sock.setTimeout(10_000, () => sock.destroy());
  });
}

function jsonOf(answer: string): { status: number; body: any } {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

test('bracketed and repeated query parameters are refused with 400 naming the parameter', async () => {
  for (const [q, field] of [
    ['limit[]=1', 'limit'],
    ['limit[max]=5', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['fields[]=name', 'fields'],
  ]) {
    const res = await acct.test.get(`/v2/publishers?${q}`);
    expect(paramFor(expectError(res, 400, 'v2'), field)).toBeDefined();
  }
  expect(paramFor(expectError(await acct.test.get('/v1/publishers?offset[]=3'), 400, 'v1'), 'offset')).toBeDefined();
});

test('a JSON body with a repeated member is refused with 400 and creates nothing', async () => {
  const before = (await acct.test.get('/v2/publishers?limit=100')).body.data.length;
  for (const body of ['{"name":"x","name":"y"}', '{"name":"x","can_approve_ads":true,"\\u006eame":"y"}', '{"name":"x","parameters":{"a":1,"a":2}}']) {
    const res = await acct.test.request('POST', '/v2/publishers', undefined, { raw: body });
    const err = expectError(res, 400, 'v2');
    expect(err.message).toMatch(/given more than once/);
  }
  // The same name in different objects is fine.
  expect((await acct.test.request('POST', '/v1/bidders', undefined, { raw: '{"name":"B","bidder_code":"appnexus","parameters":{"name":"placement"}}' })).status).toBe(200);
  expect((await acct.test.get('/v2/publishers?limit=100')).body.data.length).toBe(before);
});

test('an unknown member with a long name is named in 64 characters, not echoed whole', async () => {
  const long = 'x'.repeat(20_000);
  // A resource create (the gateway's view) and an action body (the catalog's validation).
  const created = await acct.test.post('/v2/ad-items/custom-html', { name: 'n', width: 1, height: 1, custom_html: '<p>', [long]: 1 });
  const featured = await newAccount(['native-to-image']);
  const action = await featured.test.post('/v2/ad-items/native/1/to-image', { [long]: 1, [`${long}y`]: 2 });
  for (const res of [created, action]) {
    const body = expectError(res, 400, 'v2');
    const named = body.parameters.filter((p: { type: string }) => p.type === 'unknown_field');
    expect(named.length).toBeGreaterThanOrEqual(1);
    for (const p of named) {
      expect(p.field).toBe('x'.repeat(64));
      expect(p.message.length).toBeLessThan(200);
    }
    expect(res.text.length).toBeLessThan(2_000);
  }
  expect((await acct.test.get('/v2/ad-items/custom-html?limit=10')).body.data).toEqual([]);
});

describe("requests Node's parser refuses answer in the JSON error shape", () => {
  test.each([true, false])('oversized request line (fuzz seed 112435487: PUT /v1/zones/text/1\' with a 70,000-character parameter), secure=%s', async (secure) => {
    const answer = await raw(`PUT /v1/zones/text/1'?name=${'x'.repeat(70_000)} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic ${acct.testKey}\r\nContent-Length: 2\r\n\r\n{}`, secure);
    // A v1 path: its error carries `status` as v1 errors do (a fuzz seed found it missing: 306435254).
    expect(jsonOf(answer)).toEqual({ status: 431, body: { object: 'error', type: 'request_too_large_error', message: expect.any(String), status: 431, http_status: 431 } });
    expect(answer).toMatch(/Content-Type: application\/json/);
  });

  test('oversized headers', async () => {
    const answer = await raw(`GET /v2/publishers HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`, true);
    expect(jsonOf(answer).status).toBe(431);
  });

  test('a malformed request line', async () => {
    const answer = await raw('GARBAGE\r\n\r\n', true);
    expect(jsonOf(answer)).toMatchObject({ status: 400, body: { object: 'error', http_status: 400 } });
  });

  test('the gateway still serves afterwards', async () => {
    expect((await request('GET', '/v2/publishers', undefined, { headers: { Authorization: `Basic ${acct.testKey}` } })).status).toBe(200);
  });
});

test('boolean flags follow one rule everywhere: true/1, false/0, and a bare flag means true', async () => {
  const zone = await acct.test.post('/v2/zones/standard', { name: 'Flags', width: 300, height: 250 });
  const tags = (q: string) => acct.test.get(`/v2/zones/standard/${zone.body.id}/tags?type=js${q}`);
  const withFallback = (await tags('&fallback=true')).body;
  expect(JSON.stringify(withFallback)).toMatch(/noscript/);
  expect((await tags('&fallback')).body).toEqual(withFallback);
  expect((await tags('&fallback=1')).body).toEqual(withFallback);
  const without = (await tags('&fallback=0')).body;
  expect(JSON.stringify(without)).not.toMatch(/noscript/);
  expect((await tags('')).body).toEqual(without);
  expect(paramFor(expectError(await tags('&fallback=yes'), 400, 'v2'), 'fallback')).toBeDefined();
  // The same rule for unarchive's include flags.
  expect(paramFor(expectError(await acct.test.get(`/v2/zones/standard/archived/1/unarchive?include_placements=maybe`), 400, 'v2'), 'include_placements')).toBeDefined();
});
