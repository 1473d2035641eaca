import type { FieldSpec, KindGroup, ResourceKind } from '../types';
import { DISPLAY_AD_ITEM_KINDS, name, pixels, url, html, metadata } from './fields';

/**
 * v2 ad items beyond the image and flash items shared with v1: custom HTML, native and rich media
 * ad items, and companion products (VAST ad items are video.ts's). Field names, types and enums follow spec section 2.2 and,
 * where it says "not shown", the reference OpenAPI.
 */

/** Fields every v2 display ad item of this module carries (reference: *_ad_item_get). */
const adItemBase: Record<string, FieldSpec> = {
  name,
  height: pixels,
  width: pixels,
  location: url,
  tracking_pixel: url,
  // Pixels given with only a url get an id (services/inventory/hooks/); an id keeps the pixel's identity on update.
  tracking_pixels: {
    type: 'array',
    default: [],
    maxLength: 20,
    items: { type: 'object', closed: true, properties: { id: { type: 'integer', min: 1 }, url: { type: 'string', format: 'url', required: true, maxLength: 2048 } } },
  },
  metadata,
  trusted_redirect_domains: { type: 'array', default: [], maxLength: 100, items: { type: 'string', minLength: 1, maxLength: 255 } },
  // Spec 2.2: a boolean-like value given as a string; set by the service ("false" for API-made items).
  is_self_serve: { type: 'string', readOnly: true },
};
const adItemOutput = ['name', 'height', 'width', 'location', 'tracking_pixel', 'tracking_pixels', 'metadata', 'trusted_redirect_domains', 'is_self_serve'];
const adItemTimestamps = { created: 'created_date', modified: 'last_modified' };
const expandHorizontal: FieldSpec = { type: 'string', enum: ['none', 'left', 'right'], default: 'none' };
const expandVertical: FieldSpec = { type: 'string', enum: ['none', 'up', 'down'], default: 'none' };

export const customHtmlAdItem: ResourceKind = {
  kind: 'custom_html_ad_item',
  service: 'inventory',
  title: 'custom HTML ad item',
  timestamps: adItemTimestamps,
  fields: {
    ...adItemBase,
    custom_html: { type: 'string', required: true, minLength: 1, maxLength: 65536 },
    html_content_below: html,
    expand_horizontal_direction: expandHorizontal,
    expand_vertical_direction: expandVertical,
  },
  views: {
    v2: {
      object: 'custom_html_ad_item',
      path: '/v2/ad-items/custom-html',
      fields: [...adItemOutput, 'custom_html', 'html_content_below', 'expand_horizontal_direction', 'expand_vertical_direction', 'created_date', 'last_modified'],
    },
  },
};

export const nativeAdItem: ResourceKind = {
  kind: 'native_ad_item',
  service: 'inventory',
  title: 'native ad item',
  timestamps: adItemTimestamps,
  fields: {
    ...adItemBase,
    template: { type: 'ref', ref: 'native_template', required: true, onRefDelete: 'nullify' },
    // Template variable id -> the value shown for it (text, number, or an image id for image variables).
    variables: { type: 'object', default: {}, maxBytes: 16384 },
  },
  views: {
    v2: {
      object: 'native_ad_item',
      path: '/v2/ad-items/native',
      fields: [...adItemOutput, 'template', 'variables', 'created_date', 'last_modified'],
    },
  },
};

export const richMediaAdItem: ResourceKind = {
  kind: 'rich_media_ad_item',
  service: 'inventory',
  title: 'rich media ad item',
  timestamps: adItemTimestamps,
  fields: {
    ...adItemBase,
    creative: { type: 'ref', ref: 'rich_media_creative', required: true, onRefDelete: 'nullify' },
    html_content_below: html,
    expand_horizontal_direction: expandHorizontal,
    expand_vertical_direction: expandVertical,
  },
  views: {
    v2: {
      object: 'rich_media_ad_item',
      path: '/v2/ad-items/rich-media',
      fields: [...adItemOutput, 'creative', 'html_content_below', 'expand_horizontal_direction', 'expand_vertical_direction', 'created_date', 'last_modified'],
    },
  },
};

/** Companion products: one kind per parent ad item type, same shape (reference ad_item_companion_product). */
function companionProduct(parentKind: 'image_ad_item' | 'native_ad_item', segment: string): ResourceKind {
  return {
    kind: `${segment}_companion_product`,
    service: 'inventory',
    title: 'companion product',
    fields: {
      ad_item: { type: 'ref', ref: parentKind, required: true, parent: true, createOnly: true },
      catalog: { type: 'integer', required: true, min: 1 },
      product_identifier: { type: 'string', required: true, minLength: 1, maxLength: 255 },
    },
    views: {
      v2: {
        object: 'ad_item_companion_product',
        path: `/v2/ad-items/${segment}/:ad_item_id/companions/products`,
        scope: { ad_item_id: 'ad_item' },
        fields: ['catalog', 'product_identifier'],
      },
    },
  };
}
export const imageCompanionProduct = companionProduct('image_ad_item', 'image');
export const nativeCompanionProduct = companionProduct('native_ad_item', 'native');

export const kinds: ResourceKind[] = [customHtmlAdItem, nativeAdItem, richMediaAdItem, imageCompanionProduct, nativeCompanionProduct];

export const groups: KindGroup[] = [
  { version: 'v2', path: '/v2/ad-items', kinds: [...DISPLAY_AD_ITEM_KINDS] },
];
