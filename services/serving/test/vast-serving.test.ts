/**
 * Video serving through the real platform: VAST inventory made through the API, `/vast.spark` asked of
 * the serving process as a player asks it, every answer checked against the IAB schema of its version
 * and read by @dailymotion/vast-client (unmodified, with a URL handler that reaches the serving
 * process where the tags say SERVE_BASE_URL), its tracking URLs fired, and the VAST reports counting
 * exactly what was fired.
 */
import { DOMParser } from '@xmldom/xmldom';
import { VASTClient, VASTParser } from '@dailymotion/vast-client';
import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import type { VastVersion } from '../vast';
import { closeServeAgent, serveGet, within } from './serving-fixtures';
import { expectValid } from './vast-schemas';

const serving = () => `http://127.0.0.1:${process.env.SERVING_PORT}`;
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');

/** What these tests read of the client's parsed ads (its types leave them open). */
interface ParsedAd {
  id: string;
  sequence: number | null;
  system: { value: string };
  impressionURLTemplates: { url: string }[];
  errorURLTemplates: string[];
  creatives: {
    type: string;
    duration: number;
    skipDelay: number | null;
    mediaFiles: { fileURL: string; mimeType: string; width: number }[];
    videoClickThroughURLTemplate: { url: string } | null;
    videoClickTrackingURLTemplates: { url: string }[];
    trackingEvents: Record<string, string[] | undefined>;
    variations: { staticResources: { url: string }[]; companionClickThroughURLTemplate: string; trackingEvents: Record<string, string[]> }[];
  }[];
}

/** A URL handler for vast-client: SERVE_BASE_URL (a name no resolver knows) is the serving process here. */
const urlHandler = {
  async get(url: string) {
    const u = new URL(url);
    const res = await serveGet(serving(), `${u.pathname}${u.search}`);
    return { xml: new DOMParser().parseFromString(res.text, 'text/xml'), details: { byteLength: res.text.length, statusCode: res.status, rawXml: res.text } };
  },
};

/** Fires one of the document's URLs (they name SERVE_BASE_URL) at the serving process, as a player would. */
const fire = (url: string) => {
  const u = new URL(url.replace(/\[([A-Z_]+)\]/g, '0'));
  return serveGet(serving(), `${u.pathname}${u.search}`);
};

async function made(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

let acct: TestAccount;
let api: Client;
let publisher: number;

beforeAll(async () => {
  acct = await newAccount();
  api = acct.live;
  publisher = (await made(api, '/v2/publishers', { name: 'Video publisher' })).id;
});

afterAll(() => closeServeAgent());

/** A VAST ad item with two renditions, a companion and third-party tracking. */
async function videoAd(name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const item = await made(api, '/v2/vast-ad-items', {
    name, duration: '00:00:10', skippable: true, skip_duration: '00:00:03', location: 'https://advertiser.example/landing', description: 'Spring shoes', ...extra,
  });
  if (!extra.use_wrapper) {
    await made(api, '/v2/vast-media/linear', { ad_item: item.id, type: 'video/mp4', width: 1280, height: 720, creative_url: `https://cdn.example/${item.id}-720.mp4`, max_bitrate: 2000 });
    await made(api, '/v2/vast-media/linear', { ad_item: item.id, type: 'video/webm', width: 640, height: 360, creative_url: `https://cdn.example/${item.id}-360.webm`, codec: 'vp9' });
    await made(api, '/v2/vast-companions', { ad_item: item.id, resource_type: 'static', type: 'image/png', width: 300, height: 250, content: 'https://cdn.example/c.png', location: 'https://advertiser.example/companion' });
    await made(api, '/v2/vast-tracking', { ad_item_id: item.id, type: 'firstQuartile', link: 'https://measure.example/q1?cb=[CACHEBUSTING]' });
    await made(api, '/v2/vast-tracking', { ad_item_id: item.id, type: 'clicks', link: 'https://measure.example/click' });
  }
  return item.id;
}

async function videoZone(extra: Record<string, unknown> = {}): Promise<number> {
  return (await made(api, '/v2/vast-zones', { name: 'Pre-roll', publisher, ...extra })).id;
}

async function place(zone: number, adItem: number, schedule: Record<string, unknown> = {}, placement: Record<string, unknown> = {}) {
  const s = await made(api, '/v2/vast-schedules', { start_date: yesterday(), ...schedule });
  const p = await made(api, '/v2/vast-placements', { zone, advertisement: { id: adItem, type: 'vast_ad_item' }, schedule: s.id, ...placement });
  return { schedule: s, placement: p };
}

const spark = (zone: number, query = '') => serveGet(serving(), `/vast.spark?setID=${zone}&ID=${acct.id}&rnd=[CACHEBUSTING]${query}`);

/** The zone's document once serving holds its inventory (decision data applies within a second), and `adItem` when named. */
async function served(zone: number, query = '', ads = 1, adItem?: number): Promise<string> {
  let text = '';
  await within(5000, async () => {
    text = (await spark(zone, query)).text;
    return (text.match(/<Ad /g) ?? []).length >= ads && (!adItem || text.includes(`<Ad id="${adItem}"`));
  }, 50);
  return text;
}

const parse = async (xml: string) => (await new VASTParser().parseVAST(new DOMParser().parseFromString(xml, 'text/xml'))).ads as unknown as ParsedAd[];

/** VAST totals of one ad item today, as /v2/vast-reports answers them. */
async function vastTotals(adItem: number): Promise<Record<string, number>> {
  const res = await api.get(`/v2/vast-reports?type=ad-item&period=day&preset=today&ad-items=${adItem}`);
  expect(res.status).toBe(200);
  return res.body.data.find((e: { id: number }) => e.id === adItem)?.summary ?? {};
}

describe('a VAST zone answers players', () => {
  let zone: number;
  let item: number;

  beforeAll(async () => {
    zone = await videoZone();
    item = await videoAd('Spring spot');
    await place(zone, item, {}, { cost: { cpm: 8 } });
  });

  test.each(['2.0', '3.0', '4.2'] as VastVersion[])('VAST %s: valid against the IAB schema, read by vast-client with every rendition, event and click', async (version) => {
    const xml = await served(zone, `&vast=${version}`);
    expect(xml).toContain(`<VAST version="${version}"`);
    await expectValid(version, xml);
    const [ad] = await parse(xml);
    expect(ad.system.value).toBe('adserver');
    expect(ad.impressionURLTemplates[0].url).toMatch(/^https:\/\/serve\.example\.test\/vast\/imp\?t=/);
    expect(ad.errorURLTemplates[0]).toContain('code=[ERRORCODE]');
    const linear = ad.creatives.find((c) => c.type === 'linear')!;
    expect(linear.duration).toBe(10);
    expect(linear.mediaFiles.map((m) => [m.mimeType, m.width])).toEqual([['video/mp4', 1280], ['video/webm', 640]]);
    expect(linear.videoClickThroughURLTemplate!.url).toMatch(/\/vast\/click\?t=/);
    // The third-party click tracker and quartile pixel keep their macros for the player.
    expect(linear.videoClickTrackingURLTemplates.map((t) => t.url)).toContain('https://measure.example/click');
    expect(linear.trackingEvents.firstQuartile).toContain('https://measure.example/q1?cb=[CACHEBUSTING]');
    for (const e of ['start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'mute', 'unmute', 'pause', 'resume']) {
      expect([e, linear.trackingEvents[e]?.some((u) => u.includes('/vast/event?'))]).toEqual([e, true]);
    }
    // 2.0 knows no skip offset, no skip and no progress events.
    expect(linear.skipDelay).toBe(version === '2.0' ? null : 3);
    expect(!!linear.trackingEvents.skip?.length).toBe(version !== '2.0');
    const companion = ad.creatives.find((c) => c.type === 'companion')!;
    expect(companion.variations[0].staticResources[0].url).toBe('https://cdn.example/c.png');
    expect(companion.variations[0].companionClickThroughURLTemplate).toMatch(/\/vast\/companion-click\?t=/);
  });

  test('the zone version answers unless the request names one; a pod gives different ads in sequence; 2.0 gives one', async () => {
    const z = await videoZone({ vast_version: '4.2' });
    const a = await videoAd('Pod A');
    const b = await videoAd('Pod B');
    await place(z, a);
    await place(z, b);
    expect(await served(z)).toContain('<VAST version="4.2"');
    const pod = await served(z, '&pod=3', 2);
    await expectValid('4.2', pod);
    const ads = await parse(pod);
    expect(ads.map((x) => Number(x.sequence))).toEqual([1, 2]);
    expect(new Set(ads.map((x) => x.id))).toEqual(new Set([String(a), String(b)]));
    const single = await served(z, '&pod=3&vast=2.0');
    expect(single.match(/<Ad /g)).toHaveLength(1);
  });

  test('events count once per decision and event in the VAST reports, and never in the display reports', async () => {
    const z = await videoZone();
    const one = await videoAd('Counted spot');
    await place(z, one, {}, { cost: { cpm: 10 } });
    const xml = await served(z, '&vast=3.0');
    const [ad] = await parse(xml);
    const linear = ad.creatives.find((c) => c.type === 'linear')!;
    const own = (e: string) => linear.trackingEvents[e]!.find((u) => u.includes('/vast/event?'))!;
    // A player calls each once; a replay (a second player retry) must not count again.
    for (let i = 0; i < 2; i++) {
      expect((await fire(ad.impressionURLTemplates[0].url)).headers['content-type']).toBe('image/gif');
      for (const e of ['start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'mute', 'skip']) expect((await fire(own(e))).status).toBe(200);
      const click = await fire(linear.videoClickThroughURLTemplate!.url);
      expect([click.status, click.headers.location]).toEqual([302, 'https://advertiser.example/landing']);
    }
    const companion = ad.creatives.find((c) => c.type === 'companion')!;
    expect((await fire(companion.variations[0].trackingEvents.creativeView[0])).status).toBe(200);
    const cclick = await fire(companion.variations[0].companionClickThroughURLTemplate);
    expect([cclick.status, cclick.headers.location]).toEqual([302, 'https://advertiser.example/companion']);
    expect((await fire(ad.errorURLTemplates[0])).status).toBe(200);
    let totals: Record<string, any> = {};
    await within(8000, async () => {
      totals = await vastTotals(one);
      return totals.complete === 1 && totals.clicks === 1 && totals.companion_clicks_1 === 1;
    }, 500);
    expect(totals).toMatchObject({
      requests: 1, impressions: 1, clicks: 1, start: 1, first_quartile: 1, midpoint: 1, third_quartile: 1, complete: 1, mute: 1, skip: 1,
      companion_views_1: 1, companion_clicks_1: 1, completion_rate: 1,
    });
    expect(totals.financials.e_cpm).toEqual([{ cur: 'USD', amount: 10 }]);
    const report = await api.get(`/v2/vast-reports?type=ad-item&period=day&preset=today&ad-items=${one}`);
    expectReferenceShape('/v2/vast-reports', 'get', report.body);
    // The display reports leave video out.
    const display = await api.get(`/v2/reports?type=ad-item&period=day&preset=today`);
    expect((display.body.data ?? []).some((e: { id: number }) => e.id === one)).toBe(false);
  });

  test('a wrapper chain of two resolves in the client to the inline ad; past the chain limit only inline ads serve', async () => {
    const inlineZone = await videoZone();
    const inline = await videoAd('Inline at the end');
    await place(inlineZone, inline);
    const middleZone = await videoZone();
    const middle = await videoAd('Wrapper 2', { use_wrapper: true, wrapper_url: `https://serve.example.test/vast.spark?setID=${inlineZone}&ID=${acct.id}` });
    await place(middleZone, middle);
    const firstZone = await videoZone();
    const first = await videoAd('Wrapper 1', { use_wrapper: true, wrapper_url: `https://serve.example.test/vast.spark?setID=${middleZone}&ID=${acct.id}` });
    await place(firstZone, first);
    await served(inlineZone);
    await served(middleZone);
    const outer = await served(firstZone, '&vast=4.2');
    await expectValid('4.2', outer);
    expect(outer).toContain('<Wrapper');
    const response = await new VASTClient().get(`https://serve.example.test/vast.spark?setID=${firstZone}&ID=${acct.id}&vast=4.2`, { urlHandler } as never);
    const ads = response.ads as unknown as ParsedAd[];
    expect(ads).toHaveLength(1);
    const linear = ads[0].creatives.find((c) => c.type === 'linear')!;
    expect(linear.mediaFiles[0].fileURL).toBe(`https://cdn.example/${inline}-720.mp4`);
    // Every wrapper's impression is kept: the player calls all three.
    expect(ads[0].impressionURLTemplates.filter((t) => t.url.includes('/vast/imp?'))).toHaveLength(3);
    // The middle wrapper was reached at depth 1 and points on at depth 2.
    const middleXml = (await spark(middleZone, '&wd=1')).text;
    expect(middleXml).toMatch(/setID=\d+&amp;ID=\d+&amp;wd=2|setID=\d+&ID=\d+&wd=2/);
    // At the limit (VAST_WRAPPER_LIMIT, 5) a zone of wrappers only answers no ad.
    const atLimit = (await spark(middleZone, '&wd=5&vast=3.0')).text;
    expect(atLimit).not.toContain('<Ad ');
    await expectValid('3.0', atLimit);
  });
});

describe('the VAST 4.2 model serves with what VAST 4 adds', () => {
  /** What these tests read of a 4.2 linear as the client parses it. */
  interface Parsed42 {
    type: string;
    duration: number;
    skipDelay: number | null;
    universalAdIds: { idRegistry: string; value: string }[];
    mezzanine: { fileURL: string } | null;
    closedCaptionFiles: { fileURL: string; language: string }[];
    interactiveCreativeFile: { fileURL: string; apiFramework: string } | null;
    icons: { program: string; staticResource: string; iconClickThroughURLTemplate: string }[];
    videoClickThroughURLTemplate: { url: string };
    videoCustomClickURLTemplates: { url: string }[];
    trackingEvents: Record<string, string[] | undefined>;
    mediaFiles: { fileURL: string }[];
  }

  test('a 4.2 ad with a linear, its files, icons, captions and Universal Ad ID, a non-linear and a companion; valid in every version', async () => {
    const zone = await videoZone({ vast_version: '4.2' });
    const ad = await made(api, '/v2/vast/ads', { name: 'VAST 4 spot', type: 'inline' });
    const creative = await made(api, '/v2/vast/creatives', { ad_id: ad.id, sequence: '1', companion_required: 'Any' });
    await made(api, '/v2/vast/universal-ad-ids', { creative_id: creative.id, universal_ad_id: 'ADID0001000H', universal_id_registry: 'ad-id.org' });
    const res = async (body: Record<string, unknown>) => (await made(api, '/v2/vast/resources', body)).id;
    const iconResource = await res({ type: 'static', static_uri: 'https://cdn.example/adchoices.png', static_type: 'image/png' });
    const icon = await made(api, '/v2/vast/icons', { program: 'AdChoices', width: 20, height: 20, x_position: 10, y_position: 10, resources: [iconResource], destination_url: 'https://privacy.example/', click_tracking_links: ['https://measure.example/icon-click'] });
    await made(api, '/v2/vast/icon-click-fallback-images', { icon_id: icon.id, resource_id: iconResource, width: 20, height: 20, alt_text: 'Ad choices' });
    const linear = await made(api, '/v2/vast/linears', {
      creative_id: creative.id, duration: '00:00:20', skip_offset: '25', skip_offset_type: 'percentage', destination_url: 'https://advertiser.example/v4',
      icons: [icon.id], custom_click_links: [{ custom_id: 'more', uri: 'https://advertiser.example/more' }],
      tracking_events: [{ uri: 'https://measure.example/p10?ts=[TIMESTAMP]', event_type: 'progress', offset_type: 'time', offset_amount: '00:00:10' }, { uri: 'https://measure.example/loaded', event_type: 'loaded' }],
    });
    await made(api, '/v2/vast/media-files', { linear_id: linear.id, file_uri: 'https://cdn.example/v4-720.mp4', mime_type: 'video/mp4', width: 1280, height: 720, bitrate: 2500 });
    await made(api, '/v2/vast/mezzanines', { linear_id: linear.id, file_uri: 'https://cdn.example/v4-mezz.mp4', mime_type: 'video/mp4', width: 1920, height: 1080 });
    await made(api, '/v2/vast/closed-caption-files', { linear_id: linear.id, file_uri: 'https://cdn.example/v4.vtt', mime_type: 'text/vtt', language: 'en' });
    await made(api, '/v2/vast/interactive-creative-files', { linear_id: linear.id, file_uri: 'https://cdn.example/simid.html', api_framework: 'SIMID' });
    const overlay = await res({ type: 'static', static_uri: 'https://cdn.example/overlay.png', static_type: 'image/png' });
    await made(api, '/v2/vast/non-linears', { creative_id: creative.id, width: 468, height: 60, resources: [overlay], destination_url: 'https://advertiser.example/nl' });
    const html = await res({ type: 'html', html_content: '<b>Shoes</b>' });
    const companion = await made(api, '/v2/vast/companions', { creative_id: creative.id, width: 300, height: 250, resources: [html], destination_url: 'https://advertiser.example/c4' });
    const schedule = await made(api, '/v2/vast-schedules', { start_date: yesterday() });
    await made(api, '/v2/vast/placements', { advertisement: { id: ad.id, type: 'vast4_ad_item' }, zone, schedule: schedule.id });

    const xml = await served(zone, '&vast=4.2', 1, ad.id);
    await expectValid('4.2', xml);
    const [parsed] = await parse(xml);
    const l = parsed.creatives.find((c) => c.type === 'linear') as unknown as Parsed42;
    expect(l.duration).toBe(20);
    expect(l.skipDelay).toBe(5);
    expect(l.universalAdIds).toEqual([{ idRegistry: 'ad-id.org', value: 'ADID0001000H' }]);
    expect(l.mediaFiles.map((m) => m.fileURL)).toEqual(['https://cdn.example/v4-720.mp4']);
    expect(l.mezzanine?.fileURL).toBe('https://cdn.example/v4-mezz.mp4');
    expect(l.closedCaptionFiles).toEqual([expect.objectContaining({ fileURL: 'https://cdn.example/v4.vtt', language: 'en' })]);
    expect(l.interactiveCreativeFile).toEqual(expect.objectContaining({ fileURL: 'https://cdn.example/simid.html', apiFramework: 'SIMID' }));
    expect(l.icons).toEqual([expect.objectContaining({ program: 'AdChoices', staticResource: 'https://cdn.example/adchoices.png', iconClickThroughURLTemplate: 'https://privacy.example/' })]);
    expect(l.videoCustomClickURLTemplates.map((c) => c.url)).toEqual(['https://advertiser.example/more']);
    expect(l.trackingEvents.loaded).toEqual(['https://measure.example/loaded']);
    expect(l.trackingEvents.start!.some((u) => u.includes('/vast/event?'))).toBe(true);
    // The click-through goes through this platform to the linear's destination; another part's id is not followed.
    const click = await fire(l.videoClickThroughURLTemplate.url);
    expect([click.status, click.headers.location]).toEqual([302, 'https://advertiser.example/v4']);
    const stray = await fire(l.videoClickThroughURLTemplate.url.replace(/p=\d+/, `p=${companion.id}`));
    expect(stray.status).toBe(204);
    const comp = parsed.creatives.find((c) => c.type === 'companion')!;
    const cclick = await fire(comp.variations[0].companionClickThroughURLTemplate);
    expect([cclick.status, cclick.headers.location]).toEqual([302, 'https://advertiser.example/c4']);
    // The overlay's view and click count as non-linear in the reports.
    const overlayAd = parsed.creatives.find((c) => c.type === 'nonlinear') as unknown as { trackingEvents: Record<string, string[]>; variations: { nonlinearClickThroughURLTemplate: string }[] };
    const nlView = overlayAd.trackingEvents.creativeView.find((u) => u.includes('/vast/event?'))!;
    expect((await fire(nlView)).status).toBe(200);
    const nlClick = await fire(overlayAd.variations[0].nonlinearClickThroughURLTemplate);
    expect([nlClick.status, nlClick.headers.location]).toEqual([302, 'https://advertiser.example/nl']);
    let row: Record<string, any> = {};
    await within(8000, async () => {
      const res = await api.get(`/v2/vast-reports?type=ad-item&period=day&preset=today&ad-items=${ad.id}`);
      row = res.body.data?.find((e: { id: number }) => e.id === ad.id)?.summary ?? {};
      return row.non_linear_creative_view === 1;
    }, 500);
    // A decision counts one click whichever part was clicked; the overlay's is counted as non-linear too.
    expect(row).toMatchObject({ non_linear_creative_view: 1, clicks: 1 });
    const v4 = await api.get(`/v2/vast/reports?type=ad-item&period=day&preset=today&ad-items=${ad.id}`);
    expect(v4.status).toBe(200);
    const placementRow = v4.body.data.find((r: { non_linear: { clicks: number } }) => r.non_linear.clicks > 0);
    expect(placementRow).toMatchObject({ non_linear: { creative_view: 1, clicks: 1 }, linear: { clicks: 0 } });
    // The same ad in VAST 3.0 and 2.0: what those versions can say, still valid.
    for (const v of ['3.0', '2.0'] as VastVersion[]) await expectValid(v, (await spark(zone, `&vast=${v}`)).text);
    // A 4.2 wrapper is a Wrapper of its ad_url.
    const wrapZone = await videoZone();
    const wrapper = await made(api, '/v2/vast/ads', { name: 'VAST 4 wrapper', type: 'wrapper', ad_url: 'https://other-adserver.example/vast?id=1' });
    await made(api, '/v2/vast/placements', { advertisement: { id: wrapper.id, type: 'vast4_ad_item' }, zone: wrapZone, schedule: schedule.id });
    const wrapped = await served(wrapZone, '&vast=4.2', 1, wrapper.id);
    await expectValid('4.2', wrapped);
    expect(wrapped).toContain('<VASTAdTagURI><![CDATA[https://other-adserver.example/vast?id=1]]></VASTAdTagURI>');
  });
});

describe('delivery rules apply to video as to display', () => {
  test('a quota of views: the ad serves until its impressions reach it, then the zone default', async () => {
    const zone = await videoZone();
    const capped = await videoAd('Capped');
    const fallback = await videoAd('House default');
    await api.put(`/v2/vast-zones/${zone}`, { default_vast_ad_item: fallback });
    const { schedule } = await place(zone, capped, { quota_lifetime: 2, quota_type: 'views' });
    const seen: string[] = [];
    // Every decision of the capped ad is held against its quota until its impression comes (or 10 s
    // pass): the player fires each impression, as one that plays the ad does.
    let xml = await served(zone, '', 1, capped);
    for (let i = 0; i < 6; i++) {
      if (i) xml = (await spark(zone)).text;
      const [ad] = await parse(xml);
      seen.push(ad.id);
      if (ad.id === String(capped)) await fire(ad.impressionURLTemplates[0].url);
    }
    expect(seen.filter((id) => id === String(capped))).toHaveLength(2);
    expect(seen.slice(-2)).toEqual([String(fallback), String(fallback)]);
    await within(3000, async () => (await api.get(`/v2/vast-schedules/${schedule.id}`)).body.status === 'quota_reached');
  });

  test('a paused placement, a schedule not started and a fallback placement', async () => {
    const zone = await videoZone();
    const later = await videoAd('Later');
    await place(zone, later, { start_date: '2099-01-01 00:00:00' });
    const paused = await videoAd('Paused');
    await place(zone, paused, {}, { active: false });
    const backup = await videoAd('Backup');
    await place(zone, backup, {}, { is_fallback: true });
    const main = await videoAd('Main');
    const mainPlacement = (await place(zone, main)).placement;
    // Until serving holds the main placement, the fallback is (rightly) what the zone answers.
    await served(zone, '', 1, main);
    for (let i = 0; i < 5; i++) expect((await parse((await spark(zone)).text))[0].id).toBe(String(main));
    // Decision debug takes a VAST zone's id too, and says why each other ad is out.
    const debug = (await api.get(`/v2/adserve?ID=${acct.id}&setID=${zone}&type=json&debug=1`)).body;
    expect(debug.eligible.map((e: { ad_item: number }) => e.ad_item)).toEqual([main]);
    expect(debug.excluded).toEqual(expect.arrayContaining([
      expect.objectContaining({ ad_item: backup, rule: 'fallback' }),
      expect.objectContaining({ rule: 'paused' }),
      expect.objectContaining({ rule: 'schedule' }),
    ]));
    await api.put(`/v2/vast-placements/${mainPlacement.id}`, { active: false });
    await within(3000, async () => (await parse((await spark(zone)).text))[0]?.id === String(backup), 50);
  });

  test('a frequency cap counted at the complete event: the viewer who completed it gets no more', async () => {
    const zone = await videoZone();
    const item = await videoAd('Once to the end');
    await place(zone, item, {}, { max_frequency: 1, max_frequency_period: 1, max_frequency_type: 'complete' });
    await served(zone);
    // A viewer keeps the cookies serving sets (a browser would).
    let cookie = '';
    const ask = async () => {
      const res = await serveGet(serving(), `/vast.spark?setID=${zone}&ID=${acct.id}`, cookie ? { cookie } : {});
      return res;
    };
    const first = await ask();
    const [ad] = await parse(first.text);
    const linear = ad.creatives.find((c) => c.type === 'linear')!;
    // Starting is not completing: the ad still serves.
    const started = await fire(linear.trackingEvents.start!.find((u) => u.includes('/vast/event?'))!);
    cookie = (started.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    expect((await parse((await ask()).text))[0]?.id).toBe(String(item));
    const u = new URL(linear.trackingEvents.complete!.find((x) => x.includes('/vast/event?'))!);
    const completed = await serveGet(serving(), `${u.pathname}${u.search}`, cookie ? { cookie } : {});
    cookie = [cookie, ...(completed.headers['set-cookie'] ?? []).map((c) => c.split(';')[0])].filter(Boolean).join('; ');
    expect((await ask()).text).not.toContain('<Ad ');
  });
});

describe('what a player or a caller gets wrong', () => {
  test('an empty answer is an empty VAST of the version asked, never an error page', async () => {
    const zone = await videoZone();
    for (const v of ['2.0', '3.0', '4.2'] as VastVersion[]) {
      const res = await spark(zone, `&vast=${v}`);
      expect([res.status, res.headers['content-type']]).toEqual([200, 'application/xml; charset=utf-8']);
      expect(res.text).not.toContain('<Ad ');
      await expectValid(v, res.text);
    }
    // A zone of another account, or none at all, is empty too.
    expect((await serveGet(serving(), `/vast.spark?setID=${zone}&ID=${acct.id + 100000}`)).text).not.toContain('<Ad ');
  });

  test('bad parameters are refused with 400 and the spec error shape', async () => {
    for (const [query, field] of [['ID=1', 'setID'], ['setID=1', 'ID'], ['setID=1&ID=1&vast=5.0', 'vast'], ['setID=1&ID=1&pod=99', 'pod'], ['setID=x&ID=1', 'setID']]) {
      const res = await serveGet(serving(), `/vast.spark?${query}`);
      expect([query, res.status, res.body?.object]).toEqual([query, 400, 'error']);
      expect(res.body.parameters[0].field).toBe(field);
    }
    expect((await serveGet(serving(), '/vast/event?t=forged.token&e=start')).status).toBe(400);
    const zone = await videoZone();
    await place(zone, await videoAd('Any'));
    const [ad] = await parse(await served(zone));
    const start = ad.creatives.find((c) => c.type === 'linear')!.trackingEvents.start!.find((u) => u.includes('/vast/event?'))!;
    const unknown = await fire(start.replace('e=start', 'e=dance'));
    expect([unknown.status, unknown.body?.parameters?.[0]?.field]).toEqual([400, undefined]);
    expect(unknown.body.message).toContain("'e'");
  });

  test('test-mode inventory never reaches a player', async () => {
    const t = acct.test;
    const pub = (await t.post('/v2/publishers', { name: 'T' })).body.id;
    const zone = (await t.post('/v2/vast-zones', { name: 'Test zone', publisher: pub })).body.id;
    const item = (await t.post('/v2/vast-ad-items', { name: 'Test ad', duration: '00:00:05' })).body.id;
    await t.post('/v2/vast-media/linear', { ad_item: item, type: 'video/mp4', width: 640, height: 360, creative_url: 'https://cdn.example/t.mp4' });
    const schedule = (await t.post('/v2/vast-schedules', { start_date: yesterday() })).body.id;
    expect((await t.post('/v2/vast-placements', { zone, advertisement: { id: item, type: 'vast_ad_item' }, schedule })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await spark(zone)).text).not.toContain('<Ad ');
    paramFor(expectError(await t.post('/v2/vast-placements', { zone, schedule }), 400, 'v2'), 'advertisement');
  });
});
