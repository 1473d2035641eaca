import type { FieldSpec, ResourceKind } from '../shared/catalog/types';
import { platformAllows, type PlatformTarget } from '../serving/targeting/platform';
import { name } from './fields';
import { int, obj, registerRule, str, type Attributes } from './rule';

/** Platform targets: form factors, browsers, operating systems and screen widths a placement serves on. */

export const DESKTOP_BROWSERS = ['chrome', 'safari', 'firefox', 'opera', 'edge', 'ie', 'others'] as const;
export const MOBILE_BROWSERS = ['chrome', 'safari', 'firefox', 'opera', 'blackberry', 'uc', 'edge', 'samsung', 'others'] as const;
export const DESKTOP_OSES = ['mac', 'windows', 'chromeos', 'ubuntu', 'linux', 'others'] as const;
export const MOBILE_OSES = ['android', 'ios', 'blackberry', 'windows_phone', 'others'] as const;

const switchFields = (names: readonly string[]): FieldSpec => ({
  type: 'object',
  closed: true,
  properties: Object.fromEntries(names.map((n) => [n, { type: 'boolean' } as FieldSpec])),
});

export const platformTargetKind: ResourceKind = {
  kind: 'platform_target',
  service: 'inventory',
  title: 'platform target',
  fields: {
    name,
    // A preset form factor; "any"/"specific" use the browser and OS switches below.
    platform: { type: 'string', enum: ['any', 'specific', 'mobile', 'tablet', 'mobile_and_tablet', 'desktop'], default: 'any' },
    browser_targets: {
      type: 'object',
      closed: true,
      default: null,
      nullable: true,
      properties: { desktop: switchFields(DESKTOP_BROWSERS), mobile: switchFields(MOBILE_BROWSERS) },
    },
    os_targets: {
      type: 'object',
      closed: true,
      default: null,
      nullable: true,
      properties: { desktop: switchFields(DESKTOP_OSES), mobile: switchFields(MOBILE_OSES) },
    },
    // Screen size bounds in CSS pixels (requests give sw/sh); null: no bound.
    min_screen_width: { type: 'integer', nullable: true, min: 0, max: 100000, default: null },
    max_screen_width: { type: 'integer', nullable: true, min: 0, max: 100000, default: null },
  },
  views: { v2: { object: 'platform_target', path: '/v2/platform-targets' } },
};

const switches = (v: Attributes[string] | undefined): Record<string, boolean> => Object.fromEntries(Object.entries(obj(v)).map(([k, x]) => [k, x === true]));

registerRule<PlatformTarget>({
  name: 'platform_target',
  kinds: [platformTargetKind],
  project: {
    platform_target: (a) => {
      const browsers = obj(a.browser_targets);
      const oses = obj(a.os_targets);
      return {
        platformTarget: {
          platform: str(a.platform) || 'any',
          desktopBrowsers: switches(browsers.desktop),
          mobileBrowsers: switches(browsers.mobile),
          desktopOs: switches(oses.desktop),
          mobileOs: switches(oses.mobile),
          minScreenWidth: int(a.min_screen_width),
          maxScreenWidth: int(a.max_screen_width),
        },
      };
    },
  },
  resolve: (p) => {
    const pt = p.placement.platformTarget ? p.get('platform_target', p.placement.platformTarget)?.platformTarget : undefined;
    if (!pt) return undefined;
    const sw = (desktop: Record<string, boolean>, mobile: Record<string, boolean>) => (Object.keys(desktop).length || Object.keys(mobile).length ? { desktop, mobile } : null);
    return {
      platform: pt.platform,
      browser_targets: sw(pt.desktopBrowsers, pt.mobileBrowsers),
      os_targets: sw(pt.desktopOs, pt.mobileOs),
      min_screen_width: pt.minScreenWidth || null,
      max_screen_width: pt.maxScreenWidth || null,
    };
  },
  evaluate: (t, r) =>
    platformAllows(t, r.platform, r.screenWidth) ? { ok: true, preferred: false } : { ok: false, rule: 'platform_target', detail: `${r.platform.formFactor}, ${r.platform.os}, ${r.platform.browser}` },
});
