/**
 * VAST documents against the IAB's published schemas (fixtures/vast/, see SOURCE.md), validated by
 * libxml2 (xmllint-wasm), and parsed by @dailymotion/vast-client, the client many web players use,
 * unmodified: every version, linear, non-linear, companion, pod, wrapper and empty answer.
 */
import { DOMParser } from '@xmldom/xmldom';
import { VASTParser } from '@dailymotion/vast-client';
import { VAST_VERSIONS, vastTime, vastXml, type VastAd } from '../vast';
import { expectValid } from './vast-schemas';

/** What these tests read of a linear creative as @dailymotion/vast-client parses it (its types leave it open). */
interface ParsedCreative {
  type: string;
  duration: number;
  skipDelay: number | null;
  mediaFiles: { fileURL: string }[];
  videoClickThroughURLTemplate: { url: string };
  trackingEvents: Record<string, string[] | undefined>;
  universalAdIds: { idRegistry: string; value: string }[];
  mezzanine?: { fileURL: string };
  closedCaptionFiles: { fileURL: string }[];
}

const T = 'https://serve.example/serve/vast-event?t=token';
const events = ['creativeView', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'mute', 'unmute', 'pause', 'resume', 'skip', 'close'] as const;

function fullAd(id: string, sequence?: number): VastAd {
  return {
    inline: {
      id,
      sequence,
      adSystem: 'Ad Serving Platform',
      title: 'Spring sale <30s>',
      adServingId: `decision-${id}`,
      description: 'A linear ad with everything',
      advertiser: 'Shoes & Co',
      creativeId: `item-${id}`,
      universalAdId: { registry: 'ad-id.org', value: 'ABCD1234000H' },
      impressions: [`${T}&e=impression`, 'https://third.example/imp?cb=[CACHEBUSTING]'],
      error: 'https://serve.example/serve/vast-error?code=[ERRORCODE]',
      linear: {
        duration: 30.5,
        skipOffset: 5,
        adParameters: '{"a":1}',
        mediaFiles: [
          { url: 'https://cdn.example/ad-720.mp4', type: 'video/mp4', width: 1280, height: 720, bitrate: 2000 },
          { url: 'https://cdn.example/ad-360.webm', type: 'video/webm', width: 640, height: 360, codec: 'vp9' },
        ],
        clickThrough: 'https://advertiser.example/landing?x=1&y=2',
        clickTracking: [`${T}&e=click`],
        tracking: [...events.map((event) => ({ event, url: `${T}&e=${event}` })), { event: 'progress', offset: 10, url: `${T}&e=progress10` }],
        mezzanine: { url: 'https://cdn.example/ad-mezz.mov', type: 'video/quicktime', width: 1920, height: 1080, delivery: 'progressive' },
        closedCaptions: [{ url: 'https://cdn.example/ad.vtt', type: 'text/vtt', language: 'en' }],
      },
      nonLinear: [{ width: 468, height: 60, resource: { kind: 'static', value: 'https://cdn.example/overlay.png', type: 'image/png' }, minSuggestedDuration: 10, clickThrough: 'https://advertiser.example/', clickTracking: [`${T}&e=nlclick`], tracking: [] }],
      nonLinearTracking: [{ event: 'creativeView', url: `${T}&e=nlview` }],
      companions: [{ width: 300, height: 250, resource: { kind: 'static', value: 'https://cdn.example/companion.png', type: 'image/png' }, clickThrough: 'https://advertiser.example/c', clickTracking: [`${T}&e=cclick`], creativeView: [`${T}&e=cview`] }],
      verifications: [{ vendor: 'verifier.example-omid', jsUrl: 'https://verifier.example/omid.js', parameters: 'p=1' }],
    },
  };
}

const wrapperAd: VastAd = {
  wrapper: {
    id: 'w1',
    adSystem: 'Ad Serving Platform',
    adTagUri: 'https://partner.example/vast?cb=[CACHEBUSTING]',
    followAdditionalWrappers: true,
    impressions: [`${T}&e=impression`],
    error: 'https://serve.example/serve/vast-error?code=[ERRORCODE]',
    linearTracking: [{ event: 'start', url: `${T}&e=start` }, { event: 'complete', url: `${T}&e=complete` }],
    clickTracking: [`${T}&e=click`],
  },
};

describe.each(VAST_VERSIONS)('VAST %s', (version) => {
  it('an inline ad with linear, non-linear and companion creatives is valid, and the client reads it', async () => {
    const xml = vastXml(version, [fullAd('1')]);
    await expectValid(version, xml);
    const parsed = await new VASTParser().parseVAST(new DOMParser().parseFromString(xml, 'text/xml') as unknown as Parameters<VASTParser["parseVAST"]>[0]);
    expect(parsed.version).toBe(version);
    const [ad] = parsed.ads;
    expect(ad.impressionURLTemplates.map((i: { url: string }) => i.url)).toEqual([`${T}&e=impression`, 'https://third.example/imp?cb=[CACHEBUSTING]']);
    const lin = (ad.creatives as ParsedCreative[]).find((c) => c.type === 'linear')!;
    expect(lin.duration).toBe(30.5);
    expect(lin.mediaFiles.map((m: { fileURL: string }) => m.fileURL)).toEqual(['https://cdn.example/ad-720.mp4', 'https://cdn.example/ad-360.webm']);
    expect(lin.videoClickThroughURLTemplate.url).toBe('https://advertiser.example/landing?x=1&y=2');
    expect(lin.trackingEvents.complete).toEqual([`${T}&e=complete`]);
    if (version === '2.0') expect(lin.trackingEvents.skip).toBeUndefined();
    else {
      expect(lin.skipDelay).toBe(5);
      expect(lin.trackingEvents.skip).toEqual([`${T}&e=skip`]);
      expect(lin.trackingEvents['progress-10']).toEqual([`${T}&e=progress10`]);
    }
    expect((ad.creatives as ParsedCreative[]).some((c) => c.type === 'companion')).toBe(true);
    expect((ad.creatives as ParsedCreative[]).some((c) => c.type === 'nonlinear')).toBe(true);
    if (version === '4.2') {
      expect(ad.adServingId).toBe('decision-1');
      expect(lin.universalAdIds[0]).toMatchObject({ idRegistry: 'ad-id.org', value: 'ABCD1234000H' });
      expect(lin.mezzanine?.fileURL).toBe('https://cdn.example/ad-mezz.mov');
      expect(lin.closedCaptionFiles[0].fileURL).toBe('https://cdn.example/ad.vtt');
      expect(ad.adVerifications[0].resource).toBe('https://verifier.example/omid.js');
    }
  });

  it('a pod, a wrapper and the empty answer are valid too', async () => {
    await expectValid(version, vastXml(version, [fullAd('1', 1), fullAd('2', 2)]));
    await expectValid(version, vastXml(version, [wrapperAd]));
    await expectValid(version, vastXml(version, []));
    if (version !== '2.0') {
      const pod = await new VASTParser().parseVAST(new DOMParser().parseFromString(vastXml(version, [fullAd('1', 1), fullAd('2', 2)]), 'text/xml') as unknown as Parameters<VASTParser["parseVAST"]>[0]);
      expect(pod.ads.map((a: { sequence: number | string }) => Number(a.sequence))).toEqual([1, 2]);
    }
  });
});

test('times and text are written as VAST reads them', () => {
  expect(vastTime(30.5)).toBe('00:00:30.500');
  expect(vastTime(3725)).toBe('01:02:05.000');
  // A URL holding "]]>" cannot end its CDATA section early.
  expect(vastXml('3.0', [{ wrapper: { ...wrapperAd.wrapper, adTagUri: 'https://x.example/?a=]]>&b' } }])).toContain('<![CDATA[https://x.example/?a=]]]]><![CDATA[>&b]]>');
});
