import type { FieldSpec, KindGroup, ResourceKind } from '../types';

/**
 * Who sees an ad and where: geo, day-parting, platform, postal-code, list and data-key targets, the data
 * lists and data keys they read, and channels with their zone assignments. Placements name a target of
 * each kind; serving applies them. Paths, field names and enums follow the reference OpenAPI's
 * `/geo-targets`, `/day-parting`, `/platform-targets`, `/postal-code-targets`, `/list-targets`,
 * `/data-lists`, `/data-keys`, `/data-key-targets`, `/channels` and `/channel-zone-assignments`; rules the
 * field language cannot say (time ranges, target logic) are checked in inventory's targeting hooks.
 */

const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
const inclusive: FieldSpec = { type: 'boolean', default: true };
const countryCode: FieldSpec = { type: 'string', minLength: 2, maxLength: 2, pattern: '^[A-Z]{2}$', patternHint: 'an ISO 3166-1 alpha-2 code in capitals, such as US' };

export const CONTINENTS = ['Africa', 'Antarctica', 'Asia', 'Europe', 'North America', 'Oceania', 'South America'] as const;

export const geoTarget: ResourceKind = {
  kind: 'geo_target',
  service: 'inventory',
  title: 'geo target',
  fields: {
    name,
    areas: {
      type: 'array',
      required: true,
      minLength: 1,
      maxLength: 500,
      maxBytes: 65536,
      items: {
        type: 'object',
        closed: true,
        properties: {
          continent: { type: 'string', enum: CONTINENTS },
          country: countryCode,
          region: { type: 'string', maxLength: 255 },
          city: { type: 'string', maxLength: 255 },
        },
      },
    },
    // Extra distance around a targeted city (reference: only meaningful with a city).
    range: { type: 'integer', min: 0, max: 1000, default: 0 },
    unit: { type: 'string', enum: ['miles', 'kilometers'], default: 'kilometers' },
    inclusive,
  },
  views: { v2: { object: 'geo_target', path: '/v2/geo-targets' } },
};

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const dayRanges: FieldSpec = {
  type: 'array',
  maxLength: 48,
  items: { type: 'string', pattern: '^\\d{2}:\\d{2}:\\d{2}-\\d{2}:\\d{2}:\\d{2}$', patternHint: 'a time range HH:MM:SS-HH:MM:SS, such as 09:00:00-17:30:00' },
};

export const dayParting: ResourceKind = {
  kind: 'day_parting',
  service: 'inventory',
  title: 'day parting',
  fields: {
    name,
    // true: the hours are in the account's time zone; false: in the viewer's (from the request's geo).
    use_member_timezone: { type: 'boolean', default: false },
    is_template: { type: 'boolean', default: false },
    // The time zone the hours are read in when use_member_timezone is true (an IANA name; UTC when unset).
    timezone: { type: 'string', nullable: true, maxLength: 64, default: null },
    ranges: {
      type: 'object',
      required: true,
      closed: true,
      properties: Object.fromEntries(WEEKDAYS.map((d) => [d, dayRanges])),
    },
    uses_advanced_format: { type: 'boolean', readOnly: true },
  },
  views: { v2: { object: 'day_parting', path: '/v2/day-parting' } },
};

export const DESKTOP_BROWSERS = ['chrome', 'safari', 'firefox', 'opera', 'edge', 'ie', 'others'] as const;
export const MOBILE_BROWSERS = ['chrome', 'safari', 'firefox', 'opera', 'blackberry', 'uc', 'edge', 'samsung', 'others'] as const;
export const DESKTOP_OSES = ['mac', 'windows', 'chromeos', 'ubuntu', 'linux', 'others'] as const;
export const MOBILE_OSES = ['android', 'ios', 'blackberry', 'windows_phone', 'others'] as const;

const switches = (names: readonly string[]): FieldSpec => ({
  type: 'object',
  closed: true,
  properties: Object.fromEntries(names.map((n) => [n, { type: 'boolean' } as FieldSpec])),
});

export const platformTarget: ResourceKind = {
  kind: 'platform_target',
  service: 'inventory',
  title: 'platform target',
  fields: {
    name,
    // A preset form factor; "any"/"specific" use the browser and OS switches below.
    platform: { type: 'string', enum: ['any', 'specific', 'mobile', 'tablet', 'mobile_and_tablet', 'desktop'], default: 'any' },
    browser_targets: {
      type: 'object',
      closed: true,
      default: null,
      nullable: true,
      properties: { desktop: switches(DESKTOP_BROWSERS), mobile: switches(MOBILE_BROWSERS) },
    },
    os_targets: {
      type: 'object',
      closed: true,
      default: null,
      nullable: true,
      properties: { desktop: switches(DESKTOP_OSES), mobile: switches(MOBILE_OSES) },
    },
    // Screen size bounds in CSS pixels (requests give sw/sh); null: no bound.
    min_screen_width: { type: 'integer', nullable: true, min: 0, max: 100000, default: null },
    max_screen_width: { type: 'integer', nullable: true, min: 0, max: 100000, default: null },
  },
  views: { v2: { object: 'platform_target', path: '/v2/platform-targets' } },
};

export const postalCodeTarget: ResourceKind = {
  kind: 'postal_code_target',
  service: 'inventory',
  title: 'postal code target',
  fields: {
    label: name,
    inclusive,
    locations: {
      type: 'array',
      required: true,
      minLength: 1,
      maxLength: 250,
      maxBytes: 262144,
      items: {
        type: 'object',
        closed: true,
        properties: {
          country: { ...countryCode, required: true },
          postal_codes: { type: 'array', required: true, minLength: 1, maxLength: 10000, items: { type: 'string', minLength: 1, maxLength: 16 } },
        },
      },
    },
  },
  views: { v2: { object: 'postal_code_target', path: '/v2/postal-code-targets' } },
};

export const dataList: ResourceKind = {
  kind: 'data_list',
  service: 'inventory',
  title: 'data list',
  fields: {
    label: name,
    // The values a list target matches against the request's `_abdk` value of `key` (e.g. user ids).
    key: { type: 'string', minLength: 1, maxLength: 32, default: 'list' },
    values: { type: 'array', default: [], maxLength: 50000, maxBytes: 900000, items: { type: 'string', minLength: 1, maxLength: 255 } },
  },
  views: { v2: { object: 'data_list', path: '/v2/data-lists' } },
};

export const listTarget: ResourceKind = {
  kind: 'list_target',
  service: 'inventory',
  title: 'list target',
  fields: {
    label: name,
    inclusive,
    data_list: { type: 'ref', ref: 'data_list', nullable: true, default: null, onRefDelete: 'nullify' },
  },
  views: { v2: { object: 'list_target', path: '/v2/list-targets' } },
};

export const DATA_KEY_TYPES = ['STRING', 'NUMBER', 'DATE', 'DATETIME', 'TIME'] as const;

export const dataKey: ResourceKind = {
  kind: 'data_key',
  service: 'inventory',
  title: 'data key',
  fields: {
    name: { type: 'string', required: true, minLength: 1, maxLength: 32, pattern: '^[A-Za-z_][A-Za-z0-9_]*$', patternHint: 'letters, digits and underscores, not starting with a digit' },
    type: { type: 'string', required: true, enum: DATA_KEY_TYPES },
  },
  views: { v2: { object: 'data_key', path: '/v2/data-keys' } },
};

export const dataKeyTarget: ResourceKind = {
  kind: 'data_key_target',
  service: 'inventory',
  title: 'data key target',
  fields: {
    name,
    // JSON logic over data keys, e.g. ["OR", {"age": {">=": "18"}}, {"plan": {"=": "gold"}}].
    target: { type: 'string', required: true, minLength: 2, maxLength: 16384 },
  },
  views: { v2: { object: 'data_key_target', path: '/v2/data-key-targets' } },
};

export const channel: ResourceKind = {
  kind: 'channel',
  service: 'inventory',
  title: 'channel',
  archivable: true,
  fields: {
    name,
    priority: { type: 'string', enum: ['sponsorship', 'standard', 'network', 'bulk', 'house'], default: 'standard' },
    use_share_of_voice: { type: 'boolean', default: false },
  },
  views: { v2: { object: 'channel', path: '/v2/channels', archive: true } },
};

export const channelZoneAssignment: ResourceKind = {
  kind: 'channel_zone_assignment',
  service: 'inventory',
  title: 'channel zone assignment',
  fields: {
    channel: { type: 'ref', ref: 'channel', required: true, parent: true, createOnly: true },
    zone: { type: 'typed_ref', refKinds: ['standard_zone', 'email_zone'], required: true, onRefDelete: 'delete', createOnly: true },
  },
  views: { v2: { object: 'channel_zone_assignment', path: '/v2/channel-zone-assignments', operations: ['list', 'create', 'get', 'delete'] } },
};

export const kinds: ResourceKind[] = [geoTarget, dayParting, platformTarget, postalCodeTarget, dataList, listTarget, dataKey, dataKeyTarget, channel, channelZoneAssignment];

/** The reference also lists data lists under `/v2/data-targets` (list only; each keeps its `/v2/data-lists` self). */
export const groups: KindGroup[] = [{ version: 'v2', path: '/v2/data-targets', kinds: ['data_list'] }];
