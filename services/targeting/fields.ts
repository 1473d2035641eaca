import type { FieldSpec } from '../shared/catalog/types';

/** Field specs the targeting kinds share. */
export { name } from '../shared/catalog/kinds/fields';
export const inclusive: FieldSpec = { type: 'boolean', default: true };
export const countryCode: FieldSpec = { type: 'string', minLength: 2, maxLength: 2, pattern: '^[A-Z]{2}$', patternHint: 'an ISO 3166-1 alpha-2 code in capitals, such as US' };
