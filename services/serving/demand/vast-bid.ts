/**
 * A winning VAST bid is served as the buyer's own document, with this platform's tracking added beside
 * the buyer's: an Impression in each ad, and a ClickTracking in each Linear's VideoClicks, so that the
 * impression and the click count here as they do for the buyer. Each is put where the document's VAST
 * version's schema allows it, which differs between 2.0/3.0 and 4.x.
 */

const cdata = (url: string) => `<![CDATA[${url}]]>`;

/** The buyer's document with `impression` in each InLine or Wrapper and `click` in each Linear's clicks. */
export function trackedVastBid(adm: string, urls: { impression: string; click: string }): string {
  const ours = `<Impression>${cdata(urls.impression)}</Impression>`;
  // Before the ad's first Impression, or before its Creatives when it has none.
  const withImpression = adm.replace(
    /<(InLine|Wrapper)(\s[^>]*)?>([\s\S]*?)(<Impression[\s>]|<Creatives[\s>])/g,
    (_m, tag: string, attrs: string | undefined, head: string, next: string) => `<${tag}${attrs ?? ''}>${head}${ours}${next}`,
  );
  const v4 = /<VAST\b[^>]*\bversion\s*=\s*["']4/.test(adm);
  const tracking = `<ClickTracking>${cdata(urls.click)}</ClickTracking>`;
  return withImpression.replace(/<Linear(\s[^>]*)?>[\s\S]*?<\/Linear>/g, (linear) => {
    if (/<VideoClicks\s*\/>/.test(linear)) return linear.replace(/<VideoClicks\s*\/>/, `<VideoClicks>${tracking}</VideoClicks>`);
    if (/<VideoClicks[\s>]/.test(linear)) {
      // Beside the buyer's own trackers is valid in every version; else where the version puts trackers:
      // 4.x before the click-through, 2.0/3.0 after it.
      if (/<ClickTracking[\s>]/.test(linear)) return linear.replace(/<ClickTracking[\s>]/, (m) => `${tracking}${m}`);
      if (!v4 && /<\/ClickThrough>/.test(linear)) return linear.replace(/<\/ClickThrough>/, (m) => `${m}${tracking}`);
      return linear.replace(/<VideoClicks(\s[^>]*)?>/, (m) => `${m}${tracking}`);
    }
    // No clicks of its own: 2.0/3.0 put VideoClicks before MediaFiles, 4.x after them.
    const clicks = `<VideoClicks>${tracking}</VideoClicks>`;
    if (v4) return /<\/MediaFiles>/.test(linear) ? linear.replace(/<\/MediaFiles>/, (m) => `${m}${clicks}`) : linear.replace(/<\/Linear>$/, `${clicks}</Linear>`);
    return /<MediaFiles[\s>]/.test(linear) ? linear.replace(/<MediaFiles[\s>]/, (m) => `${clicks}${m}`) : linear.replace(/<\/Linear>$/, `${clicks}</Linear>`);
  });
}
