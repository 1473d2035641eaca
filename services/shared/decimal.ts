/**
 * Exact decimal arithmetic on money text ("0.0375") with BigInt at a fixed scale, so sums and ratios
 * of numeric columns never pass through binary floats.
 */
export const SCALE = 9;
const FACTOR = 10n ** BigInt(SCALE);

export function parseDecimal(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = (m[3] ?? '').slice(0, SCALE).padEnd(SCALE, '0');
  const v = BigInt(m[2]) * FACTOR + BigInt(frac || '0');
  return m[1] ? -v : v;
}

/** Decimal text with at most `places` decimals (rounded half up), trailing zeros dropped. */
export function formatDecimal(v: bigint, places = 6): string {
  const neg = v < 0n;
  let abs = neg ? -v : v;
  const drop = 10n ** BigInt(SCALE - places);
  abs = (abs + drop / 2n) / drop;
  const unit = 10n ** BigInt(places);
  const whole = abs / unit;
  const frac = (abs % unit).toString().padStart(places, '0').replace(/0+$/, '');
  return `${neg && abs !== 0n ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** v / n at the fixed scale (0 when n is 0), rounded half up. */
export function divide(v: bigint, n: number | bigint): bigint {
  const d = BigInt(n);
  if (d === 0n) return 0n;
  return (v * 2n + d) / (2n * d);
}
