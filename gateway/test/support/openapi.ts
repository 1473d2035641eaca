/**
 * Checks API responses against the reference OpenAPI document (reference/adbutler-v2-openapi.json), so
 * that clients written for the reference API can read ours. Use it in any v2 test:
 *
 *   expectReferenceShape('/v2/ad-items/custom-html/{id}', 'get', res.body);
 *
 * The reference is OpenAPI 3.0, which ajv does not read as is. Its schemas are converted once:
 * `nullable: true` becomes a null-accepting type; `example`, `deprecated` and other annotations are
 * ignored (ajv `strict: false`); formats are not checked (the platform writes `YYYY-MM-DD HH:MM:SS`
 * where the reference says date-time, as the spec requires). Two known looseness of the reference are
 * allowed for, both on by default:
 *   - `nullableProperties`: any property may be null. The reference rarely marks nullability, while the
 *     spec gives null for unused values (tracking_pixel, location, creative...).
 *   - a property whose `type` contradicts its own example (an "object" whose example is an array) also
 *     accepts the example's type.
 *   - `oneOf` is read as `anyOf`: the reference's alternatives (the ad item types of GET /ad-items) are
 *     open objects that all fit any one item, so "exactly one" could never hold.
 *   - misspelt type names (`int`, `float`, `bool`) are read as the JSON Schema types they mean.
 * Where the spec itself overrides the reference for a field (is_self_serve is a string in spec 2.2),
 * name it in `ignore` at the call site.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';

const DOC_ID = 'adbutler-v2';
const REFERENCE = process.env.OPENAPI_REFERENCE ?? (fs.existsSync('/work/shared/reference/adbutler-v2-openapi.json')
  ? '/work/shared/reference/adbutler-v2-openapi.json'
  : path.resolve(__dirname, '../../../../shared/reference/adbutler-v2-openapi.json'));

type Schema = Record<string, any>;

export interface ReferenceOptions {
  /** Property names left out of the check wherever they appear (fields where the spec overrides the reference). */
  ignore?: string[];
  /** Accept null for every property (default true; see above). */
  nullableProperties?: boolean;
  /** Response status whose schema applies (default 200, else the reference's `default`). */
  status?: number;
}

let doc: Schema | undefined;
const ajvs = new Map<boolean, Ajv>();
const compiled = new Map<string, ValidateFunction>();

function reference(): Schema {
  doc ??= JSON.parse(fs.readFileSync(REFERENCE, 'utf8'));
  return doc!;
}

const TYPE_ALIASES: Record<string, string> = { int: 'integer', float: 'number', double: 'number', bool: 'boolean', str: 'string' };

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'number' ? 'number' : typeof v;
}

/** OpenAPI 3.0 schema -> JSON Schema ajv accepts. */
function convert(node: any, nullableProps: boolean): any {
  if (Array.isArray(node)) return node.map((n) => convert(n, nullableProps));
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') return { $ref: `${DOC_ID}${node.$ref}` };
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties' && v && typeof v === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(v as Schema).map(([name, sub]) => {
          const s = convert(sub, nullableProps);
          return [name, nullableProps ? { anyOf: [s, { type: 'null' }] } : s];
        }),
      );
    } else if (['nullable', 'example', 'examples', 'deprecated', 'description', 'xml', 'externalDocs', 'discriminator'].includes(k)) {
      continue;
    } else if (k === 'oneOf') {
      out.anyOf = convert(v, nullableProps);
    } else if (k === 'type' && typeof v === 'string') {
      out.type = TYPE_ALIASES[v] ?? v;
    } else {
      out[k] = convert(v, nullableProps);
    }
  }
  if (typeof out.type === 'string') {
    const types = new Set<string>([out.type]);
    if (node.nullable === true) types.add('null');
    if (node.example !== undefined && node.example !== null) {
      const ex = jsonType(node.example);
      const fits = ex === out.type || (ex === 'number' && out.type === 'integer' && Number.isInteger(node.example));
      if (!fits && (ex === 'array' || ex === 'object')) types.add(ex);
    }
    if (types.size > 1) out.type = [...types];
  }
  return out;
}

function ajvFor(nullableProps: boolean): Ajv {
  let ajv = ajvs.get(nullableProps);
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: DOC_ID, components: convert(reference().components, nullableProps) });
    ajvs.set(nullableProps, ajv);
  }
  return ajv;
}

/** The reference's path for one of ours: `/v2/ad-items/native/{id}` -> `/ad-items/native/{id}`. */
function referencePath(p: string): string {
  return p.replace(/^\/v2(?=\/)/, '');
}

/** The JSON response schema the reference gives for a path and method, or undefined when it has none. */
export function responseSchema(apiPath: string, method: string, status = 200): Schema | undefined {
  const op = reference().paths?.[referencePath(apiPath)]?.[method.toLowerCase()];
  const response = op?.responses?.[String(status)] ?? op?.responses?.default;
  return response?.content?.['application/json']?.schema;
}

function strip(value: unknown, ignore: Set<string>): unknown {
  if (!ignore.size) return value;
  if (Array.isArray(value)) return value.map((v) => strip(v, ignore));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !ignore.has(k)).map(([k, v]) => [k, strip(v, ignore)]));
  }
  return value;
}

/** Problems of `body` against the reference schema of `apiPath` + `method` (empty when it fits). */
export function referenceProblems(apiPath: string, method: string, body: unknown, opts: ReferenceOptions = {}): string[] {
  const nullableProps = opts.nullableProperties ?? true;
  const key = `${nullableProps}:${method.toLowerCase()} ${referencePath(apiPath)}:${opts.status ?? 200}`;
  let validate = compiled.get(key);
  if (!validate) {
    const schema = responseSchema(apiPath, method, opts.status);
    if (!schema) throw new Error(`the reference OpenAPI has no JSON response schema for ${method.toUpperCase()} ${referencePath(apiPath)}`);
    validate = ajvFor(nullableProps).compile(convert(schema, nullableProps));
    compiled.set(key, validate);
  }
  if (validate(strip(body, new Set(opts.ignore ?? [])))) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
}

/** Jest assertion: the body fits the reference's response schema for that path and method. */
export function expectReferenceShape(apiPath: string, method: string, body: unknown, opts: ReferenceOptions = {}): void {
  expect({ path: `${method.toUpperCase()} ${apiPath}`, problems: referenceProblems(apiPath, method, body, opts) }).toEqual({ path: `${method.toUpperCase()} ${apiPath}`, problems: [] });
}

/**
 * Jest assertion: the body fits one named schema of the reference's components. For shapes the
 * reference defines but does not attach to a path, such as its errors (`request_parameter_error`,
 * `error_resource_does_not_exist`), which its /vast/ paths leave out.
 */
export function expectReferenceSchema(name: string, body: unknown, opts: Omit<ReferenceOptions, 'status'> = {}): void {
  if (!reference().components?.schemas?.[name]) throw new Error(`the reference OpenAPI has no schema ${name}`);
  const nullableProps = opts.nullableProperties ?? true;
  const key = `${nullableProps}:schema ${name}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajvFor(nullableProps).compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
    compiled.set(key, validate);
  }
  const problems = validate(strip(body, new Set(opts.ignore ?? []))) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
  expect({ schema: name, problems }).toEqual({ schema: name, problems: [] });
}
