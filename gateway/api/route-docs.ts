import type { Request, Response, Router } from 'express';
import type { ApiVersion, FieldSpec } from '../../services/shared/catalog';

/** A JSON Schema (OpenAPI 3.1 dialect) fragment. */
export type JsonSchema = Record<string, unknown>;

/**
 * What a route outside the catalog's CRUD answers: a catalog resource in this version's shape, a list
 * envelope of items, or any other JSON object.
 */
export type ResponseDoc = { resource: string } | { listOf: JsonSchema } | { schema: JsonSchema };

/**
 * The OpenAPI description of one route that the catalog does not describe (actions, reports, adserve).
 * Mounting it with `documentedRoute` registers the description with the route, so the document at
 * /v1|v2/openapi.json can never miss it.
 */
export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete';
  /** Express path, e.g. `/v2/self-serve/customers/:id/add-funds`. */
  path: string;
  summary: string;
  description?: string;
  /** Group shown in the reference (defaults to the path's first segment after the version). */
  tag?: string;
  /** Path parameters by name; `:name`s not listed are described as positive integer ids. */
  pathParams?: Record<string, string>;
  query?: Record<string, FieldSpec & { description?: string }>;
  /** Body members in the catalog's field language (the same specs the handler checks with). */
  body?: Record<string, FieldSpec>;
  /** A multipart/form-data body instead, described by this schema (file uploads). */
  multipart?: JsonSchema;
  response: ResponseDoc;
  /** Served by a proxy outside the route table (set by `describeProxiedRoute`). */
  proxied?: boolean;
  /** Media type of the success answer (default application/json). */
  contentType?: string;
  /** Status codes beyond the common ones (400, 401/403, 404, 429, 503), e.g. 402 or 409. */
  errors?: number[];
}

/** Query parameters known only by name: the booleans among them take true/1/false/0, the rest text. */
export function namedQuery(names: readonly string[], booleans: ReadonlySet<string> = new Set()): NonNullable<RouteDoc['query']> {
  return Object.fromEntries(names.map((n) => [n, booleans.has(n) ? { type: 'boolean' as const } : { type: 'string' as const }]));
}

const docs = new Map<string, RouteDoc>();

/** Every registered non-catalog route description of a version. */
export function routeDocs(version: ApiVersion): RouteDoc[] {
  return [...docs.values()].filter((d) => d.path.startsWith(`/${version}/`));
}

type Handler = (req: Request, res: Response) => Promise<void> | void;

/**
 * Describes a route the gateway serves outside the route table (a proxy mounted on the app, such as
 * /v2/adserve). The document test checks that such a route answers rather than 404.
 */
export function describeProxiedRoute(doc: RouteDoc): void {
  docs.set(`${doc.method} ${doc.path}`, { ...doc, proxied: true });
}

/** Routes described with `describeProxiedRoute`. */
export function proxiedRouteDocs(): RouteDoc[] {
  return [...docs.values()].filter((d) => d.proxied);
}

/** Mounts `handler` at `doc.method doc.path` and registers its description for the OpenAPI document. */
export function documentedRoute(router: Router, doc: RouteDoc, handler: Handler): void {
  docs.set(`${doc.method} ${doc.path}`, doc);
  router[doc.method](doc.path, handler);
}

const multipartBodies = new Map<string, { method: RouteDoc['method']; path: string; schema: JsonSchema }>();

/**
 * Adds a multipart/form-data body to an operation the catalog documents (a creative's create also
 * takes an uploaded file), next to its JSON body.
 */
export function describeMultipartBody(method: RouteDoc['method'], path: string, schema: JsonSchema): void {
  multipartBodies.set(`${method} ${path}`, { method, path, schema });
}

/** The multipart bodies registered for catalog operations of a version. */
export function multipartBodyDocs(version: ApiVersion): { method: RouteDoc['method']; path: string; schema: JsonSchema }[] {
  return [...multipartBodies.values()].filter((d) => d.path.startsWith(`/${version}/`));
}
