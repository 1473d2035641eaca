/**
 * Money is exact decimal: numeric columns in Postgres, decimal text in code and on gRPC. These two
 * helpers are the only crossings to and from the JSON numbers of the public API.
 *
 * A JSON number is parsed by JavaScript into a double. For a decimal of at most 15 significant digits
 * (every amount the API accepts: below 1e9 with at most two decimals) the double's shortest decimal
 * form, which `String()` gives, is exactly the digits the caller wrote, so reading through a number
 * loses nothing; the same holds the other way for rendering stored decimal text as a JSON number.
 */

const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;
const MAX_DIGITS = 15;

function significantDigits(text: string): number {
  return text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').length;
}

/** Decimal text of a number parsed from JSON (already checked for range and decimal places). */
export function moneyText(value: number): string {
  const text = String(value);
  if (!PLAIN_DECIMAL.test(text) || significantDigits(text) > MAX_DIGITS) throw new RangeError(`${text} is not an exact decimal amount`);
  return text;
}

/** A stored decimal (numeric column as text) as the JSON number the API renders. */
export function moneyNumber(text: string): number {
  if (!PLAIN_DECIMAL.test(text)) throw new RangeError(`'${text}' is not decimal text`);
  // Trailing zeros after the point carry no value: 100.00 is rendered as 100.
  const trimmed = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  if (significantDigits(trimmed) > MAX_DIGITS) throw new RangeError(`${text} has more digits than a JSON number keeps exactly`);
  return Number(trimmed);
}
