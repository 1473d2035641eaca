import type { Json } from './catalog';

export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Variable types whose values are markup by design; every other value is text and is escaped. */
const RAW_VARIABLE_TYPES = new Set(['url_raw', 'third_party_script']);

/**
 * A native template's HTML with each variable's placeholder replaced by the ad item's value for it
 * (inventory renders it into images, serving into pages).
 */
export function renderTemplate(rawHtml: string, variables: { id: number; placeholder: string; type?: string }[], values: Record<string, Json>): string {
  let out = rawHtml;
  for (const v of variables) {
    const value = values[String(v.id)];
    const text = value === undefined || value === null ? '' : String(value);
    out = out.split(v.placeholder).join(RAW_VARIABLE_TYPES.has(v.type ?? '') ? text : escapeXml(text));
  }
  return out;
}
