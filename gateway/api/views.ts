import type { Resource } from '../../proto/gen/adserver/resources/v1/resources';
import { findKind, kindForObject, type ApiVersion, type FieldSpec, type Json, type ParameterError, type ResourceKind, type VersionView } from '../../services/shared/catalog';
import { isPlainObject, unknownField } from '../../services/shared/catalog/validate';

interface OutputField {
  /** Name in this version. */
  name: string;
  canonical: string;
  spec?: FieldSpec;
  timestamp?: 'created' | 'modified';
}

/** How one kind looks in one API version, derived once from its catalog description. */
export interface View {
  kind: ResourceKind;
  version: ApiVersion;
  object: string;
  path: string;
  spec: VersionView;
  output: OutputField[];
  /** Version name -> canonical name, for every field a body may carry. */
  input: Map<string, string>;
  /** Version names of fields whose ids can be expanded. */
  expandable: Set<string>;
  versionName(canonical: string): string;
}

const cache = new Map<string, View>();
/** Fields a client may echo back from a response; they are ignored on input. */
const ECHOED = new Set(['object', 'self', 'id']);

export function viewOf(kind: ResourceKind, version: ApiVersion): View | undefined {
  const spec = kind.views[version];
  if (!spec) return undefined;
  const key = `${kind.kind}:${version}`;
  let view = cache.get(key);
  if (view) return view;
  const rename = spec.rename ?? {};
  const reverse = new Map(Object.entries(rename).map(([v, c]) => [c, v]));
  const stamps = kind.timestamps ?? {};
  const names = spec.fields ?? [...Object.keys(kind.fields), ...(stamps.created ? [stamps.created] : []), ...(stamps.modified ? [stamps.modified] : [])];
  const output: OutputField[] = [];
  const input = new Map<string, string>();
  const expandable = new Set<string>();
  for (const name of names) {
    if (name === stamps.created || name === stamps.modified) {
      output.push({ name, canonical: name, timestamp: name === stamps.created ? 'created' : 'modified' });
      continue;
    }
    const canonical = rename[name] ?? name;
    const fieldSpec = kind.fields[canonical];
    if (!fieldSpec) throw new Error(`catalog: ${version} view of ${kind.kind} names unknown field ${name}`);
    input.set(name, canonical);
    if (!fieldSpec.writeOnly) output.push({ name, canonical, spec: fieldSpec });
    if (fieldSpec.type === 'ref' || fieldSpec.type === 'typed_ref') expandable.add(name);
  }
  view = {
    kind,
    version,
    object: spec.object,
    path: spec.path,
    spec,
    output,
    input,
    expandable,
    versionName: (c) => reverse.get(c) ?? c,
  };
  cache.set(key, view);
  return view;
}

/**
 * Turns a request body in this version's names into canonical attributes. Fields the version does not
 * have are reported; the service validates the values.
 */
export function translateInput(view: View, body: unknown): { attributes: Record<string, Json>; errors: ParameterError[] } {
  const attributes: Record<string, Json> = {};
  const errors: ParameterError[] = [];
  if (!isPlainObject(body)) {
    return { attributes, errors: [{ field: '', type: 'invalid_value', message: 'The request body must be a JSON object.' }] };
  }
  for (const [name, value] of Object.entries(body)) {
    if (ECHOED.has(name)) continue;
    if (view.output.some((f) => f.timestamp && f.name === name)) continue;
    const canonical = view.input.get(name);
    if (!canonical) {
      errors.push(unknownField(name, view.object));
      continue;
    }
    const spec = view.kind.fields[canonical];
    const nullAs = view.spec.nullAs?.[name];
    if (nullAs !== undefined && value === nullAs) {
      attributes[canonical] = null;
      continue;
    }
    if (view.spec.asString?.includes(name) && typeof value === 'string' && /^-?\d{1,15}$/.test(value)) {
      attributes[canonical] = Number(value);
      continue;
    }
    if (spec.type === 'typed_ref' && isPlainObject(value) && value.type === undefined && spec.refKinds?.length === 1) {
      // A reference that can name one kind only may leave its type out (the reference's `vast_zone: {id}`).
      attributes[canonical] = { ...value, type: spec.refKinds[0] } as Json;
      continue;
    }
    if (spec.type === 'typed_ref' && isPlainObject(value) && typeof value.type === 'string') {
      const allowed = (spec.refKinds ?? []).map((k) => objectNameOf(k, view.version)).filter(Boolean);
      const target = kindForObject(view.version, value.type);
      if (!target || !allowed.includes(value.type)) {
        errors.push({ field: name, type: 'invalid_value', message: `'${name}.type' must be one of: ${allowed.join(', ')}.` });
        continue;
      }
      attributes[canonical] = { ...value, type: target.kind } as Json;
      continue;
    }
    attributes[canonical] = value as Json;
  }
  return { attributes, errors };
}

/** The collection path of a resource; a nested collection's `:param`s filled from its own references. */
export function collectionPath(view: View, attrs: Record<string, unknown>): string {
  const scope = view.spec.scope;
  if (!scope) return view.path;
  return view.path.replace(/:([A-Za-z_]+)/g, (_m, param: string) => String(attrs[scope[param]] ?? `:${param}`));
}

/** The object name a canonical kind has in `version` (v1 `image_banner` for `image_ad_item`). */
export function objectNameOf(kindName: string, version: ApiVersion): string | undefined {
  return findKind(kindName)?.views[version]?.object;
}

/** The resource in this version's shape, limited to `fields` when given (object, self, id always). */
export function renderResource(view: View, r: Resource, fields?: Set<string>): Record<string, unknown> {
  const attrs = r.attributes ?? {};
  const out: Record<string, unknown> = { object: view.object, self: `${collectionPath(view, attrs)}/${r.id}`, id: view.spec.stringId ? String(r.id) : r.id };
  for (const f of view.output) {
    if (fields && !fields.has(f.name)) continue;
    if (f.timestamp) {
      out[f.name] = f.timestamp === 'created' ? r.createdAt : r.updatedAt;
      continue;
    }
    let value = attrs[f.canonical] ?? null;
    if (f.spec?.type === 'typed_ref' && isPlainObject(value) && typeof value.type === 'string') {
      value = { id: value.id, type: objectNameOf(value.type, view.version) ?? value.type };
    }
    if (value === null && view.spec.nullAs?.[f.name] !== undefined) value = view.spec.nullAs[f.name];
    else if (value !== null && view.spec.asString?.includes(f.name)) value = String(value);
    out[f.name] = value;
  }
  return out;
}
