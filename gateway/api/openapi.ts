import { GROUPS, KINDS, getKind, type ApiVersion, type FieldSpec, type Operation } from '../../services/shared/catalog';
import { MAX_DEPTH, MAX_LIMIT, DEFAULT_LIMIT } from './params';
import { resourceRouteTable } from './resources';
import type { RouteTable } from './route-table';
import { multipartBodyDocs, routeDocs, type JsonSchema, type RouteDoc } from './route-docs';
import { objectNameOf, viewOf, type View } from './views';

/**
 * The OpenAPI 3.1 document of one API version, derived from what drives the routes: the catalog's
 * resource descriptions (paths, operations, fields, views) and the descriptions registered by the
 * routes beyond CRUD (`documentedRoute`). Nothing here is written per resource.
 */

type Method = 'get' | 'post' | 'put' | 'delete';
type PathItem = Partial<Record<Method, Record<string, unknown>>>;

const ALL_OPERATIONS: readonly Operation[] = ['list', 'create', 'get', 'update', 'delete'];
const TIMESTAMP = 'A timestamp, YYYY-MM-DD HH:MM:SS in UTC.';

/** `/v1/x/:id` -> `/v1/x/{id}`, the OpenAPI path form. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function withNull(schema: JsonSchema, nullable: boolean | undefined): JsonSchema {
  if (!nullable) return schema;
  if (typeof schema.type === 'string') schema.type = [schema.type, 'null'];
  if (Array.isArray(schema.enum)) schema.enum = [...schema.enum, null];
  if (!schema.type && !schema.enum) return { anyOf: [schema, { type: 'null' }] };
  return schema;
}

/** One catalog field as JSON Schema, in the names of `version`. */
export function fieldSchema(spec: FieldSpec, version: ApiVersion): JsonSchema {
  let s: JsonSchema;
  const notes: string[] = spec.description ? [spec.description] : [];
  switch (spec.type) {
    case 'ref': {
      const title = spec.ref ? getKind(spec.ref).title : 'resource';
      s = { type: 'integer', minimum: spec.zeroAsNull ? 0 : 1, description: `Id of a ${title}; expandable with 'expand'.` };
      if (spec.zeroAsNull) notes.push('0 counts as null (none).');
      break;
    }
    case 'typed_ref': {
      const objects = (spec.refKinds ?? []).map((k) => objectNameOf(k, version)).filter((o): o is string => !!o);
      s = { type: 'object', required: ['id', 'type'], properties: { id: { type: 'integer', minimum: 1 }, type: { type: 'string', enum: objects } } };
      break;
    }
    case 'object':
      s = { type: 'object' };
      if (spec.properties) s.properties = Object.fromEntries(Object.entries(spec.properties).map(([k, v]) => [k, fieldSchema(v, version)]));
      if (spec.closed) s.additionalProperties = false;
      break;
    case 'array':
      s = { type: 'array' };
      if (spec.items) s.items = fieldSchema(spec.items, version);
      break;
    default:
      s = { type: spec.type };
  }
  if (spec.enum) s.enum = [...spec.enum];
  if (spec.min !== undefined) s.minimum = spec.min;
  if (spec.max !== undefined) s.maximum = spec.max;
  if (spec.minLength !== undefined) s.minLength = spec.minLength;
  if (spec.maxLength !== undefined) s.maxLength = spec.maxLength;
  if (spec.decimals !== undefined) notes.push(`At most ${spec.decimals} decimal places.`);
  if (spec.format === 'email') s.format = 'email';
  if (spec.format === 'url') s.format = 'uri';
  if (spec.format === 'date') notes.push(TIMESTAMP);
  if (spec.format === 'size') notes.push('A size WIDTHxHEIGHT in pixels, e.g. 300x250.');
  if (spec.blankAsMissing) notes.push('An empty string counts as not given.');
  if (spec.createOnly) notes.push('Set on create only.');
  if (spec.maxBytes) notes.push(`At most ${spec.maxBytes} bytes of JSON.`);
  if (spec.idsOf) notes.push(`Ids of ${getKind(spec.idsOf).title}s of the caller's; deleting one takes it out of the list.`);
  if (spec.default !== undefined && typeof spec.default !== 'function') s.default = spec.default;
  if (spec.readOnly) s.readOnly = true;
  if (spec.writeOnly) s.writeOnly = true;
  if (notes.length) s.description = [s.description, ...notes].filter(Boolean).join(' ');
  return withNull(s, spec.nullable);
}

/** The schema of a resource as this version renders it (`renderResource`). */
function outputSchema(view: View): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    object: { type: 'string', const: view.object },
    self: { type: 'string', description: 'Path of this resource.' },
    id: view.spec.stringId ? { type: 'string' } : { type: 'integer' },
  };
  for (const f of view.output) {
    if (f.timestamp) {
      properties[f.name] = { type: 'string', readOnly: true, description: TIMESTAMP };
      continue;
    }
    let s = fieldSchema(f.spec!, view.version);
    if (view.spec.asString?.includes(f.name)) s = withNull({ type: 'string', description: 'An integer, given as a string in this version.' }, f.spec!.nullable);
    const nullAs = view.spec.nullAs?.[f.name];
    if (nullAs !== undefined) s = { ...s, description: [s.description, `${JSON.stringify(nullAs)} when not set.`].filter(Boolean).join(' ') };
    properties[f.name] = s;
  }
  return { type: 'object', title: view.kind.title, required: Object.keys(properties), properties };
}

/** The body a create (or an update) of this view accepts. */
function inputSchema(view: View, op: 'create' | 'update'): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, canonical] of view.input) {
    const spec = view.kind.fields[canonical];
    if (spec.readOnly || (op === 'update' && spec.createOnly)) continue;
    const { readOnly: _r, ...s } = fieldSchema(spec, view.version);
    properties[name] = view.spec.asString?.includes(name) ? { anyOf: [s, { type: 'string', pattern: '^-?\\d{1,15}$' }] } : s;
    if (op === 'create' && spec.required) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

function queryParam(name: string, schema: JsonSchema, description: string): Record<string, unknown> {
  return { name, in: 'query', required: false, schema, description };
}

/** The list and shape parameters of every collection, described once under components.parameters and named by reference. */
const SHARED_PARAMS = [
  queryParam('fields', { type: 'string' }, 'Comma-separated field names to return (object, self and id always are).'),
  queryParam('expand', { type: 'string' }, "Comma-separated reference fields to replace by the objects they name, or 'all'."),
  queryParam('depth', { type: 'integer', minimum: 1, maximum: MAX_DEPTH, default: 1 }, 'How many levels expansion follows.'),
  queryParam('limit', { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }, 'Page size.'),
  queryParam('offset', { type: 'integer', minimum: 0, default: 0 }, 'Items to skip.'),
  queryParam('id', { type: 'string' }, 'Comma-separated ids: only these resources.'),
];
const paramRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const SHAPE_PARAMS = ['fields', 'expand', 'depth'].map(paramRef);
const LIST_PARAMS = ['limit', 'offset', 'id'].map(paramRef);

function pathParams(expressPath: string, described: Record<string, string> = {}): Record<string, unknown>[] {
  return [...expressPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'id' || described[name] === undefined ? { type: 'string', pattern: '^[1-9][0-9]*$' } : { type: 'string' },
    description: described[name] ?? (name === 'id' ? 'The resource id.' : `Id of the ${name} in the path.`),
  }));
}

function listOf(items: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['object', 'has_more', 'limit', 'offset', 'url', 'data'],
    properties: {
      object: { type: 'string', const: 'list' },
      has_more: { type: 'boolean', description: 'More items follow this page.' },
      limit: { type: 'integer' },
      offset: { type: 'integer' },
      url: { type: 'string' },
      data: { type: 'array', items },
    },
  };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Error statuses every authenticated operation may answer, per version (spec section 7). */
function commonErrors(version: ApiVersion, method: Method): number[] {
  const codes = [400, version === 'v1' ? 401 : 403, 404, 429, 503];
  if (version === 'v2' && method === 'post') codes.push(409);
  return codes;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is invalid; `message` (and `parameters`) say what to fix.',
  401: 'The API key is missing or invalid.',
  402: 'The wallet cannot pay for this.',
  403: 'The API key is missing or invalid, or the account may not do this.',
  404: 'No such resource for this key (another account or mode counts as none).',
  409: 'Conflict (an Idempotency-Key reused with another request, or a resource already used).',
  413: 'The uploaded file is larger than the upload limit (CREATIVE_UPLOAD_MAX_BYTES).',
  429: 'Over the rate limit; retry after `Retry-After` seconds.',
  503: 'A service is unavailable; retry shortly.',
};

/**
 * An error answer, described once under components.responses and named by every operation: written
 * out in each of some 900 operations they made up a third of the document, which Swagger UI resolves
 * whole before it shows anything.
 */
const errorResponse = (code: number) =>
  STATUS_TEXT[code] ? { $ref: `#/components/responses/error${code}` } : { description: 'Error.', content: { 'application/json': { schema: ref('error') } } };
const errorResponses = () =>
  Object.fromEntries(Object.entries(STATUS_TEXT).map(([code, description]) => [`error${code}`, { description, content: { 'application/json': { schema: ref('error') } } }]));

function operation(version: ApiVersion, method: Method, o: {
  id: string;
  summary: string;
  description?: string;
  tag: string;
  parameters: Record<string, unknown>[];
  body?: JsonSchema;
  multipart?: JsonSchema;
  response: JsonSchema;
  contentType?: string;
  errors?: number[];
}): Record<string, unknown> {
  const responses: Record<string, unknown> = { '200': { description: 'Success.', content: { [o.contentType ?? 'application/json']: { schema: o.response } } } };
  for (const code of [...new Set([...commonErrors(version, method), ...(o.errors ?? [])])].sort()) {
    responses[String(code)] = errorResponse(code);
  }
  return {
    operationId: o.id,
    summary: o.summary,
    ...(o.description ? { description: o.description } : {}),
    tags: [o.tag],
    parameters: o.parameters,
    ...(o.body ? { requestBody: { required: true, content: { 'application/json': { schema: o.body } } } } : {}),
    ...(o.multipart ? { requestBody: { required: true, content: multipartContent(o.multipart) } } : {}),
    responses,
  };
}

/** A multipart/form-data body: its file parts are sent as raw bytes, its `attributes` part as JSON text. */
function multipartContent(schema: JsonSchema): Record<string, unknown> {
  const props = Object.keys((schema.properties ?? {}) as Record<string, unknown>);
  const encoding: Record<string, unknown> = {};
  if (props.includes('file')) encoding.file = { contentType: 'application/octet-stream' };
  if (props.includes('attributes')) encoding.attributes = { contentType: 'application/json, text/plain' };
  return { 'multipart/form-data': { schema, encoding } };
}

function errorSchema(version: ApiVersion): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    object: { type: 'string', const: 'error' },
    type: { type: 'string', description: 'Machine-readable error type, e.g. invalid_request_parameters_error.' },
    message: { type: 'string', description: 'What went wrong and how to fix it.' },
    http_status: { type: 'integer' },
    parameters: {
      type: 'array',
      description: 'On invalid input: one entry per offending field.',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: {
          field: { type: 'string' },
          type: { type: 'string', enum: ['missing_field', 'invalid_value', 'unknown_field', 'read_only', 'invalid_reference'] },
          message: { type: 'string' },
        },
      },
    },
  };
  if (version === 'v1') properties.status = { type: 'integer', description: 'The HTTP status again (v1 only).' };
  return { type: 'object', required: ['object', 'type', 'message', 'http_status', ...(version === 'v1' ? ['status'] : [])], properties };
}

const idOf = (method: Method, path: string) => `${method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;
const tagOf = (path: string) => path.split('/')[2] ?? 'api';

function responseSchema(doc: RouteDoc, version: ApiVersion): JsonSchema {
  const r = doc.response;
  if ('resource' in r) return ref(viewOf(getKind(r.resource), version)!.object);
  if ('listOf' in r) return listOf(r.listOf);
  return r.schema;
}

function bodySchema(fields: Record<string, FieldSpec>, version: ApiVersion): JsonSchema {
  const required = Object.entries(fields).filter(([, f]) => f.required).map(([n]) => n);
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.entries(fields).map(([n, f]) => [n, fieldSchema(f, version)])),
    ...(required.length ? { required } : {}),
  };
}

let mountedOnce = false;

/** Builds the OpenAPI 3.1 document of `version`. */
export function openApiDocument(version: ApiVersion): Record<string, unknown> {
  // Routes beyond the catalog register their descriptions when they mount.
  if (!mountedOnce) {
    resourceRouteTable();
    mountedOnce = true;
  }
  const paths: Record<string, PathItem> = {};
  const schemas: Record<string, JsonSchema> = { error: errorSchema(version) };
  const add = (expressPath: string, method: Method, op: Record<string, unknown>) => {
    const item = (paths[openApiPath(expressPath)] ??= {});
    item[method] ??= op;
  };

  for (const doc of routeDocs(version)) {
    add(doc.path, doc.method, operation(version, doc.method, {
      id: idOf(doc.method, openApiPath(doc.path)),
      summary: doc.summary,
      description: doc.description,
      tag: doc.tag ?? tagOf(doc.path),
      parameters: [
        ...pathParams(doc.path, doc.pathParams),
        ...Object.entries(doc.query ?? {}).map(([name, q]) => queryParam(name, fieldSchema(q, version), q.description ?? '')),
      ],
      body: doc.body ? bodySchema(doc.body, version) : undefined,
      multipart: doc.multipart,
      response: responseSchema(doc, version),
      contentType: doc.contentType,
      errors: doc.errors,
    }));
  }

  for (const group of GROUPS.filter((g) => g.version === version)) {
    const objects = group.kinds.map((k) => viewOf(getKind(k), version)!.object);
    add(group.path, 'get', operation(version, 'get', {
      id: idOf('get', group.path),
      summary: `List every type (${objects.join(', ')})`,
      tag: tagOf(group.path),
      parameters: [...LIST_PARAMS, ...SHAPE_PARAMS],
      response: listOf({ oneOf: objects.map(ref) }),
    }));
  }

  const views = KINDS.map((k) => viewOf(k, version)).filter((v): v is View => !!v);
  for (const view of views) {
    const { path, object } = view;
    const title = view.kind.title;
    const tag = tagOf(path);
    schemas[object] = outputSchema(view);
    const ops = new Set(view.spec.operations ?? ALL_OPERATIONS);
    const disabled = view.spec.disabled ?? {};
    const scope = pathParams(path);
    const idParam = pathParams(`${path}/:id`, { id: `The ${title} id.` }).slice(-1);
    const note = (op: Operation) => (disabled[op] ? `Refused with 400: ${disabled[op]}` : undefined);
    const one = ref(object);
    if (ops.has('list')) add(path, 'get', operation(version, 'get', { id: idOf('get', openApiPath(path)), summary: `List ${title}s`, description: note('list'), tag, parameters: [...scope, ...LIST_PARAMS, ...SHAPE_PARAMS], response: listOf(one) }));
    if (ops.has('create')) {
      schemas[`${object}_create`] = inputSchema(view, 'create');
      add(path, 'post', operation(version, 'post', { id: idOf('post', openApiPath(path)), summary: `Create a ${title}`, description: note('create'), tag, parameters: [...scope, ...SHAPE_PARAMS], body: ref(`${object}_create`), response: one }));
    }
    const item = `${path}/:id`;
    if (ops.has('get')) add(item, 'get', operation(version, 'get', { id: idOf('get', openApiPath(item)), summary: `Retrieve a ${title}`, description: note('get'), tag, parameters: [...scope, ...idParam, ...SHAPE_PARAMS], response: one }));
    if (ops.has('update')) {
      schemas[`${object}_update`] = inputSchema(view, 'update');
      add(item, 'put', operation(version, 'put', { id: idOf('put', openApiPath(item)), summary: `Update a ${title}`, description: note('update'), tag, parameters: [...scope, ...idParam, ...SHAPE_PARAMS], body: ref(`${object}_update`), response: one }));
    }
    if (ops.has('delete')) {
      const deleted = version === 'v1' ? { id: { type: 'integer' }, delete: { const: true } } : { id: view.spec.stringId ? { type: 'string' } : { type: 'integer' }, deleted: { const: true } };
      add(item, 'delete', operation(version, 'delete', { id: idOf('delete', openApiPath(item)), summary: `Delete a ${title}`, description: note('delete'), tag, parameters: [...scope, ...idParam], response: { type: 'object', properties: deleted } }));
    }
    if (view.spec.archive) addArchive(view, add);
  }

  // Catalog creates that also take an uploaded file: the form next to the JSON body, and the 413.
  for (const m of multipartBodyDocs(version)) {
    const op = paths[openApiPath(m.path)]?.[m.method] as { requestBody?: { required?: boolean; content: Record<string, unknown> }; responses: Record<string, unknown> } | undefined;
    if (!op) continue;
    op.requestBody = { ...(op.requestBody ?? {}), required: true, content: { ...(op.requestBody?.content ?? {}), ...multipartContent(m.schema) } };
    op.responses['413'] = errorResponse(413);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: `Ad serving management API ${version}`,
      version,
      description: `Every request authenticates with an API key: \`Authorization: Basic <key>\`. A test key sees only test data, a live key only live data. Rate limits: 600 requests per 60 s per account, and 60 for reporting paths; every response carries X-RateLimit-Limit, -Remaining and -Reset.`,
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'basic', description: 'The API key as the Basic credential: `Authorization: Basic <key>`.' } },
      schemas,
      responses: errorResponses(),
      parameters: Object.fromEntries(SHARED_PARAMS.map((p) => [p.name as string, p])),
    },
  };
}

function addArchive(view: View, add: (p: string, m: Method, op: Record<string, unknown>) => void): void {
  const { path, version, kind } = view;
  const tag = tagOf(path);
  const refs = { type: 'array', items: { type: 'object', properties: { object: { type: 'string' }, id: { type: 'integer' } } } };
  const idParam = pathParams(`${path}/:id`, { id: `The ${kind.title} id.` });
  const include = [
    queryParam('include_campaign_assignments', { type: 'boolean' }, 'Also restore the campaign assignments archived with it.'),
    queryParam('include_placements', { type: 'boolean' }, 'Also restore the placements archived with it.'),
  ];
  const archived = { type: 'object', properties: { object: { const: 'archive' }, url: { type: 'string' }, data: { type: 'object', properties: { archived_resources: refs } } } };
  const unarchived = {
    type: 'object',
    properties: { object: { const: 'unarchive' }, url: { type: 'string' }, data: { type: 'object', properties: { unarchived_resources: refs, not_restored_resources: refs } } },
  };
  const archive = `${path}/:id/archive`;
  add(archive, 'get', operation(version, 'get', { id: idOf('get', openApiPath(archive)), summary: `Archive a ${kind.title} (and what it owns)`, tag, parameters: idParam, response: archived }));
  const unarchivePath = version === 'v1' ? `${path}/:id/unarchive` : `${path}/archived/:id/unarchive`;
  add(unarchivePath, 'get', operation(version, 'get', { id: idOf('get', openApiPath(unarchivePath)), summary: `Restore an archived ${kind.title}`, tag, parameters: [...idParam, ...include], response: unarchived }));
  if (version === 'v1') return;
  add(`${path}/archived`, 'get', operation(version, 'get', { id: idOf('get', openApiPath(`${path}/archived`)), summary: `List archived ${kind.title}s`, tag, parameters: [...LIST_PARAMS, ...SHAPE_PARAMS], response: listOf(ref(view.object)) }));
  add(`${path}/archived/:id`, 'get', operation(version, 'get', { id: idOf('get', openApiPath(`${path}/archived/:id`)), summary: `Retrieve an archived ${kind.title}`, tag, parameters: [...idParam, ...SHAPE_PARAMS], response: ref(view.object) }));
  if (view.spec.archivedDelete) {
    const deleted = { type: 'object', properties: { id: { type: 'integer' }, deleted: { const: true } } };
    add(`${path}/archived/:id`, 'delete', operation(version, 'delete', {
      id: idOf('delete', openApiPath(`${path}/archived/:id`)),
      summary: `Delete an archived ${kind.title}`,
      description: `Deletes it for good, with what archiving it took along; 404 unless it is archived.`,
      tag,
      parameters: idParam,
      response: deleted,
    }));
  }
}

/**
 * Method and path (OpenAPI form) of every route the gateway answers with a handler of its own, read
 * from its route table; catch-alls (`all`: the 501 and 410 answers) and pattern routes are not
 * operations.
 */
export function mountedRoutes(table: RouteTable): { method: Method; path: string }[] {
  return table
    .routes()
    .filter((r): r is { method: Method; path: string } => r.method !== 'all' && typeof r.path === 'string')
    .map((r) => ({ method: r.method, path: openApiPath(r.path) }));
}
