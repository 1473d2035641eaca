import { parseBoolean } from '../../services/shared/booleans';
import type { Request } from 'express';
import type { FieldSpec, Json, ParameterError } from '../../services/shared/catalog';
import { validateInput } from '../../services/shared/catalog/validate';
import { apiErrors } from '../errors';

export const DEFAULT_LIMIT = 10;
/** Documented maximum page size (the reference API's); larger asks are refused, not silently cut. */
export const MAX_LIMIT = 100;
export const MAX_DEPTH = 5;
const MAX_IDS = 100;

export interface ListParams {
  limit: number;
  offset: number;
  ids: number[];
}

export interface ShapeParams {
  /** Version field names to return (object, self and id always are); undefined means all. */
  fields?: Set<string>;
  /** Field names to expand, or 'all'. */
  expand?: Set<string> | 'all';
  depth: number;
}

function single(req: Request, name: string, errors: ParameterError[]): string | undefined {
  const v = req.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    errors.push({ field: name, type: 'invalid_value', message: `'${name}' must be given once, as a plain value.` });
    return undefined;
  }
  return v;
}

function integer(raw: string | undefined, name: string, min: number, max: number, errors: ParameterError[]): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    errors.push({ field: name, type: 'invalid_value', message: `'${name}' must be an integer from ${min} to ${max}.` });
    return undefined;
  }
  return Number(raw);
}

function nameList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

export function parseListParams(req: Request): ListParams {
  const errors: ParameterError[] = [];
  const limit = integer(single(req, 'limit', errors), 'limit', 1, MAX_LIMIT, errors) ?? DEFAULT_LIMIT;
  const offset = integer(single(req, 'offset', errors), 'offset', 0, 1_000_000_000, errors) ?? 0;
  const rawIds = single(req, 'id', errors);
  let ids: number[] = [];
  if (rawIds !== undefined) {
    const parts = rawIds.split(',').map((s) => s.trim());
    if (parts.length > MAX_IDS || parts.some((p) => !/^[1-9]\d{0,15}$/.test(p) || !Number.isSafeInteger(Number(p)))) {
      errors.push({ field: 'id', type: 'invalid_value', message: `'id' must be a comma-separated list of up to ${MAX_IDS} positive integer ids.` });
    } else ids = parts.map(Number);
  }
  if (errors.length) throw apiErrors.invalid(errors);
  return { limit, offset, ids };
}

/**
 * `fields`, `expand` and `depth`, checked against the names this response can have so that a typo is
 * reported instead of silently ignored.
 */
export function parseShapeParams(req: Request, knownFields: Set<string>, expandable: Set<string>): ShapeParams {
  const errors: ParameterError[] = [];
  const fieldsList = nameList(single(req, 'fields', errors));
  let fields: Set<string> | undefined;
  if (fieldsList) {
    const unknown = fieldsList.filter((f) => !knownFields.has(f) && !['object', 'self', 'id'].includes(f));
    if (unknown.length) {
      errors.push({ field: 'fields', type: 'invalid_value', message: `'fields' names unknown field '${unknown[0].slice(0, 64)}'; known fields: ${[...knownFields].join(', ')}.` });
    } else fields = new Set(fieldsList);
  }
  const expandList = nameList(single(req, 'expand', errors));
  let expand: ShapeParams['expand'];
  if (expandList) {
    if (expandList.length === 1 && expandList[0] === 'all') expand = 'all';
    else {
      const bad = expandList.filter((f) => !expandable.has(f));
      if (bad.length) {
        const known = [...expandable];
        errors.push({
          field: 'expand',
          type: 'invalid_value',
          message: `'expand' names '${bad[0].slice(0, 64)}', which is not an expandable field; use 'all'${known.length ? ` or some of: ${known.join(', ')}` : ''}.`,
        });
      } else expand = new Set(expandList);
    }
  }
  const depth = integer(single(req, 'depth', errors), 'depth', 1, MAX_DEPTH, errors) ?? 1;
  if (errors.length) throw apiErrors.invalid(errors);
  return { fields, expand, depth };
}

/** Path ids are positive integers; anything else cannot name a resource. */
export function parseId(raw: string, title: string): number {
  if (!/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw apiErrors.notFound(`No ${title} with id '${raw.slice(0, 64)}' exists.`);
  return Number(raw);
}

/**
 * The body of an operation beyond CRUD (add-funds, to-image, orders), checked with the same field
 * language and rules as resources: unknown members, required ones, types, ranges and formats.
 */
export function actionBody<F extends Record<string, FieldSpec>>(req: Request, title: string, fields: F): BodyOf<F> {
  const body = req.body === undefined ? {} : req.body;
  const { values, errors } = validateInput({ kind: title, service: 'accounts', title, fields, views: {} }, body, 'create');
  if (errors.length) throw apiErrors.invalid(errors);
  return values as BodyOf<F>;
}

/** The value a validated field holds, by its spec: ids and integers are numbers, and so on. */
type FieldValue<S> = (S extends { type: 'ref' | 'integer' | 'number' } ? number : S extends { type: 'string' } ? string : S extends { type: 'boolean' } ? boolean : Json)
  | (S extends { nullable: true } ? null : never);

/** A validated action body, typed from its field specs: required fields are present. */
export type BodyOf<F> = { [K in keyof F as F[K] extends { required: true } ? K : never]: FieldValue<F[K]> } & {
  [K in keyof F as F[K] extends { required: true } ? never : K]?: FieldValue<F[K]>;
};


/** A boolean query flag: undefined when absent; 400 naming it for anything but the values above. */
export function queryFlag(req: Request, name: string): boolean | undefined {
  const v = req.query[name];
  if (v === undefined) return undefined;
  // The platform's boolean rule, and a bare `?name` (no value) means true.
  const value = v === '' ? true : typeof v === 'string' ? parseBoolean(v) : undefined;
  if (value !== undefined) return value;
  throw apiErrors.invalid([{ field: name, type: 'invalid_value', message: `'${name}' must be true or false (or given alone, meaning true), once.` }]);
}
