/**
 * What a request comes from: form factor, browser and operating system from its User-Agent (parsed by
 * ua-parser-js 1.x, MIT licensed), named as platform targets name them, plus the screen size a caller
 * gives (`sw`, `sh`, `spr`).
 */
import UAParser from 'ua-parser-js';

export type FormFactor = 'mobile' | 'tablet' | 'desktop';

export interface Platform {
  formFactor: FormFactor;
  /** chrome, safari, firefox, opera, edge, ie, blackberry, uc, samsung or others. */
  browser: string;
  /** mac, windows, chromeos, ubuntu, linux, android, ios, blackberry, windows_phone or others. */
  os: string;
}

const BROWSERS: Record<string, string> = {
  chrome: 'chrome',
  'chrome headless': 'chrome',
  'chrome webview': 'chrome',
  'mobile chrome': 'chrome',
  chromium: 'chrome',
  safari: 'safari',
  'mobile safari': 'safari',
  firefox: 'firefox',
  'mobile firefox': 'firefox',
  opera: 'opera',
  'opera mini': 'opera',
  'opera mobi': 'opera',
  'opera touch': 'opera',
  edge: 'edge',
  ie: 'ie',
  iemobile: 'ie',
  blackberry: 'blackberry',
  ucbrowser: 'uc',
  'samsung browser': 'samsung',
};

const OSES: Record<string, string> = {
  'mac os': 'mac',
  macos: 'mac',
  ios: 'ios',
  windows: 'windows',
  'windows phone': 'windows_phone',
  'chromium os': 'chromeos',
  ubuntu: 'ubuntu',
  linux: 'linux',
  debian: 'linux',
  fedora: 'linux',
  'red hat': 'linux',
  suse: 'linux',
  'linux mint': 'linux',
  arch: 'linux',
  android: 'android',
  blackberry: 'blackberry',
  'rim tablet os': 'blackberry',
};

const cache = new Map<string, Platform>();

export function platformOf(userAgent: string | undefined): Platform {
  const ua = (userAgent ?? '').slice(0, 512);
  let hit = cache.get(ua);
  if (hit) return hit;
  const r = new UAParser(ua).getResult();
  const device = r.device.type;
  hit = {
    formFactor: device === 'mobile' || device === 'wearable' ? 'mobile' : device === 'tablet' ? 'tablet' : 'desktop',
    browser: BROWSERS[(r.browser.name ?? '').toLowerCase()] ?? 'others',
    os: OSES[(r.os.name ?? '').toLowerCase()] ?? 'others',
  };
  // User agents repeat heavily; a bounded cache keeps parsing off most decisions.
  if (cache.size >= 5000) cache.delete(cache.keys().next().value!);
  cache.set(ua, hit);
  return hit;
}

export interface PlatformTarget {
  platform: string;
  browser_targets: { desktop?: Record<string, boolean>; mobile?: Record<string, boolean> } | null;
  os_targets: { desktop?: Record<string, boolean>; mobile?: Record<string, boolean> } | null;
  min_screen_width: number | null;
  max_screen_width: number | null;
}

/**
 * Whether a platform target lets this request through. A preset (mobile, tablet, mobile_and_tablet,
 * desktop) checks the form factor only; "any"/"specific" checks the browser and OS switches of the
 * request's class (tablets count as mobile), where no switch on at all means every one is on.
 */
export function platformAllows(target: PlatformTarget, p: Platform, screenWidth?: number): boolean {
  switch (target.platform) {
    case 'mobile':
      if (p.formFactor !== 'mobile') return false;
      break;
    case 'tablet':
      if (p.formFactor !== 'tablet') return false;
      break;
    case 'mobile_and_tablet':
      if (p.formFactor === 'desktop') return false;
      break;
    case 'desktop':
      if (p.formFactor !== 'desktop') return false;
      break;
    default: {
      const side = p.formFactor === 'desktop' ? 'desktop' : 'mobile';
      if (!switchOn(target.browser_targets, side, p.browser)) return false;
      if (!switchOn(target.os_targets, side, p.os)) return false;
    }
  }
  if (screenWidth !== undefined) {
    if (target.min_screen_width !== null && screenWidth < target.min_screen_width) return false;
    if (target.max_screen_width !== null && screenWidth > target.max_screen_width) return false;
  }
  return true;
}

function switchOn(switches: PlatformTarget['browser_targets'], side: 'desktop' | 'mobile', name: string): boolean {
  if (!switches) return true;
  const anyOn = Object.values(switches.desktop ?? {}).some(Boolean) || Object.values(switches.mobile ?? {}).some(Boolean);
  if (!anyOn) return true;
  return switches[side]?.[name] === true;
}
