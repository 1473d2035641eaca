import type { FieldSpec, Json, ParameterError, ResourceKind } from './types';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const DEFAULT_MAX_STRING = 4096;
const DEFAULT_MAX_JSON_BYTES = 16384;
const MAX_NESTING = 8;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export type Op = 'create' | 'update';

export interface ValidationResult {
  values: Record<string, Json>;
  errors: ParameterError[];
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks a create or update body against a kind's fields and returns the canonical values to store.
 * Unknown fields are rejected so that a typo never silently does nothing; read-only fields are ignored
 * so that a client may send back an object it has read.
 */
/**
 * The error for a member the body should not have. Its name is cut to 64 characters: an error must not
 * echo whatever a caller sends back at full length (a 45 KB body of long names made a 92 KB answer).
 */
export function unknownField(name: string, of: string): ParameterError {
  const shown = name.slice(0, 64);
  return { field: shown, type: 'unknown_field', message: `'${shown}' is not a field of ${of}.` };
}

export function validateInput(kind: ResourceKind, input: unknown, op: Op): ValidationResult {
  const errors: ParameterError[] = [];
  const values: Record<string, Json> = {};
  if (!isPlainObject(input)) {
    return { values, errors: [{ field: '', type: 'invalid_value', message: 'The request body must be a JSON object.' }] };
  }
  for (const [name, raw] of Object.entries(input)) {
    const spec = kind.fields[name];
    if (!spec) {
      errors.push(unknownField(name, kind.title));
      continue;
    }
    if (spec.readOnly) continue;
    if (spec.createOnly && op === 'update') {
      errors.push({ field: name, type: 'read_only', message: `'${name}' can only be set when the ${kind.title} is created.` });
      continue;
    }
    if (spec.blankAsMissing && raw === '') continue;
    const value = spec.zeroAsNull && raw === 0 ? null : raw;
    const problem = checkValue(spec, value, 0);
    if (problem) errors.push({ field: name, type: 'invalid_value', message: `'${name}' ${problem}.` });
    else values[name] = value as Json;
  }
  if (op === 'create') {
    for (const [name, spec] of Object.entries(kind.fields)) {
      if (name in values || spec.readOnly) continue;
      if (errors.some((e) => e.field === name)) continue;
      if (spec.required) {
        errors.push({ field: name, type: 'missing_field', message: `'${name}' is required.` });
      } else if (spec.default !== undefined) {
        values[name] = typeof spec.default === 'function' ? spec.default() : spec.default;
      }
    }
  } else {
    for (const [name, spec] of Object.entries(kind.fields)) {
      if (spec.required && values[name] === null) {
        errors.push({ field: name, type: 'invalid_value', message: `'${name}' cannot be null.` });
      }
    }
  }
  return { values, errors };
}

/** Returns why `value` does not fit `spec` (a phrase after the field name), or undefined when it fits. */
export function checkValue(spec: FieldSpec, value: unknown, depth: number): string | undefined {
  if (value === null) return spec.nullable ? undefined : 'cannot be null';
  if (value === undefined) return 'is missing';
  switch (spec.type) {
    case 'string': {
      if (typeof value !== 'string') return 'must be a string';
      const bad = badText(value);
      if (bad) return bad;
      if (spec.minLength !== undefined && value.length < spec.minLength) return `must be at least ${spec.minLength} characters long`;
      const max = spec.maxLength ?? DEFAULT_MAX_STRING;
      if (value.length > max) return `must be at most ${max} characters long`;
      if (spec.enum && !spec.enum.includes(value)) return `must be one of: ${spec.enum.join(', ')}`;
      if (spec.pattern && !patternOf(spec.pattern).test(value)) return `must be ${spec.patternHint ?? `a string matching ${spec.pattern}`}`;
      if (spec.format) return checkFormat(spec.format, value);
      return undefined;
    }
    case 'integer':
    case 'ref': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be an integer';
      const min = spec.type === 'ref' ? 1 : spec.min ?? INT32_MIN;
      const max = spec.type === 'ref' ? Number.MAX_SAFE_INTEGER : spec.max ?? INT32_MAX;
      if (value < min || value > max) return spec.type === 'ref' ? 'must be a positive id' : `must be between ${min} and ${max}`;
      if (spec.enum && !spec.enum.includes(value)) return `must be one of: ${spec.enum.join(', ')}`;
      return undefined;
    }
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      const min = spec.min ?? -1e12;
      const max = spec.max ?? 1e12;
      if (value < min || value > max) return `must be between ${min} and ${max}`;
      if (spec.decimals !== undefined && !new RegExp(`^-?\\d+(\\.\\d{1,${spec.decimals}})?$`).test(String(value))) {
        return `must have at most ${spec.decimals} decimal places`;
      }
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'typed_ref': {
      if (!isPlainObject(value)) return 'must be an object {"id": integer, "type": string}';
      const extra = Object.keys(value).filter((k) => k !== 'id' && k !== 'type');
      if (extra.length) return `has unknown member '${extra[0]}' (expected id and type)`;
      const { id, type } = value;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return 'must have a positive integer id';
      if (typeof type !== 'string') return 'must have a string type';
      if (spec.refKinds && !spec.refKinds.includes(type)) return `type must be one of: ${spec.refKinds.join(', ')}`;
      return undefined;
    }
    case 'object':
    case 'array': {
      if (spec.type === 'object' ? !isPlainObject(value) : !Array.isArray(value)) {
        return spec.type === 'object' ? 'must be a JSON object' : 'must be an array';
      }
      if (depth === 0) {
        const shape = checkJsonShape(value, 1);
        if (shape) return shape;
        const bytes = Buffer.byteLength(JSON.stringify(value));
        const maxBytes = spec.maxBytes ?? DEFAULT_MAX_JSON_BYTES;
        if (bytes > maxBytes) return `must be at most ${maxBytes} bytes of JSON`;
      }
      if (Array.isArray(value)) {
        if (spec.maxLength !== undefined && value.length > spec.maxLength) return `must have at most ${spec.maxLength} elements`;
        if (spec.minLength !== undefined && value.length < spec.minLength) return `must have at least ${spec.minLength} element${spec.minLength === 1 ? '' : 's'}`;
        if (spec.items) {
          for (let i = 0; i < value.length; i++) {
            const p = checkValue(spec.items, value[i], depth + 1);
            if (p) return `element ${i} ${p}`;
          }
        }
        return undefined;
      }
      if (spec.properties) {
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          const sub = spec.properties[k];
          if (!sub) {
            if (spec.closed) return `has unknown member '${k}'`;
            continue;
          }
          const p = checkValue(sub, v, depth + 1);
          if (p) return `member '${k}' ${p}`;
        }
        for (const [k, sub] of Object.entries(spec.properties)) {
          if (sub.required && !(k in (value as object))) return `member '${k}' is required`;
        }
      }
      return undefined;
    }
  }
}

const patterns = new Map<string, RegExp>();
function patternOf(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) patterns.set(source, (re = new RegExp(source, 'u')));
  return re;
}

function checkFormat(format: NonNullable<FieldSpec['format']>, value: string): string | undefined {
  switch (format) {
    case 'email':
      return EMAIL.test(value) ? undefined : 'must be an email address';
    case 'url':
      return isHttpUrl(value) ? undefined : 'must be an absolute http(s) URL';
    case 'date':
      return DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value)
        ? undefined
        : 'must be a date in the form YYYY-MM-DD';
    case 'size':
      return parseSize(value) ? undefined : SIZE_RULE;
  }
}

/** The largest side of an image the platform renders (native ad to image). */
export const MAX_IMAGE_SIDE = 4000;
const SIZE_RULE = `must be of the form {width}x{height} with each side from 1 to ${MAX_IMAGE_SIDE}, for example 300x250`;

/** The one size rule (`{width}x{height}`, each side 1 to MAX_IMAGE_SIDE), for the gateway and inventory alike. */
export function parseSize(value: string): { width: number; height: number } | undefined {
  const m = /^([1-9]\d{0,3})x([1-9]\d{0,3})$/.exec(value);
  if (!m || Number(m[1]) > MAX_IMAGE_SIDE || Number(m[2]) > MAX_IMAGE_SIDE) return undefined;
  return { width: Number(m[1]), height: Number(m[2]) };
}

export function sizeProblem(value: string): string | undefined {
  return parseSize(value) ? undefined : SIZE_RULE;
}

/** An absolute http: or https: URL: the rule for every URL the platform stores or puts in a link. */
export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Text Postgres can store: no NUL characters and no unpaired UTF-16 surrogates. */
export function badText(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (!isWellFormed(value)) return 'must be valid Unicode text';
  return undefined;
}

function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const n = s.charCodeAt(i + 1);
      if (!(n >= 0xdc00 && n <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}

/** Free-form JSON (bidder parameters, template variables) must still be storable and bounded. */
export function checkJsonShape(value: unknown, depth: number, maxNesting = MAX_NESTING): string | undefined {
  if (depth > maxNesting) return `must not nest deeper than ${maxNesting} levels`;
  if (typeof value === 'string') return badText(value) ? 'contains text that is not valid Unicode or has NUL characters' : undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'contains a number out of range';
  if (Array.isArray(value)) {
    for (const v of value) {
      const p = checkJsonShape(v, depth + 1, maxNesting);
      if (p) return p;
    }
  } else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (badText(k)) return 'has a member name that is not valid Unicode or has NUL characters';
      const p = checkJsonShape(v, depth + 1, maxNesting);
      if (p) return p;
    }
  }
  return undefined;
}
