/**
 * The behaviour every catalog resource shares, tested the same way for each: create, retrieve, the
 * list envelope (paging, id filter, fields), partial update, delete, the documented errors, and
 * tenant and mode isolation. Resource test files add what is special about their resource.
 */
import { as, expectError, newAccount, paramFor, type Client, type TestAccount } from './api';

export interface CrudCase {
  version: 'v1' | 'v2';
  /** Collection path, e.g. /v1/publishers; a nested one names its parents as `:param` (filled from `setup`). */
  path: string;
  object: string;
  /**
   * Creates what every resource of the case needs (a nested collection's parents) once per account and
   * returns it; `:param`s of `path` are filled from its members.
   */
  setup?(api: Client): Promise<Record<string, any>>;
  /** A valid create body; may create what it references through `api`. */
  create(api: Client, n: number, setup: Record<string, any>): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** A valid partial update. */
  update: Record<string, unknown>;
  /** Read-only fields the service derives from others, which an update may change (a schedule's pacing). */
  derived?: string[];
  /** Bodies that must be refused with 400 naming `field`. */
  invalid: { body: Record<string, unknown>; field: string }[];
  /** Fields that must be given on create. */
  required: string[];
  /** Write-only fields never returned. */
  hidden?: string[];
  /** Operations this path serves (default all). */
  operations?: ('list' | 'create' | 'get' | 'update' | 'delete')[];
  /** Self URL prefix when it differs from `path`. */
  selfPath?: string;
  /** The list shows newest first (v1). Default: v1. */
  newestFirst?: boolean;
  /** Ids are shown as strings (self-serve cart items). */
  stringId?: boolean;
}

export function describeCrud(title: string, c: CrudCase): void {
  const ops = new Set(c.operations ?? ['list', 'create', 'get', 'update', 'delete']);
  const newestFirst = c.newestFirst ?? c.version === 'v1';
  const nested = c.path.includes('/:');

  describe(`${title} (${c.version} ${c.path})`, () => {
    let acct: TestAccount;
    let other: TestAccount;
    const created: any[] = [];
    let setup: Record<string, any> = {};
    // The concrete collection path (a nested one under the parents `setup` made).
    let path = c.path;
    let self = c.selfPath ?? c.path;
    const makeBody = (api: Client, n: number) => c.create(api, n, setup);

    beforeAll(async () => {
      acct = await newAccount(['native-to-image', 'self-serve']);
      other = await newAccount();
      if (c.setup) {
        setup = await c.setup(acct.test);
        path = c.path.replace(/:([A-Za-z_]+)/g, (_m, p: string) => String(setup[p]));
        self = c.selfPath ?? path;
      }
      for (let i = 0; i < 3; i++) {
        const res = await acct.test.post(path, await makeBody(acct.test, i));
        expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { object: c.object } });
        created.push(res.body);
      }
    });

    test('create returns the object with object, self and id, and hides write-only fields', () => {
      const o = created[0];
      expect(o.self).toBe(`${self}/${o.id}`);
      if (c.stringId) expect(o.id).toMatch(/^[1-9]\d*$/);
      else expect(Number.isInteger(o.id)).toBe(true);
      for (const h of c.hidden ?? []) expect(o).not.toHaveProperty(h);
    });

    test('retrieve returns what create returned', async () => {
      const res = await acct.test.get(`${path}/${created[0].id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created[0]);
    });

    if (ops.has('list')) {
      test('list returns the envelope with paging and the id filter', async () => {
        const all = await acct.test.get(`${path}?limit=2`);
        expect(all.status).toBe(200);
        expect(all.body).toMatchObject({ object: 'list', limit: 2, offset: 0, url: path, has_more: true });
        expect(all.body.data).toHaveLength(2);
        const ids = created.map((o) => o.id);
        const expectedFirst = newestFirst ? [ids[2], ids[1]] : [ids[0], ids[1]];
        expect(all.body.data.map((o: any) => o.id)).toEqual(expectedFirst);
        const next = await acct.test.get(`${path}?limit=2&offset=2`);
        expect(next.body).toMatchObject({ has_more: false, offset: 2 });
        expect(next.body.data).toHaveLength(1);
        const filtered = await acct.test.get(`${path}?id=${ids[0]},${ids[2]}`);
        expect(filtered.body.data.map((o: any) => o.id).sort()).toEqual([ids[0], ids[2]].sort());
      });

      test('list honours fields and keeps object, self and id', async () => {
        const field = Object.keys(c.update)[0] ?? c.required[0];
        const res = await acct.test.get(`${path}?fields=${field}&limit=1`);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body.data[0]).sort()).toEqual(['id', 'object', 'self', field].sort());
      });

      test('list parameters out of range are refused with 400', async () => {
        for (const q of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1', 'id=abc', 'fields=no_such_field', 'depth=6']) {
          const res = await acct.test.get(`${path}?${q}`);
          expectError(res, 400, c.version);
          expect(res.body.parameters?.[0]?.field).toBe(q.split('=')[0]);
        }
      });
    }

    (ops.has('update') ? test : test.skip)('update changes only the supplied fields', async () => {
      const before = created[1];
      const res = await acct.test.put(`${path}/${before.id}`, c.update);
      expect(res.status).toBe(200);
      const expected = { ...before, ...c.update };
      for (const h of c.hidden ?? []) delete expected[h];
      for (const k of Object.keys(expected)) {
        if (['last_modified', 'updated_at'].includes(k)) continue; // modification timestamps move on update
        if (c.derived?.includes(k)) continue;
        expect([k, res.body[k]]).toEqual([k, expected[k]]);
      }
      const again = await acct.test.get(`${path}/${before.id}`);
      expect(again.body).toEqual(res.body);
    });

    test('create without required fields is refused with 400 naming each', async () => {
      const body = await makeBody(acct.test, 9);
      for (const field of c.required) {
        const partial = { ...body };
        delete partial[field];
        const res = await acct.test.post(path, partial);
        const err = expectError(res, 400, c.version);
        expect(paramFor(err, field).type).toBe('missing_field');
      }
    });

    test('invalid values are refused with 400 naming the field, and change nothing', async () => {
      const count = async () => (ops.has('list') ? (await acct.test.get(`${path}?limit=100`)).body.data.length : undefined);
      const before = await count();
      for (const { body, field } of c.invalid) {
        const res = await acct.test.post(path, { ...(await makeBody(acct.test, 8)), ...body });
        const err = expectError(res, 400, c.version);
        paramFor(err, field);
        if (ops.has('update')) expectError(await acct.test.put(`${path}/${created[0].id}`, body), 400, c.version);
      }
      const unknown = await acct.test.post(path, { ...(await makeBody(acct.test, 7)), no_such_field: 1 });
      expect(paramFor(expectError(unknown, 400, c.version), 'no_such_field').type).toBe('unknown_field');
      expect(await count()).toBe(before);
      expect((await acct.test.get(`${path}/${created[0].id}`)).body).toEqual(created[0]);
    });

    test('malformed JSON and non-object bodies are refused with 400', async () => {
      const res = await acct.test.request('POST', c.path, undefined, { raw: '{"name": ' });
      expectError(res, 400, c.version);
      const arr = await acct.test.request('POST', c.path, [1, 2]);
      expectError(arr, 400, c.version);
    });

    test('missing ids answer 404', async () => {
      expectError(await acct.test.get(`${path}/999999999`), 404, c.version);
      expectError(await acct.test.get(`${path}/abc`), 404, c.version);
      if (ops.has('update')) expectError(await acct.test.put(`${path}/999999999`, c.update), 404, c.version);
      if (ops.has('delete')) expectError(await acct.test.del(`${path}/999999999`), 404, c.version);
    });

    test('the live key of the same account and another account see none of it', async () => {
      const id = created[0].id;
      for (const client of [acct.live, other.test, other.live]) {
        expectError(await client.get(`${path}/${id}`), 404, c.version);
        if (ops.has('update')) expectError(await client.put(`${path}/${id}`, c.update), 404, c.version);
        if (ops.has('delete')) expectError(await client.del(`${path}/${id}`), 404, c.version);
        if (!ops.has('list')) continue;
        const list = await client.get(`${path}?id=${id}`);
        if (nested) {
          // Their parents do not exist for them either.
          expectError(list, 404, c.version);
          continue;
        }
        expect(list.status).toBe(200);
        expect(list.body.data).toEqual([]);
      }
      expect((await acct.test.get(`${path}/${id}`)).status).toBe(200);
    });

    test('a missing or invalid key is refused', async () => {
      const code = c.version === 'v1' ? 401 : 403;
      expectError(await as('').get(path, { headers: { Authorization: '' } }), code, c.version);
      expectError(await as('test_not-a-real-key-00000000000000000000').get(c.path), code, c.version);
    });

    (ops.has('delete') ? test : test.skip)('delete removes it for good', async () => {
      const id = created[2].id;
      const res = await acct.test.del(`${path}/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(c.version === 'v1' ? { id, delete: true } : { id, deleted: true });
      expectError(await acct.test.get(`${path}/${id}`), 404, c.version);
      expectError(await acct.test.del(`${path}/${id}`), 404, c.version);
    });
  });
}
