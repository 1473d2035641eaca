import type { FieldSpec, KindGroup, ResourceKind } from '../types';

/**
 * Self-serve: portals and their zones (what a customer can buy), carts and cart items (what a customer
 * is about to buy), customers (an advertiser with a wallet), orders and order items (what was bought).
 * Wallet balances, wallet transactions and notices live in typed tables of the selfserve service and
 * are reached through its SelfServe gRPC API; `balance` is filled in from there.
 */

const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
const text: FieldSpec = { type: 'string', nullable: true, maxLength: 255, default: null };
const money: FieldSpec = { type: 'number', nullable: true, min: 0, max: 1e9, default: null };
const out = (type: FieldSpec['type'], extra: Partial<FieldSpec> = {}): FieldSpec => ({ type, readOnly: true, ...extra });

export const PRICING_MODELS = ['fixed-CPM', 'fixed-CPC', 'auction'] as const;
export const CART_ITEM_TYPES = ['image', 'html5', 'raw', 'template'] as const;

export const portal: ResourceKind = {
  kind: 'portal',
  service: 'selfserve',
  title: 'portal',
  timestamps: { created: 'created_date', modified: 'last_modified' },
  fields: {
    name,
    description: { type: 'string', nullable: true, maxLength: 2048, default: null },
  },
  views: { v2: { object: 'portal', path: '/v2/self-serve/portals' } },
};

export const portalZone: ResourceKind = {
  kind: 'portal_zone',
  service: 'selfserve',
  title: 'portal zone',
  timestamps: { created: 'created_date', modified: 'last_modified' },
  fields: {
    portal: { type: 'ref', ref: 'portal', required: true, parent: true, createOnly: true },
    /** The account's standard zone sold through this portal zone. */
    zone: { type: 'ref', ref: 'standard_zone', required: true },
    /** The zone's size, which the ad items bought here get; copied when the zone is set. */
    width: out('integer'),
    height: out('integer'),
    name,
    pricing_model: { type: 'string', required: true, enum: PRICING_MODELS },
    /** Price per thousand impressions (fixed-CPM; the minimum bid of an auction). */
    cpm: money,
    /** Price per click (fixed-CPC; the minimum bid of an auction). */
    cpc: money,
    /** Impressions (fixed-CPM) or clicks (fixed-CPC) one cart item buys. */
    quantity: { type: 'integer', nullable: true, min: 1, max: 1_000_000_000, default: null },
    /** Price factor applied to every cart item of this zone; spelled as the cart item's field. */
    multipler: { type: 'number', min: 0.01, max: 1000, default: 1 },
  },
  views: { v2: { object: 'portal_zone', path: '/v2/self-serve/portals/:portal/zones', scope: { portal: 'portal' } } },
};

export const cart: ResourceKind = {
  kind: 'cart',
  service: 'selfserve',
  title: 'cart',
  fields: {
    portal: { type: 'ref', ref: 'portal', required: true, parent: true, createOnly: true },
    set_dates: { type: 'boolean' },
    start_date: { type: 'string', format: 'date', nullable: true },
    end_date: { type: 'string', format: 'date', nullable: true },
  },
  views: {
    v2: {
      object: 'cart',
      path: '/v2/self-serve/portals/:portal/cart',
      scope: { portal: 'portal' },
      operations: ['create', 'get', 'update', 'delete'],
    },
  },
};

/** `{id, value}`: the value is text or a number (an image id); the selfserve service checks it and the ids. */
const templateVariable: FieldSpec = {
  type: 'object',
  properties: { id: { type: 'integer', required: true, min: 1 } },
};

export const cartItem: ResourceKind = {
  kind: 'cart_item',
  service: 'selfserve',
  title: 'cart item',
  fields: {
    /** The portal the cart belongs to; bound from the path, not shown. */
    portal: { type: 'ref', ref: 'portal', createOnly: true },
    cart: { type: 'ref', ref: 'cart', required: true, parent: true, createOnly: true },
    portal_zone: { type: 'ref', ref: 'portal_zone', required: true, createOnly: true, onRefDelete: 'delete' },
    type: { type: 'string', enum: CART_ITEM_TYPES, default: 'image' },
    destination: { type: 'string', format: 'url', nullable: true, maxLength: 2048, default: null },
    custom_html: { type: 'string', nullable: true, maxLength: 65536, default: null },
    alt_text: text,
    keywords: { type: 'string', nullable: true, maxLength: 1024, default: null },
    file: { type: 'integer', nullable: true, min: 1, default: null },
    template: { type: 'ref', ref: 'native_template', nullable: true, default: null },
    template_variables: { type: 'array', items: templateVariable, maxLength: 100, maxBytes: 65536, default: [] },
    bid_amount: money,
    daily_limit: money,
    total_limit: money,
    cpm: out('number'),
    cpc: out('number'),
    quantity: out('integer'),
    multipler: out('number'),
  },
  views: {
    v2: {
      object: 'cart-item',
      path: '/v2/self-serve/portals/:portal/cart/:cart/cart-items',
      scope: { portal: 'portal', cart: 'cart' },
      stringId: true,
      fields: [
        'type', 'destination', 'custom_html', 'alt_text', 'keywords', 'file', 'template', 'template_variables',
        'bid_amount', 'daily_limit', 'total_limit', 'portal_zone', 'cpm', 'cpc', 'quantity', 'multipler', 'cart',
      ],
    },
  },
};

export const customer: ResourceKind = {
  kind: 'customer',
  service: 'selfserve',
  title: 'customer',
  timestamps: { created: 'created_date' },
  fields: {
    email: { type: 'string', format: 'email', required: true, maxLength: 255 },
    password: { type: 'string', required: true, writeOnly: true, minLength: 8, maxLength: 255 },
    /** The portal the customer may use. */
    portal: { type: 'ref', ref: 'portal', required: true },
    first_name: text,
    last_name: text,
    company_name: text,
    advertiser: out('ref', { ref: 'advertiser' }),
    balance: out('number'),
    low_funds_amount: { type: 'number', min: 0, max: 1e9, default: 0 },
    low_funds_notify: { type: 'boolean', default: false },
    zero_funds_notify: { type: 'boolean', default: false },
    /** Last sign-in to the self-serve portal; null until the customer signs in there. */
    last_accessed: out('string'),
  },
  views: {
    v2: {
      object: 'customer',
      path: '/v2/self-serve/customers',
      operations: ['list', 'create', 'get', 'update'],
      fields: [
        'email', 'first_name', 'last_name', 'company_name', 'portal', 'advertiser', 'balance', 'low_funds_amount',
        'low_funds_notify', 'zero_funds_notify', 'created_date', 'last_accessed', 'password',
      ],
    },
  },
};

/** Orders are written by the selfserve service when a cart is converted (POST /v2/self-serve/orders). */
export const order: ResourceKind = {
  kind: 'order',
  service: 'selfserve',
  title: 'order',
  timestamps: { created: 'created_date' },
  fields: {
    customer: out('ref', { ref: 'customer' }),
    portal: out('ref', { ref: 'portal' }),
    cart: out('integer'),
    advertiser: out('ref', { ref: 'advertiser' }),
    campaign: out('ref', { ref: 'standard_campaign' }),
    /**
     * `pending` while the inventory is being created, then `placed`; `failed` (its hold already released)
     * until what it made in inventory is removed, with the order.
     */
    status: out('string'),
    /** Exact sum of the items' prices rounded once to the cent, half up (kept in a numeric column). */
    total: out('number'),
    start_date: out('string'),
    end_date: out('string'),
  },
  views: { v2: { object: 'order', path: '/v2/self-serve/orders', operations: ['list', 'get'] } },
};

export const orderItem: ResourceKind = {
  kind: 'order_item',
  service: 'selfserve',
  title: 'order item',
  fields: {
    order: out('ref', { ref: 'order' }),
    cart_item: out('string'),
    portal_zone: out('ref', { ref: 'portal_zone' }),
    zone: out('ref', { ref: 'standard_zone' }),
    type: out('string'),
    ad_item: out('typed_ref', { refKinds: ['image_ad_item', 'custom_html_ad_item', 'native_ad_item'] }),
    placement: out('ref', { ref: 'placement' }),
    pricing_model: out('string'),
    cpm: out('number'),
    cpc: out('number'),
    quantity: out('integer'),
    multipler: out('number'),
    bid_amount: out('number'),
    daily_limit: out('number'),
    total_limit: out('number'),
    /** Exact and unrounded, so it may have more than two decimals (kept in a numeric column). */
    price: out('number'),
  },
  views: { v2: { object: 'order_item', path: '/v2/self-serve/orders/:order/items', scope: { order: 'order' }, operations: ['list', 'get'] } },
};

export const kinds: ResourceKind[] = [portal, portalZone, cart, cartItem, customer, order, orderItem];

export const groups: KindGroup[] = [];
