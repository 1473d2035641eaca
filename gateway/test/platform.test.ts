import { credentials, Metadata, status } from '@grpc/grpc-js';
import { GetRequest, ResourcesClient } from '../../proto/gen/adserver/resources/v1/resources';
import { resourcesApi } from '../../services/shared/grpc/resources-api';
import { as, expectError, newAccount, request } from './support/api';
import { startGatewayProcess } from './support/gateway-process';
import { admin, plainGet } from './support/platform';

describe('operator contract', () => {
  test('GET /healthz answers 200 {"status":"ok"} when every service answers', async () => {
    const res = await request('GET', '/healthz', undefined, { plainHttp: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', services: { accounts: 'ok', inventory: 'ok', selfserve: 'ok', reporting: 'ok' } });
  });

  test('the gateway and every service serve Prometheus metrics', async () => {
    await request('GET', '/v1/publishers', undefined, { headers: { Authorization: 'Basic nope' } });
    const gw = await plainGet(Number(process.env.METRICS_PORT), '/metrics');
    expect(gw.status).toBe(200);
    expect(gw.body).toContain('http_requests_total');
    expect(gw.body).toContain('grpc_client_handled_total');
    for (const s of ['ACCOUNTS', 'INVENTORY', 'SELFSERVE', 'REPORTING']) {
      const m = await plainGet(Number(process.env[`${s}_METRICS_PORT`]), '/metrics');
      expect(m.status).toBe(200);
      expect(m.body).toContain('process_cpu_seconds_total');
    }
  });

  test('admin create-account prints one JSON line with the account and a working test and live key', async () => {
    const { stdout } = await admin('create-account', '--name', 'CLI Co', '--email', 'ops@cli.example', '--features', 'native-to-image');
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]);
    expect(out).toMatchObject({ account: { id: expect.any(Number), name: 'CLI Co' }, keys: { test: expect.any(String), live: expect.any(String) } });
    expect(out.keys.test).not.toBe(out.keys.live);
    const made = await as(out.keys.test).post('/v1/publishers', { name: 'via CLI key' });
    expect(made.status).toBe(200);
    expectError(await as(out.keys.live).get(`/v1/publishers/${made.body.id}`), 404, 'v1');
  });

  test('admin refuses bad input with a JSON error and a non-zero exit', async () => {
    await expect(admin('create-account')).rejects.toMatchObject({ code: 1 });
    await expect(admin('create-account', '--name', 'X', '--features', 'teleport')).rejects.toMatchObject({ stderr: expect.stringContaining('Unknown feature') });
  });

  test('a deleted key stops working at once, though gateways cache keys', async () => {
    const acct = await newAccount();
    const { stdout } = await admin('create-key', '--account', String(acct.id), '--mode', 'test', '--name', 'Platform test');
    const { key, secret } = JSON.parse(stdout);
    expect((await as(secret).get('/v2/publishers')).status).toBe(200);
    const listed = JSON.parse((await admin('list-keys', '--account', String(acct.id))).stdout);
    expect(listed.keys.map((k: { id: number }) => k.id)).toContain(key.id);
    expect(JSON.stringify(listed)).not.toContain(secret);
    await admin('delete-key', '--account', String(acct.id), '--key', String(key.id));
    let status = 200;
    for (let i = 0; i < 20 && status === 200; i++) {
      status = (await as(secret).get('/v2/publishers')).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(403);
    expectError(await as(secret).get('/v1/publishers'), 401, 'v1');
  });
});

describe('transport security', () => {
  test('API requests over plain HTTP are refused with JSON: 403 in v2, 400 in v1', async () => {
    const acct = await newAccount();
    const v2 = await request('GET', '/v2/publishers', undefined, { plainHttp: true, headers: { Authorization: `Basic ${acct.testKey}` } });
    expectError(v2, 403, 'v2');
    const v1 = await request('POST', '/v1/publishers', { name: 'x' }, { plainHttp: true, headers: { Authorization: `Basic ${acct.testKey}` } });
    expectError(v1, 400, 'v1');
    expect((await acct.test.get('/v1/publishers')).body.data).toEqual([]);
  });

  test('X-Forwarded-Proto from an untrusted peer does not count as HTTPS', async () => {
    const acct = await newAccount();
    const res = await request('GET', '/v2/publishers', undefined, { plainHttp: true, headers: { Authorization: `Basic ${acct.testKey}`, 'X-Forwarded-Proto': 'https' } });
    expectError(res, 403, 'v2');
  });

  test('HTTPS responses carry HSTS and no CORS grant', async () => {
    const acct = await newAccount();
    const res = await acct.test.get('/v2/publishers', { headers: { Origin: 'https://evil.example' } });
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('services enforce tenant and mode themselves', () => {
  const md = (account: number, mode: string) => {
    const m = new Metadata();
    m.set('x-account-id', String(account));
    m.set('x-mode', mode);
    return m;
  };

  test('a call without the platform internal token is refused, whatever it claims', async () => {
    const acct = await newAccount();
    const raw = new ResourcesClient(process.env.ACCOUNTS_ADDR!, credentials.createInsecure());
    const get = (token?: string) =>
      new Promise((resolve, reject) => {
        const m = md(acct.id, 'test');
        if (token) m.set('x-internal-token', token);
        raw.get(GetRequest.fromPartial({ kind: 'publisher', id: 1 }), m, (err, res) => (err ? reject(err) : resolve(res)));
      });
    await expect(get()).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    await expect(get('not-the-token')).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    await expect(get(process.env.INTERNAL_TOKEN)).rejects.toMatchObject({ code: status.NOT_FOUND });
    raw.close();
  });

  test('a call without account and mode is refused', async () => {
    await expect(resourcesApi('accounts', new Metadata()).list({ kinds: ['publisher'] })).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
  });

  test('another account or mode gets NOT_FOUND straight from the service', async () => {
    const acct = await newAccount();
    const { body: p } = await acct.test.post('/v1/publishers', { name: 'Mine' });
    const get = (account: number, mode: string) => resourcesApi('accounts', md(account, mode)).get({ kind: 'publisher', id: p.id });
    await expect(get(acct.id, 'test')).resolves.toMatchObject({ id: p.id });
    await expect(get(acct.id, 'live')).rejects.toMatchObject({ code: status.NOT_FOUND });
    await expect(get(acct.id + 1000, 'test')).rejects.toMatchObject({ code: status.NOT_FOUND });
  });
});

describe('v2 endpoints that v2 renamed or dropped', () => {
  test('answer 410 with where to go instead', async () => {
    const acct = await newAccount();
    for (const [path, hint] of [
      ['/v2/banners', '/v2/ad-items'],
      ['/v2/banners/image/5', '/v2/ad-items'],
      ['/v2/zones/banner', '/v2/zones/standard'],
      ['/v2/campaigns/banner/3', '/v2/campaigns/standard'],
      ['/v2/vast-banners', '/v2/vast-ad-items'],
      ['/v2/zones/text/1/tags', '/v1/zones/text'],
    ]) {
      const res = await acct.test.get(path);
      expect(expectError(res, 410, 'v2').message).toContain(hint);
    }
    expectError(await acct.test.post('/v2/banners/image', { name: 'x' }), 410, 'v2');
    // The v1 paths are alive.
    expect((await acct.test.get('/v1/banners')).status).toBe(200);
  });
});

describe('behind a TLS-terminating proxy', () => {
  test('plain HTTP with X-Forwarded-Proto: https from a trusted proxy is served as HTTPS', async () => {
    const gw = await startGatewayProcess({ TRUSTED_PROXIES: '127.0.0.1' });
    try {
      const acct = await newAccount();
      const headers = { Authorization: `Basic ${acct.testKey}` };
      const proxied = await request('GET', '/v2/publishers', undefined, { plainHttp: true, port: gw.httpPort, headers: { ...headers, 'X-Forwarded-Proto': 'https' } });
      expect(proxied.status).toBe(200);
      expect(proxied.body).toMatchObject({ object: 'list' });
      const bare = await request('GET', '/v2/publishers', undefined, { plainHttp: true, port: gw.httpPort, headers });
      expectError(bare, 403, 'v2');
    } finally {
      await gw.stop();
    }
  });
});

describe('key resolution', () => {
  test('repeated unknown keys and malformed ones do not each reach the accounts service', async () => {
    // A gateway of this test's own, so its client metrics count only these requests.
    const gw = await startGatewayProcess();
    try {
      const lookups = async () => {
        const m = await plainGet(gw.metricsPort, '/metrics');
        return m.body
          .split('\n')
          .filter((l) => l.startsWith('grpc_client_handled_total') && l.includes('method="resolveKey"'))
          .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
      };
      const unknown = `test_${'u'.repeat(43)}${Date.now()}`;
      for (let i = 0; i < 10; i++) {
        expectError(await as(unknown).get('/v2/publishers', { port: gw.httpsPort }), 403, 'v2');
        expectError(await as('not a key at all').get('/v1/publishers', { port: gw.httpsPort }), 401, 'v1');
      }
      // One lookup for the well-formed unknown key; none for the malformed one.
      expect(await lookups()).toBe(1);
    } finally {
      await gw.stop();
    }
  });
});
