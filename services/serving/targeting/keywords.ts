/**
 * Keyword targeting as the reference defines it: a placement's keywords are comma-separated, `*` is a
 * wildcard and a leading `-` excludes ("-paint" stops the ad where "paint" is given). The request's
 * keywords come from `kw` (comma-separated, or an array in a JSON body). Matching ignores case.
 */
export interface KeywordRule {
  include: RegExp[];
  exclude: RegExp[];
}

export function parseKeywords(text: string | null | undefined): KeywordRule | undefined {
  const terms = (text ?? '')
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  if (!terms.length) return undefined;
  const toRegExp = (t: string) => new RegExp(`^${t.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'u');
  return {
    include: terms.filter((t) => !t.startsWith('-')).map(toRegExp),
    exclude: terms.filter((t) => t.startsWith('-') && t.length > 1).map((t) => toRegExp(t.slice(1))),
  };
}

/** `excluded`: a negative keyword was given; `matched`: a positive one was. */
export function matchKeywords(rule: KeywordRule, requested: readonly string[]): { matched: boolean; excluded: boolean } {
  const given = requested.map((k) => k.trim().toLowerCase()).filter(Boolean);
  return {
    excluded: rule.exclude.some((re) => given.some((k) => re.test(k))),
    matched: rule.include.some((re) => given.some((k) => re.test(k))),
  };
}
