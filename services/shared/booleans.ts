/**
 * The platform's one boolean rule, for settings, query flags, report parameters and serving
 * parameters alike: true or 1, false or 0 (JSON bodies may give real booleans and numbers). Anything
 * else is not a boolean, and each caller refuses it naming its own parameter.
 */
export function parseBoolean(raw: unknown): boolean | undefined {
  if (raw === true || raw === 1 || raw === 'true' || raw === '1') return true;
  if (raw === false || raw === 0 || raw === 'false' || raw === '0') return false;
  return undefined;
}
