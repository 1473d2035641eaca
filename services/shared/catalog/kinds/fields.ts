import type { FieldSpec } from '../types';

/** Field specs that many inventory kinds share. */

export const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
export const optionalName: FieldSpec = { type: 'string', nullable: true, maxLength: 255, default: null };
export const pixels: FieldSpec = { type: 'integer', required: true, min: 1, max: 10000 };
export const url: FieldSpec = { type: 'string', format: 'url', nullable: true, maxLength: 2048, default: null };
export const html: FieldSpec = { type: 'string', nullable: true, maxLength: 65536, default: null };
export const metadata: FieldSpec = { type: 'object', nullable: true, maxBytes: 8192, default: null };
export const optionalInt: FieldSpec = { type: 'integer', nullable: true, min: 0, default: null };
export const money: FieldSpec = { type: 'number', nullable: true, min: 0 };
