/**
 * The resource description language. One `ResourceKind` per resource drives the owning service's
 * validation and storage and the gateway's v1/v2 routes, field filtering and expansion.
 * Kinds are named canonically after their v2 object (`standard_zone`, `image_ad_item`); each API
 * version exposes a view of the kind under its own object name and path.
 */

export type ServiceName = 'accounts' | 'inventory' | 'selfserve' | 'reporting';
export type ApiVersion = 'v1' | 'v2';
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type FieldType =
  | 'string'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'object'
  | 'array'
  /** integer id of another resource (`ref` names its kind); expandable */
  | 'ref'
  /** `{id, type}` reference whose `type` is the referenced resource's object name; expandable */
  | 'typed_ref';

export interface FieldSpec {
  type: FieldType;
  /** Must be present on create. */
  required?: boolean;
  /** null is an accepted value. */
  nullable?: boolean;
  /** Stored on create when the field is omitted. */
  default?: Json | (() => Json);
  enum?: readonly (string | number)[];
  /** Inclusive bounds for integer and number fields. */
  min?: number;
  max?: number;
  /** Most decimal places a number may have (money: 2). */
  decimals?: number;
  minLength?: number;
  maxLength?: number;
  /** An empty string counts as "not given" (passwords: random when blank). */
  blankAsMissing?: boolean;
  /** For 'ref': 0 is taken as null, where the reference documents 0 as "none" (a PMP deal's geo target). */
  zeroAsNull?: boolean;
  format?: 'email' | 'url' | 'date' | 'size';
  /** A regular expression (JavaScript syntax, anchored by the author) a string must match. */
  pattern?: string;
  /** What a matching value is, for the error message ("an ISO 3166-1 alpha-2 code"). */
  patternHint?: string;
  /** For 'ref': the referenced kind. */
  ref?: string;
  /** For 'typed_ref': the kinds it may reference. */
  refKinds?: readonly string[];
  /**
   * The referenced resource owns this one: archiving it archives this resource too, unarchiving it
   * restores what it archived, deleting it deletes this resource.
   */
  parent?: boolean;
  /** What happens to this resource when the (non-parent) referenced resource is deleted. */
  onRefDelete?: 'delete' | 'nullify';
  /** Accepted on input, never returned (passwords). */
  writeOnly?: boolean;
  /** Set by the service; ignored on input. */
  readOnly?: boolean;
  /** Settable on create only; rejected on update. */
  createOnly?: boolean;
  /** Element spec of an 'array' field. */
  items?: FieldSpec;
  /** Known members of an 'object' field (others rejected when `closed`). */
  properties?: Record<string, FieldSpec>;
  closed?: boolean;
  /** Maximum JSON size in bytes of an 'object' or 'array' value. */
  maxBytes?: number;
  /**
   * For an 'array' of ids (at the top or a member of an 'object' field): the kind they name. Deleting
   * one of those resources takes its id out of every such list (the kind's hooks check that ids given exist).
   */
  idsOf?: string;
  /** Said of the field in the OpenAPI documents (what an extension of the reference means). */
  description?: string;
}

/** Relations restored only on request when their owner is unarchived. */
export type ArchiveGroup = 'campaign_assignments' | 'placements';

export type Operation = 'list' | 'create' | 'get' | 'update' | 'delete';

export interface VersionView {
  /** The `object` value in this version. */
  object: string;
  /** Collection path, e.g. `/v1/publishers`. */
  path: string;
  /**
   * Fields shown and accepted in this version, by their names in this version, in output order.
   * Default: every field of the kind.
   */
  fields?: readonly string[];
  /** Field names that differ in this version: version name -> canonical name. */
  rename?: Readonly<Record<string, string>>;
  /** Operations served (default all five). Others answer 501. */
  operations?: readonly Operation[];
  /** Operations that exist but are refused with 400 and this message (v2 flash create). */
  disabled?: Partial<Record<Operation, string>>;
  /** Archive/unarchive routes: v1 `GET /{id}/archive`, `/{id}/unarchive`; v2 also `/archived...`. */
  archive?: boolean;
  /**
   * v2 `DELETE /archived/{id}` as well: deletes an archived resource for good, with what its archive
   * took along. The reference offers it for campaigns and channels only, so it is asked for per view.
   */
  archivedDelete?: boolean;
  /**
   * A nested collection: `path` holds `:param` segments (`/v2/self-serve/portals/:portal/zones`) and each
   * binds a reference field of the kind (`{ portal: 'portal' }`). Lists are filtered by it, creates set
   * it, and a resource is only found under the path of its own parent.
   */
  scope?: Readonly<Record<string, string>>;
  /** The id is shown as a string (self-serve cart items). */
  stringId?: boolean;
  /** Fields this version shows as a value instead of null, and reads back as null (v2 `flexible_type`: 0). */
  nullAs?: Readonly<Record<string, Json>>;
  /** Integer fields this version gives as strings (v2 flash `version`); numeric strings are accepted. */
  asString?: readonly string[];
}

export interface ResourceKind {
  kind: string;
  service: ServiceName;
  /** Human name used in messages ("publisher", "image ad item"). */
  title: string;
  fields: Record<string, FieldSpec>;
  /** Output names of the created/modified timestamps, when the kind shows them. */
  timestamps?: { created?: string; modified?: string };
  archivable?: boolean;
  /**
   * A relation between resources (campaign assignments, placements) that is archived along with any
   * resource it references, and restored on unarchive only when this group is included
   * (`include_campaign_assignments`, `include_placements`) and everything it references still exists.
   */
  archiveGroup?: ArchiveGroup;
  views: Partial<Record<ApiVersion, VersionView>>;
}

/** A list-only collection over several kinds ("all types"), e.g. GET /v1/zones. */
export interface KindGroup {
  version: ApiVersion;
  path: string;
  kinds: readonly string[];
  /** Query parameters that filter the list by an id field: `report_config=1,2` keeps schedules of those configurations. */
  idFilters?: Readonly<Record<string, string>>;
}

export interface ParameterError {
  field: string;
  type: 'missing_field' | 'invalid_value' | 'unknown_field' | 'read_only' | 'invalid_reference';
  message: string;
}
