import { parseBoolean } from './booleans';
import type { ParameterError } from './catalog/types';

/**
 * Reading query-string values into typed ones, once, where HTTP is parsed: each refusal names its
 * parameter and says what to send instead.
 */

/** The most ids one list parameter may name. */
export const MAX_IDS = 1000;

export class QueryValues {
  readonly errors: ParameterError[] = [];

  private refuse(field: string, message: string): void {
    if (!this.errors.some((e) => e.field === field)) this.errors.push({ field, type: 'invalid_value', message });
  }

  /** A boolean (the platform's rule); '' (absent) is undefined. */
  flag(raw: string, name: string): boolean | undefined {
    if (raw === '') return undefined;
    const value = parseBoolean(raw);
    if (value === undefined) this.refuse(name, `'${name}' must be true or false.`);
    return value;
  }

  /** A comma-separated list of positive integer ids; '' (absent) is none. */
  ids(raw: string, name: string): number[] {
    if (raw === '') return [];
    const parts = raw.split(',').map((s) => s.trim());
    if (parts.length > MAX_IDS || parts.some((p) => !/^[1-9]\d{0,15}$/.test(p) || !Number.isSafeInteger(Number(p)))) {
      this.refuse(name, `'${name}' must be a comma-separated list of up to ${MAX_IDS} positive integer ids.`);
      return [];
    }
    return parts.map(Number);
  }
}
