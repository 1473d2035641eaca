/**
 * The OpenAPI documents at /v1/openapi.json and /v2/openapi.json: valid OpenAPI 3.1 (checked by an
 * independent validator from npm), served without a key over HTTPS only, and in step with the routes
 * the gateway mounts, both ways. The route list is read from the gateway's own router, so routes other
 * engineers add are covered as soon as they are mounted.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import '../serving-proxy';
import { mountedRoutes, openApiPath } from '../api/openapi';
import { proxiedRouteDocs } from '../api/route-docs';
import { resourceRouteTable } from '../api/resources';
import { newAccount, request } from './support/api';
import { ROOT } from './support/platform';

const execFileAsync = promisify(execFile);

type Doc = { openapi: string; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any>; parameters: Record<string, any> } };
const docs: Record<'v1' | 'v2', Doc> = {} as never;

beforeAll(async () => {
  for (const version of ['v1', 'v2'] as const) {
    const res = await request('GET', `/${version}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    docs[version] = res.body;
  }
});

/** The validator is an ES module; it runs in a Node process of its own. */
async function validate(doc: Doc): Promise<{ valid: boolean; errors?: unknown }> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-')), 'doc.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  const script = `import { Validator } from '@seriousme/openapi-schema-validator';
const v = new Validator();
const r = await v.validate(${JSON.stringify(file)});
process.stdout.write(JSON.stringify({ valid: r.valid, version: v.version, errors: r.errors }));`;
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
  return JSON.parse(stdout);
}

test.each(['v1', 'v2'] as const)('the %s document is valid OpenAPI 3.1', async (version) => {
  expect(docs[version].openapi).toBe('3.1.0');
  const result = await validate(docs[version]);
  expect(result).toMatchObject({ valid: true, version: '3.1' });
});

test('every mounted route is in the documents, and every documented operation is mounted', () => {
  const mounted = new Set(mountedRoutes(resourceRouteTable()).map((r) => `${r.method.toUpperCase()} ${r.path}`));
  const documented = new Set<string>();
  for (const doc of Object.values(docs)) {
    for (const [p, item] of Object.entries(doc.paths)) for (const m of Object.keys(item)) documented.add(`${m.toUpperCase()} ${p}`);
  }
  expect(mounted.size).toBeGreaterThan(100);
  expect([...mounted].filter((r) => !documented.has(r))).toEqual([]);
  const proxied = new Set(proxiedRouteDocs().map((d) => `${d.method.toUpperCase()} ${openApiPath(d.path)}`));
  expect([...documented].filter((r) => !mounted.has(r) && !proxied.has(r))).toEqual([]);
});

test('routes served by proxies outside the route table, described next to the proxy, are really served', async () => {
  const proxied = proxiedRouteDocs();
  expect(proxied.map((d) => `${d.method} ${d.path}`)).toEqual(expect.arrayContaining(['get /v2/adserve']));
  const account = await newAccount();
  for (const d of proxied) {
    const res = await account.test.request(d.method.toUpperCase(), openApiPath(d.path), d.method === 'get' ? undefined : {});
    expect({ route: `${d.method} ${d.path}`, status: res.status }).not.toMatchObject({ status: 404 });
  }
  // Decision debug, and its programmatic auction section, are described with the parameter.
  const debug = docs.v2.paths['/v2/adserve'].get.parameters.find((p: { name?: string }) => p.name === 'debug');
  expect(debug).toMatchObject({ in: 'query', schema: { type: 'boolean' } });
  expect(debug.description).toMatch(/`auction`.*no win, loss or billing notice/);
});

test('operations carry the catalog descriptions: fields, enums, required, defaults, errors, list envelope', () => {
  const v2 = docs.v2;
  const create = v2.components.schemas.publisher_create;
  expect(create.required).toContain('name');
  expect(create.properties.email).toMatchObject({ format: 'email' });
  const list = v2.paths['/v2/publishers'].get;
  // The list and shape parameters are named by reference to components.parameters.
  const named = list.parameters.map((p: { name?: string; $ref?: string }) => p.name ?? v2.components.parameters[p.$ref!.split('/').pop()!].name);
  expect(named).toEqual(expect.arrayContaining(['limit', 'offset', 'fields', 'expand']));
  expect(list.responses['200'].content['application/json'].schema.properties.object).toMatchObject({ const: 'list' });
  expect(Object.keys(list.responses)).toEqual(expect.arrayContaining(['400', '403', '429']));
  // v1 answers a bad key with 401 and its errors carry `status`.
  expect(Object.keys(docs.v1.paths['/v1/publishers'].get.responses)).toContain('401');
  expect(docs.v1.components.schemas.error.required).toContain('status');
  // A route beyond CRUD, described next to its handler.
  const addFunds = v2.paths['/v2/self-serve/customers/{id}/add-funds'].put;
  expect(addFunds.requestBody.content['application/json'].schema).toMatchObject({ required: ['amount'], properties: { amount: { type: 'number', minimum: 0.01 } } });
  // Every $ref resolves.
  for (const doc of Object.values(docs)) {
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const r of new Set(refs)) expect(doc.components.schemas).toHaveProperty([r.slice(22, -1)]);
  }
});

test('the documents need no key but are not served over plain HTTP', async () => {
  const plain = await request('GET', '/v2/openapi.json', undefined, { plainHttp: true });
  expect(plain.status).toBe(403);
  expect(plain.body).toMatchObject({ object: 'error', type: 'https_required_error' });
  const docsPage = await request('GET', '/docs', undefined, { headers: { Accept: 'text/html' } });
  expect(docsPage.status).toBe(200);
  expect(docsPage.headers['content-security-policy']).toMatch(/default-src 'self'/);
});
