/**
 * A winning VAST bid's document with this platform's impression and click tracking added: still valid
 * against the IAB schema of its version, and read by @dailymotion/vast-client with both URLs beside
 * the buyer's, whether the buyer's Linear had clicks of its own or not.
 */
import { DOMParser } from '@xmldom/xmldom';
import { VASTParser } from '@dailymotion/vast-client';
import { trackedVastBid } from '../demand/vast-bid';
import type { VastVersion } from '../vast';
import { expectValid } from './vast-schemas';

const OURS = { impression: 'https://serve.example/vast/imp?t=tok', click: 'https://serve.example/vast/event?t=tok&e=click' };
const media = '<MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="640" height="360"><![CDATA[https://buyer.example/spot.mp4]]></MediaFile></MediaFiles>';
const through = '<ClickThrough><![CDATA[https://buyer.example/landing]]></ClickThrough>';
const theirs = '<ClickTracking><![CDATA[https://buyer.example/click]]></ClickTracking>';

/** A buyer's InLine document of `version` whose Linear has `clicks` (a VideoClicks element, or ''). */
function inline(version: VastVersion, clicks: string): string {
  const v4 = version === '4.2';
  const linear = v4 ? `<Linear><Duration>00:00:10</Duration>${media}${clicks}</Linear>` : `<Linear><Duration>00:00:10</Duration>${clicks}${media}</Linear>`;
  const creative = v4 ? `<Creative>${linear}<UniversalAdId idRegistry="ad-id.org">B-1</UniversalAdId></Creative>` : `<Creative>${linear}</Creative>`;
  const impression = '<Impression><![CDATA[https://buyer.example/imp]]></Impression>';
  // 4.2 orders the impressions and AdServingId before the title.
  const head = v4 ? `<AdSystem>Buyer DSP</AdSystem>${impression}<AdServingId>buyer-1</AdServingId><AdTitle>Spot</AdTitle>` : `<AdSystem>Buyer DSP</AdSystem><AdTitle>Spot</AdTitle>${impression}`;
  return `<?xml version="1.0" encoding="UTF-8"?><VAST version="${version}"${v4 ? ' xmlns="http://www.iab.com/VAST"' : ''}><Ad id="buyer-ad"><InLine>${head}<Creatives>${creative}</Creatives></InLine></Ad></VAST>`;
}

async function read(xml: string) {
  const parsed = await new VASTParser().parseVAST(new DOMParser().parseFromString(xml, 'text/xml') as never);
  const ad = parsed.ads[0] as unknown as { impressionURLTemplates: { url: string }[]; creatives: { videoClickTrackingURLTemplates: { url: string }[]; videoClickThroughURLTemplate?: { url: string } }[] };
  return { impressions: ad.impressionURLTemplates.map((i) => i.url), clicks: ad.creatives[0].videoClickTrackingURLTemplates.map((c) => c.url), through: ad.creatives[0].videoClickThroughURLTemplate?.url };
}

const versions: VastVersion[] = ['2.0', '3.0', '4.2'];
const clickForms = (version: VastVersion): [string, string][] => [
  ['no clicks', ''],
  ['a click-through only', `<VideoClicks>${through}</VideoClicks>`],
  ["the buyer's own tracker", `<VideoClicks>${version === '4.2' ? theirs + through : through + theirs}</VideoClicks>`],
];

for (const version of versions) {
  for (const [what, clicks] of clickForms(version)) {
    test(`VAST ${version}, a Linear with ${what}: valid, with our impression and click tracker beside the buyer's`, async () => {
      const bid = inline(version, clicks);
      await expectValid(version, bid);
      const served = trackedVastBid(bid, OURS);
      await expectValid(version, served);
      const seen = await read(served);
      expect(seen.impressions).toEqual([OURS.impression, 'https://buyer.example/imp']);
      expect(seen.clicks).toContain(OURS.click);
      if (clicks.includes('buyer.example/click')) expect(seen.clicks).toContain('https://buyer.example/click');
      expect(seen.through).toBe(clicks.includes('ClickThrough') ? 'https://buyer.example/landing' : undefined);
    });
  }
}

test("a 3.0 Wrapper's Linear takes the click tracker too, and stays valid", async () => {
  const wrapper = `<?xml version="1.0" encoding="UTF-8"?><VAST version="3.0"><Ad id="w"><Wrapper><AdSystem>Buyer DSP</AdSystem><VASTAdTagURI><![CDATA[https://buyer.example/vast.xml]]></VASTAdTagURI><Impression><![CDATA[https://buyer.example/imp]]></Impression><Creatives><Creative><Linear></Linear></Creative></Creatives></Wrapper></Ad></VAST>`;
  await expectValid('3.0', wrapper);
  const served = trackedVastBid(wrapper, OURS);
  await expectValid('3.0', served);
  expect(served).toContain(`<VideoClicks><ClickTracking><![CDATA[${OURS.click}]]></ClickTracking></VideoClicks></Linear>`);
  expect(served.indexOf(OURS.impression)).toBeLessThan(served.indexOf('https://buyer.example/imp'));
});
