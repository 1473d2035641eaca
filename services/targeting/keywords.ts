import { matchKeywords, parseKeywords, type KeywordRule } from '../serving/targeting/keywords';
import { registerRule } from './rule';

/**
 * Keyword targeting, from the placement's own `keywords` and match method: `required` and `filtered`
 * exclude an ad no keyword of the request matches; `preferred` serves matches ahead of the rest. A
 * negative keyword given excludes the ad in every method.
 */

export interface KeywordTarget {
  rule: KeywordRule;
  match: 'required' | 'preferred' | 'filtered';
}

registerRule<KeywordTarget>({
  name: 'keywords',
  resolve: (p) => {
    if (!p.placement.keywords) return undefined;
    const rule = p.parsed(p.placementEntity, () => parseKeywords(p.placement.keywords) ?? null);
    return rule ? { rule, match: (p.placement.keywordsMatchMethod || 'preferred') as KeywordTarget['match'] } : undefined;
  },
  evaluate: (t, r) => {
    const { matched, excluded } = matchKeywords(t.rule, r.keywords);
    if (excluded) return { ok: false, rule: 'keywords', detail: 'a negative keyword was given' };
    if (!matched && t.rule.include.length && t.match !== 'preferred') return { ok: false, rule: 'keywords', detail: `no keyword matched (match method ${t.match})` };
    return { ok: true, preferred: matched && t.match === 'preferred' };
  },
});
