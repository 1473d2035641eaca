import type { FieldSpec, ResourceKind } from '../types';

const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
const email: FieldSpec = { type: 'string', format: 'email', nullable: true, maxLength: 255 };
/** Login password of the publisher's or advertiser's portal user: hashed, random when blank. */
const password: FieldSpec = { type: 'string', writeOnly: true, minLength: 8, maxLength: 255, blankAsMissing: true, nullable: true };
const metadata: FieldSpec = { type: 'object', nullable: true, maxBytes: 8192 };

export const publisher: ResourceKind = {
  kind: 'publisher',
  service: 'accounts',
  title: 'publisher',
  archivable: true,
  fields: {
    name,
    email,
    password,
    can_admin_account: { type: 'boolean', default: false },
    can_approve_ads: { type: 'boolean', default: false },
    can_change_password: { type: 'boolean', default: false },
    can_view_wordpress_key: { type: 'boolean', default: true },
    default_payout_percent: { type: 'number', nullable: true, min: 0, max: 100, default: null },
    default_payout: {
      type: 'object',
      nullable: true,
      default: null,
      closed: true,
      properties: {
        type: { type: 'string', required: true, enum: ['percent', 'rate'] },
        cpm: { type: 'number', min: 0 },
        cpc: { type: 'number', min: 0 },
        cpa: { type: 'number', min: 0 },
      },
    },
    domain: { type: 'string', nullable: true, maxLength: 255, default: null },
    seller_type: { type: 'string', nullable: true, enum: ['PUBLISHER', 'INTERMEDIARY', 'BOTH'], default: null },
    metadata,
  },
  views: {
    v1: {
      object: 'publisher',
      path: '/v1/publishers',
      archive: true,
      fields: ['can_admin_account', 'can_approve_ads', 'can_change_password', 'default_payout_percent', 'email', 'name', 'password'],
    },
    v2: {
      object: 'publisher',
      path: '/v2/publishers',
      archive: true,
      fields: [
        'can_admin_account', 'can_approve_ads', 'can_change_password', 'can_view_wordpress_key', 'default_payout',
        'default_payout_percent', 'email', 'name', 'domain', 'seller_type', 'metadata', 'password',
      ],
    },
  },
};

export const advertiser: ResourceKind = {
  kind: 'advertiser',
  service: 'accounts',
  title: 'advertiser',
  archivable: true,
  fields: {
    name,
    email,
    password,
    /** True once a password was chosen by the caller (a generated one is unknown to anybody). */
    has_password: { type: 'boolean', readOnly: true },
    can_change_password: { type: 'boolean', default: false },
    can_add_ad_items: { type: 'boolean', default: false },
    self_serve_customer: { type: 'ref', ref: 'customer', readOnly: true },
    metadata,
  },
  views: {
    v1: {
      object: 'advertiser',
      path: '/v1/advertisers',
      archive: true,
      fields: ['can_change_password', 'can_add_banners', 'email', 'name', 'has_password', 'password'],
      rename: { can_add_banners: 'can_add_ad_items' },
    },
    v2: {
      object: 'advertiser',
      path: '/v2/advertisers',
      archive: true,
      fields: ['has_password', 'self_serve_customer', 'can_change_password', 'can_add_ad_items', 'email', 'name', 'metadata', 'password'],
    },
  },
};

/** A header-bidding partner; `parameters` are the partner's own and are replaced wholesale on update. */
export const bidder: ResourceKind = {
  kind: 'bidder',
  service: 'accounts',
  title: 'bidder',
  timestamps: { created: 'created_date' },
  fields: {
    bidder_code: { type: 'string', required: true, minLength: 1, maxLength: 64 },
    name,
    parameters: { type: 'object', required: true, maxBytes: 8192 },
  },
  views: {
    v1: { object: 'bidder', path: '/v1/bidders', fields: ['bidder_code', 'created_date', 'name', 'parameters'] },
    v2: { object: 'bidder', path: '/v2/bidders', fields: ['bidder_code', 'name', 'parameters'] },
  },
};

export const kinds: ResourceKind[] = [publisher, advertiser, bidder];
