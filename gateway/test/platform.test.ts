import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { credentials, Metadata, status } from '@grpc/grpc-js';
import { GetRequest, ResourcesClient } from '../../proto/gen/adserver/resources/v1/resources';
import { resourcesApi } from '../../services/shared/grpc/resources-api';
import { as, expectError, newAccount, request } from './support/api';
import { startGatewayProcess } from './support/gateway-process';
import { admin, freePort, plainGet, ROOT } from './support/platform';
import { platformDatabaseUrl } from './support/service-replica';
import { AccountsClient } from '../../proto/gen/adserver/accounts/v1/accounts';
import { HealthClient } from '../../proto/gen/grpc/health/v1/health';
import { withInternalToken } from '../../services/shared/internal-token';

describe('operator contract', () => {
  test('GET /healthz answers 200 {"status":"ok"} when every service answers', async () => {
    const res = await request('GET', '/healthz', undefined, { plainHttp: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', services: { accounts: 'ok', inventory: 'ok', selfserve: 'ok', reporting: 'ok' } });
  });

  test('the gateway and every service serve Prometheus metrics', async () => {
    await request('GET', '/v1/publishers', undefined, { headers: { Authorization: 'Basic nope' } });
    // /v2/adserve is answered by the serving proxy, not an express route: it is labelled by its path all the same.
    const acct = await newAccount();
    expect((await acct.test.get(`/v2/adserve?ID=${acct.id}&setID=1&type=json`)).status).toBe(200);
    const gw = await plainGet(Number(process.env.METRICS_PORT), '/metrics');
    expect(gw.status).toBe(200);
    expect(gw.body).toContain('http_requests_total');
    expect(gw.body).toMatch(/http_requests_total\{route="\/v2\/adserve",method="GET",code="200",version="v2"\} [1-9]/);
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

describe('a missing or malformed key', () => {
  test('is refused before express with the common headers, the JSON error of its version, and no body to HEAD', async () => {
    for (const [version, status] of [['v1', 401], ['v2', 403]] as const) {
      for (const res of [await as('not a key at all').get(`/${version}/publishers`), await request('GET', `/${version}/publishers`)]) {
        expectError(res, status, version);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      }
    }
    const head = await request('HEAD', '/v2/publishers', undefined, { headers: { Authorization: 'Basic nope' } });
    expect(head.status).toBe(403);
    expect(head.text).toBe('');
  });
});

describe('settings from the environment', () => {
  test('an invalid value stops the process at start with a message naming the variable', async () => {
    for (const [name, value] of [
      ['GRPC_DEADLINE_MS', 'soon'],
      ['RATE_LIMIT_GENERAL', '-1'],
      ['KEY_CACHE_TTL_MS', '1.5'],
      ['LOG_LEVEL', 'loud'],
      ['OTEL_SDK_DISABLED', 'yes'],
    ]) {
      const failure = await startGatewayProcess({ [name]: value }).then(
        async (gw) => {
          await gw.stop();
          return 'started';
        },
        (e: Error) => e.message,
      );
      expect(failure).toContain(name);
      expect(failure).toContain(value);
    }
  }, 60_000);
});

describe('stopping', () => {
  test('an idle gateway stops at once on SIGTERM (the drain is only for requests in flight)', async () => {
    // Telemetry on, as in production: its shutdown is part of stopping.
    const gw = await startGatewayProcess({ OTEL_SDK_DISABLED: 'false' });
    // Idle, but with a keep-alive connection open and health watches running, as in production.
    expect((await request('GET', '/healthz', undefined, { port: gw.httpsPort })).status).toBe(200);
    // Connections that never sent a request: a TCP port probe, a TLS handshake begun and left hanging.
    const silent = [gw.httpsPort, gw.httpPort].map((p) => net.connect(p, '127.0.0.1'));
    const handshake = tls.connect({ port: gw.httpsPort, host: '127.0.0.1', rejectUnauthorized: false });
    await new Promise((r) => handshake.once('secureConnect', r));
    for (const s of [...silent, handshake]) s.on('error', () => undefined);
    const started = Date.now();
    expect(await gw.stop()).toBe(0);
    const ms = Date.now() - started;
    process.stdout.write(`stopping: idle gateway exited ${ms} ms after SIGTERM\n`);
    expect(ms).toBeLessThan(1_500);
    for (const s of [...silent, handshake]) s.destroy();
  });

  test('an idle service process stops at once on SIGTERM, though clients hold watch streams open', async () => {
    const grpcPort = await freePort();
    let out = '';
    const proc = spawn(process.execPath, [path.join(ROOT, 'dist/services/accounts/main.js')], {
      env: {
        ...process.env,
        // The platform's database, embedded or not (on the embedded default only the launcher's children know its URL).
        DATABASE_URL: platformDatabaseUrl(JSON.parse(process.env.TEST_PLATFORM!)),
        GRPC_PORT: String(grpcPort),
        METRICS_PORT: String(await freePort()),
        OTEL_SDK_DISABLED: 'false',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (c) => (out += c));
    proc.stderr!.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    try {
      const until = Date.now() + 30_000;
      while (!out.includes('"ready"')) {
        if (proc.exitCode !== null || Date.now() > until) throw new Error(`accounts did not start:\n${out.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // What a gateway holds open on every accounts replica: the key-revocation watch and a health watch.
      const accounts = new AccountsClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
      const health = new HealthClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
      const watch = accounts.watchKeyRevocations({}, withInternalToken(new Metadata()));
      const hw = health.watch({ service: '' });
      for (const s of [watch, hw]) s.on('error', () => undefined);
      await new Promise((r) => hw.once('data', r));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
      const ms = Date.now() - started;
      process.stdout.write(`stopping: idle accounts process exited ${ms} ms after SIGTERM\n`);
      expect(ms).toBeLessThan(1_500);
      accounts.close();
      health.close();
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  }, 60_000);
});

describe('defaults on read', () => {
  // Rows are edited directly in Postgres, so this needs DATABASE_URL (the embedded default's server is the launcher's).
  (process.env.DATABASE_URL ? test : test.skip)('a field added to a kind with a default reads as that default on rows stored before it existed', async () => {
    const acct = await newAccount();
    const made = (await acct.test.post('/v1/publishers', { name: 'Old row', can_approve_ads: true })).body;
    const { default: knex } = await import('knex');
    const db = knex({ client: 'pg', connection: process.env.DATABASE_URL });
    try {
      const schema = process.env.DB_SCHEMA ?? `${process.env.DB_SCHEMA_PREFIX ?? ''}accounts`;
      // As if the row had been stored before can_view_wordpress_key (default true) and default_payout_percent existed.
      const n = await db.withSchema(schema).table('resources').where({ id: made.id }).update({ attributes: db.raw(`attributes - 'can_view_wordpress_key' - 'default_payout_percent'`) });
      expect(n).toBe(1);
    } finally {
      await db.destroy();
    }
    const read = (await acct.test.get(`/v2/publishers/${made.id}`)).body;
    expect(read).toMatchObject({ name: 'Old row', can_approve_ads: true, can_view_wordpress_key: true, default_payout_percent: null });
    // An update of another field keeps the default, and an explicit value still wins.
    expect((await acct.test.put(`/v2/publishers/${made.id}`, { name: 'Renamed' })).body.can_view_wordpress_key).toBe(true);
    expect((await acct.test.put(`/v2/publishers/${made.id}`, { can_view_wordpress_key: false })).body.can_view_wordpress_key).toBe(false);
  });
});
