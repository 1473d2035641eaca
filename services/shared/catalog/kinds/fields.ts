import type { FieldSpec } from '../types';

/** Field specs that many inventory kinds share. */

/** The display ad item kinds, the one list every module names them by (v1 banners are the first two). */
export const DISPLAY_AD_ITEM_KINDS = ['image_ad_item', 'flash_ad_item', 'custom_html_ad_item', 'native_ad_item', 'rich_media_ad_item'] as const;

export const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
export const optionalName: FieldSpec = { type: 'string', nullable: true, maxLength: 255, default: null };
export const pixels: FieldSpec = { type: 'integer', required: true, min: 1, max: 10000 };
export const url: FieldSpec = { type: 'string', format: 'url', nullable: true, maxLength: 2048, default: null };
export const html: FieldSpec = { type: 'string', nullable: true, maxLength: 65536, default: null };
export const metadata: FieldSpec = { type: 'object', nullable: true, maxBytes: 8192, default: null };
export const optionalInt: FieldSpec = { type: 'integer', nullable: true, min: 0, default: null };
export const money: FieldSpec = { type: 'number', nullable: true, min: 0 };
