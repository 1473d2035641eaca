/**
 * What is special about the v1 inventory resources beyond CRUD: cross-field rules, flexible types,
 * campaign assignments, "all types" lists, zone and conversion tags, expansion, archive and delete
 * cascades.
 */
import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';

const IMG = 'https://cdn.example.com/banner.png';
const SERVE = 'https://serve.example.test';

async function make(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

let acct: TestAccount;
let api: Client;
beforeAll(async () => {
  acct = await newAccount();
  api = acct.test;
});

describe('zones', () => {
  test('fixed dimensions need a width and height; dynamic ones take none', async () => {
    const noSize = await api.post('/v1/zones/banner', { name: 'No size' });
    expect(paramFor(expectError(noSize, 400, 'v1'), 'width').message).toMatch(/fixed/);
    const dynamic = await make(api, '/v1/zones/banner', { name: 'Dynamic', dimensions: 'dynamic' });
    expect(dynamic).toMatchObject({ object: 'banner_zone', dimensions: 'dynamic', width: 0, height: 0, deleted: false, responsive: 'fixed', flexible_type: null });
    expectError(await api.post('/v1/zones/banner', { name: 'Dynamic sized', dimensions: 'dynamic', width: 300 }), 400, 'v1');
    const toFixed = await api.put(`/v1/zones/banner/${dynamic.id}`, { dimensions: 'fixed' });
    paramFor(expectError(toFixed, 400, 'v1'), 'width');
    expect((await api.put(`/v1/zones/banner/${dynamic.id}`, { dimensions: 'fixed', width: 300, height: 250 })).body).toMatchObject({ width: 300, height: 250 });
  });

  test("a publisher of another account or the other mode cannot own a zone", async () => {
    const pub = await make(acct.live, '/v1/publishers', { name: 'Live publisher' });
    const res = await api.post('/v1/zones/email', { name: 'Cross-mode', width: 600, height: 100, publisher: pub.id });
    expect(paramFor(expectError(res, 400, 'v1'), 'publisher').type).toBe('invalid_reference');
    const other = await newAccount();
    const theirs = await make(other.test, '/v1/publishers', { name: 'Their publisher' });
    expectError(await api.post('/v1/zones/text', { name: 'Cross-account', publisher: theirs.id }), 400, 'v1');
  });
});

describe('flexible types', () => {
  let flex: any;
  beforeAll(async () => {
    flex = await make(api, '/v1/flexible-types', { name: 'Medium rectangle', width: 300, height: 250 });
  });

  test('an image banner of a flexible type must match its width and height exactly', async () => {
    const ok = await make(api, '/v1/banners/image', { name: 'Flexible', width: 300, height: 250, creative_url: IMG, flexible_type: flex.id });
    expect(ok.flexible_type).toBe(flex.id);
    const wrong = await api.post('/v1/banners/image', { name: 'Wrong size', width: 320, height: 250, creative_url: IMG, flexible_type: flex.id });
    expect(paramFor(expectError(wrong, 400, 'v1'), 'width').message).toMatch(/300/);
    const resize = await api.put(`/v1/banners/image/${ok.id}`, { height: 600 });
    paramFor(expectError(resize, 400, 'v1'), 'height');
    const missing = await api.post('/v1/banners/image', { name: 'No type', width: 300, height: 250, creative_url: IMG, flexible_type: 999999999 });
    expect(paramFor(expectError(missing, 400, 'v1'), 'flexible_type').type).toBe('invalid_reference');
  });

  test('it is set on POST only and refused on PUT', async () => {
    const plain = await make(api, '/v1/banners/image', { name: 'Plain', width: 300, height: 250, creative_url: IMG });
    const put = await api.put(`/v1/banners/image/${plain.id}`, { flexible_type: flex.id });
    expect(paramFor(expectError(put, 400, 'v1'), 'flexible_type').type).toBe('read_only');
    const zone = await make(api, '/v1/zones/banner', { name: 'Flexible zone', flexible_type: flex.id });
    expect(zone).toMatchObject({ width: 300, height: 250, flexible_type: flex.id });
    paramFor(expectError(await api.put(`/v1/zones/banner/${zone.id}`, { flexible_type: null }), 400, 'v1'), 'flexible_type');
    paramFor(expectError(await api.put(`/v1/campaigns/banner/${(await make(api, '/v1/campaigns/banner', { name: 'C' })).id}`, { flexible_type: flex.id }), 400, 'v1'), 'flexible_type');
  });

  test('only flexible banners of its type go into a flexible campaign', async () => {
    const campaign = await make(api, '/v1/campaigns/banner', { name: 'Flexible campaign', flexible_type: flex.id });
    expect(campaign).toMatchObject({ width: 300, height: 250, flexible_type: flex.id });
    const plain = await make(api, '/v1/banners/image', { name: 'Not flexible', width: 300, height: 250, creative_url: IMG });
    const flexible = await make(api, '/v1/banners/image', { name: 'Flexible one', width: 300, height: 250, creative_url: IMG, flexible_type: flex.id });
    const refused = await api.post('/v1/campaign-assignments', { campaign: { id: campaign.id, type: 'banner_campaign' }, advertisement: { id: plain.id, type: 'image_banner' } });
    expect(paramFor(expectError(refused, 400, 'v1'), 'advertisement').message).toMatch(/flexible type/);
    await make(api, '/v1/campaign-assignments', { campaign: { id: campaign.id, type: 'banner_campaign' }, advertisement: { id: flexible.id, type: 'image_banner' } });
  });
});

describe('banners', () => {
  test('an image banner needs creative or creative_url, and keeps one of them', async () => {
    const none = await api.post('/v1/banners/image', { name: 'No creative', width: 300, height: 250 });
    expect(paramFor(expectError(none, 400, 'v1'), 'creative_url').message).toMatch(/creative/);
    const b = await make(api, '/v1/banners/image', { name: 'URL', width: 300, height: 250, creative_url: IMG });
    expect(b).toMatchObject({ creative: null, creative_url: IMG, html_target: null, location: null });
    expect(b.created_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expectError(await api.put(`/v1/banners/image/${b.id}`, { creative_url: null }), 400, 'v1');
    expect((await api.get(`/v1/banners/image/${b.id}`)).body.creative_url).toBe(IMG);
  });

  test('a flash banner takes exactly one of creative and creative_url, with mode, quality and version defaults', async () => {
    expectError(await api.post('/v1/banners/flash', { name: 'Both', width: 468, height: 60, creative: '77', creative_url: 'https://cdn.example.com/a.swf' }), 400, 'v1');
    expectError(await api.post('/v1/banners/flash', { name: 'Neither', width: 468, height: 60 }), 400, 'v1');
    const f = await make(api, '/v1/banners/flash', { name: 'Flash', width: 468, height: 60, creative: '77' });
    expect(f).toMatchObject({ object: 'flash_banner', creative: '77', creative_url: null, mode: 'opaque', quality: 'high', version: 7 });
    const switched = await api.put(`/v1/banners/flash/${f.id}`, { creative: null, creative_url: 'https://cdn.example.com/b.swf' });
    expect(switched.body).toMatchObject({ creative: null, creative_url: 'https://cdn.example.com/b.swf' });
    expectError(await api.put(`/v1/banners/flash/${f.id}`, { creative_url: null }), 400, 'v1');
  });
});

describe('campaign assignments', () => {
  let campaign: any;
  let text: any;
  let banner: any;
  let flash: any;
  beforeAll(async () => {
    campaign = await make(api, '/v1/campaigns/banner', { name: 'Assignments', width: 300, height: 250 });
    text = await make(api, '/v1/campaigns/text', { name: 'Text assignments' });
    banner = await make(api, '/v1/banners/image', { name: 'Assigned', width: 300, height: 250, creative_url: IMG });
    flash = await make(api, '/v1/banners/flash', { name: 'Assigned flash', width: 300, height: 250, creative: '5' });
  });

  test('weight defaults to 1 and active to true; PUT active false pauses and true resumes', async () => {
    const a = await make(api, '/v1/campaign-assignments', { campaign: { id: campaign.id, type: 'banner_campaign' }, advertisement: { id: banner.id, type: 'image_banner' } });
    expect(a).toEqual({
      object: 'campaign_assignment',
      self: `/v1/campaign-assignments/${a.id}`,
      id: a.id,
      active: true,
      advertisement: { id: banner.id, type: 'image_banner' },
      campaign: { id: campaign.id, type: 'banner_campaign' },
      weight: 1,
    });
    expect((await api.put(`/v1/campaign-assignments/${a.id}`, { active: false })).body.active).toBe(false);
    expect((await api.get(`/v2/campaign-assignments/${a.id}`)).body).toMatchObject({ active: false, status: 'paused', campaign: { type: 'standard_campaign' } });
    expect((await api.put(`/v1/campaign-assignments/${a.id}`, { active: true })).body.active).toBe(true);
    expect((await api.get(`/v2/campaign-assignments/${a.id}`)).body.status).toBe('active');
    const move = await api.put(`/v1/campaign-assignments/${a.id}`, { campaign: { id: text.id, type: 'text_campaign' } });
    expect(paramFor(expectError(move, 400, 'v1'), 'campaign').type).toBe('read_only');
  });

  test('both references must name existing resources of this account and mode, of the type given', async () => {
    const body = (c: unknown, ad: unknown) => ({ campaign: c, advertisement: ad });
    const good = { id: campaign.id, type: 'banner_campaign' };
    const ad = { id: banner.id, type: 'image_banner' };
    const cases: [unknown, unknown, string][] = [
      [{ id: 999999999, type: 'banner_campaign' }, ad, 'campaign'],
      [{ id: campaign.id, type: 'text_campaign' }, ad, 'campaign'],
      [{ id: campaign.id, type: 'standard_campaign' }, ad, 'campaign'],
      [{ id: campaign.id }, ad, 'campaign'],
      [good, { id: flash.id, type: 'image_banner' }, 'advertisement'],
      [good, { id: banner.id, type: 'flash_banner' }, 'advertisement'],
      [good, { id: banner.id, type: 'native_ad_item' }, 'advertisement'],
      [good, 'banner', 'advertisement'],
    ];
    for (const [c, a, field] of cases) paramFor(expectError(await api.post('/v1/campaign-assignments', body(c, a)), 400, 'v1'), field);
    // The live key of the same account sees none of the test resources.
    paramFor(expectError(await acct.live.post('/v1/campaign-assignments', body(good, ad)), 400, 'v1'), 'campaign');
    const ok = await make(api, '/v1/campaign-assignments', body({ id: text.id, type: 'text_campaign' }, { id: flash.id, type: 'flash_banner' }));
    expect(ok).toMatchObject({ campaign: { id: text.id, type: 'text_campaign' }, advertisement: { id: flash.id, type: 'flash_banner' } });
  });

  test('expansion puts the referenced objects in place; depth above 5 is refused', async () => {
    const a = await make(api, '/v1/campaign-assignments', { campaign: { id: campaign.id, type: 'banner_campaign' }, advertisement: { id: banner.id, type: 'image_banner' }, weight: 3 });
    const all = await api.get(`/v1/campaign-assignments/${a.id}?expand=all`);
    expect(all.body.campaign).toMatchObject({ object: 'banner_campaign', id: campaign.id, name: 'Assignments' });
    expect(all.body.advertisement).toMatchObject({ object: 'image_banner', id: banner.id });
    const one = await api.get(`/v1/campaign-assignments/${a.id}?expand=campaign`);
    expect(one.body.campaign.object).toBe('banner_campaign');
    expect(one.body.advertisement).toEqual({ id: banner.id, type: 'image_banner' });
    const v2 = await api.get(`/v2/campaign-assignments/${a.id}?expand=all`);
    expect(v2.body.campaign).toEqual([expect.objectContaining({ object: 'standard_campaign', id: campaign.id })]);
    paramFor(expectError(await api.get(`/v1/campaign-assignments/${a.id}?expand=all&depth=6`), 400, 'v1'), 'depth');
    paramFor(expectError(await api.get(`/v1/campaign-assignments?expand=weight`), 400, 'v1'), 'expand');
    const pub = await make(api, '/v1/publishers', { name: 'Deep' });
    const zone = await make(api, '/v1/zones/text', { name: 'Deep zone', publisher: pub.id });
    const deep = await api.get(`/v1/zones/text/${zone.id}?expand=publisher&depth=5`);
    expect(deep.body.publisher).toMatchObject({ object: 'publisher', id: pub.id, name: 'Deep' });
  });
});

describe('all-types lists', () => {
  test('/v1/zones, /v1/campaigns and /v1/banners list every type newest first, each in its own shape', async () => {
    const fresh = await newAccount();
    const c = fresh.test;
    const z1 = await make(c, '/v1/zones/banner', { name: 'B', width: 728, height: 90 });
    const z2 = await make(c, '/v1/zones/email', { name: 'E', width: 600, height: 100 });
    const z3 = await make(c, '/v1/zones/text', { name: 'T' });
    const zones = await c.get('/v1/zones');
    expect(zones.body).toMatchObject({ object: 'list', url: '/v1/zones', has_more: false, limit: 10, offset: 0 });
    expect(zones.body.data.map((o: any) => [o.object, o.id, o.self])).toEqual([
      ['text_zone', z3.id, `/v1/zones/text/${z3.id}`],
      ['email_zone', z2.id, `/v1/zones/email/${z2.id}`],
      ['banner_zone', z1.id, `/v1/zones/banner/${z1.id}`],
    ]);
    const k1 = await make(c, '/v1/campaigns/banner', { name: 'BC' });
    const k2 = await make(c, '/v1/campaigns/text', { name: 'TC' });
    expect((await c.get('/v1/campaigns')).body.data.map((o: any) => [o.object, o.id])).toEqual([['text_campaign', k2.id], ['banner_campaign', k1.id]]);
    const b1 = await make(c, '/v1/banners/image', { name: 'I', width: 300, height: 250, creative_url: IMG });
    const b2 = await make(c, '/v1/banners/flash', { name: 'F', width: 300, height: 250, creative: '1' });
    const banners = await c.get('/v1/banners?limit=1');
    expect(banners.body).toMatchObject({ has_more: true, limit: 1 });
    expect(banners.body.data.map((o: any) => o.object)).toEqual(['flash_banner']);
    expect((await c.get(`/v1/banners?id=${b1.id}&fields=name`)).body.data).toEqual([{ object: 'image_banner', self: `/v1/banners/image/${b1.id}`, id: b1.id, name: 'I' }]);
    expect((await acct.test.get(`/v1/banners?id=${b2.id}`)).body.data).toEqual([]);
    expectError(await c.post('/v1/zones', { name: 'x' }), 501, 'v1');
    expectError(await c.get('/v1/campaigns?limit=500'), 400, 'v1');
  });
});

describe('zone and conversion tags', () => {
  let email: any;
  let text: any;
  let banner: any;
  beforeAll(async () => {
    email = await make(api, '/v1/zones/email', { name: 'Newsletter', width: 600, height: 200 });
    text = await make(api, '/v1/zones/text', { name: 'Links' });
    banner = await make(api, '/v1/banners/image', { name: 'Converting', width: 300, height: 250, creative_url: IMG });
  });

  test('an email zone answers every tag type by default, pointing at the serving host', async () => {
    const res = await api.get(`/v1/zones/email/${email.id}/tags`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'zone_tag', url: `/v1/zones/email/${email.id}/tags` });
    expect(Object.keys(res.body.data).sort()).toEqual(['async', 'email', 'iframe', 'iframe-no-js', 'image', 'js', 'json'].sort());
    for (const tag of Object.values<string>(res.body.data)) {
      expect(tag).toContain(SERVE);
      expect(tag).toMatch(new RegExp(`zone(=|=")${email.id}\\b`));
      expect(tag).toMatch(new RegExp(`account(=|=")${acct.id}\\b`));
    }
    expect(res.body.data.async).toMatch(/<ins [^>]*data-zone="\d+"[^>]*><\/ins><script async src=/);
    expect(res.body.data.js).toContain('document.write');
    expect(res.body.data['iframe-no-js']).toMatch(/^<iframe [^>]*width="600" height="200"/);
    expect(res.body.data.image).toMatch(/^<a href="[^"]+"[^>]*><img src="[^"]+size=600x200/);
    expect(res.body.data.json).toMatch(/^https:\/\/serve\.example\.test\/serve\/json\?/);
    expect(res.body.data.async).not.toContain('<noscript>');
  });

  test('type, protocol, fallback, click and extra shape the tags', async () => {
    const click = 'https://adx.example/click?u=a b&x=(1)';
    const res = await api.get(`/v1/zones/email/${email.id}/tags?type=async,json&protocol=http&fallback=true&click=${encodeURIComponent(click)}&extra=${encodeURIComponent('?from=mail')}`);
    expect(Object.keys(res.body.data).sort()).toEqual(['async', 'email', 'json']);
    expect(res.body.data.json).toMatch(/^http:\/\/serve\.example\.test\//);
    expect(res.body.data.json).toContain('click=https%3A%2F%2Fadx.example%2Fclick%3Fu%3Da%20b%26x%3D%281%29');
    expect(res.body.data.json).toContain('extra=%3Ffrom%3Dmail');
    expect(res.body.data.async).toContain('<noscript><a href=');
    paramFor(expectError(await api.get(`/v1/zones/email/${email.id}/tags?type=async,banana`), 400, 'v1'), 'type');
    paramFor(expectError(await api.get(`/v1/zones/email/${email.id}/tags?protocol=ftp`), 400, 'v1'), 'protocol');
    paramFor(expectError(await api.get(`/v1/zones/email/${email.id}/tags?fallback=maybe`), 400, 'v1'), 'fallback');
  });

  test('a text zone holds its tags under the key text; missing or foreign zones answer 404', async () => {
    const res = await api.get(`/v1/zones/text/${text.id}/tags?type=js`);
    expect(res.body).toMatchObject({ object: 'zone_tag', data: { text: { js: expect.stringContaining(`zone=${text.id}`) } } });
    expect(Object.keys(res.body.data.text)).toEqual(['js']);
    expectError(await api.get('/v1/zones/text/999999999/tags'), 404, 'v1');
    expectError(await acct.live.get(`/v1/zones/text/${text.id}/tags`), 404, 'v1');
    expectError(await api.get(`/v1/zones/email/${text.id}/tags`), 404, 'v1');
  });

  test('conversion tags of text zones and image banners: conv_tag with data.src and an img tag', async () => {
    for (const path of [`/v1/zones/text/${text.id}/conversion-tag`, `/v1/banners/image/${banner.id}/conversion-tag`]) {
      const res = await api.get(`${path}?protocol=https`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'conv_tag', url: path });
      expect(res.body.data.src).toMatch(/^https:\/\/serve\.example\.test\/serve\/conversion\?/);
      expect(res.body.data.html).toMatch(/^<img src="[^"]+" height="1" width="1"/);
    }
    const http = await api.get(`/v1/banners/image/${banner.id}/conversion-tag?protocol=http`);
    expect(http.body.data.src).toMatch(/^http:\/\//);
    paramFor(expectError(await api.get(`/v1/banners/image/${banner.id}/conversion-tag?protocol=gopher`), 400, 'v1'), 'protocol');
    expectError(await api.get('/v1/banners/image/999999999/conversion-tag'), 404, 'v1');
    expectError(await acct.live.get(`/v1/banners/image/${banner.id}/conversion-tag`), 404, 'v1');
  });
});

describe('archive and delete cascades', () => {
  test('archiving a publisher archives its zones; unarchive restores them', async () => {
    const pub = await make(api, '/v1/publishers', { name: 'Archiving publisher' });
    const z1 = await make(api, '/v1/zones/banner', { name: 'Z1', width: 300, height: 250, publisher: pub.id });
    const z2 = await make(api, '/v1/zones/email', { name: 'Z2', width: 600, height: 100, publisher: pub.id });
    const other = await make(api, '/v1/zones/text', { name: 'Not theirs' });
    const res = await api.get(`/v1/publishers/${pub.id}/archive`);
    expect(res.body.data.archived_resources).toEqual(
      expect.arrayContaining([{ object: 'publisher', id: pub.id }, { object: 'banner_zone', id: z1.id }, { object: 'email_zone', id: z2.id }]),
    );
    expect(res.body.data.archived_resources).toHaveLength(3);
    expectError(await api.get(`/v1/zones/banner/${z1.id}`), 404, 'v1');
    expect((await api.get(`/v1/zones?id=${z1.id},${z2.id},${other.id}`)).body.data.map((o: any) => o.id)).toEqual([other.id]);
    const back = await api.get(`/v1/publishers/${pub.id}/unarchive`);
    expect(back.body.data.unarchived_resources).toHaveLength(3);
    expect((await api.get(`/v1/zones/banner/${z1.id}`)).body).toEqual(z1);
  });

  test('archiving an advertiser takes its campaigns and their assignments; assignments return only when included', async () => {
    const adv = await make(api, '/v1/advertisers', { name: 'Archiving advertiser' });
    const camp = await make(api, '/v1/campaigns/banner', { name: 'Archived campaign', advertiser: adv.id });
    const banner = await make(api, '/v1/banners/image', { name: 'Archived banner', width: 300, height: 250, creative_url: IMG });
    const asg = await make(api, '/v1/campaign-assignments', { campaign: { id: camp.id, type: 'banner_campaign' }, advertisement: { id: banner.id, type: 'image_banner' } });
    const archived = await api.get(`/v1/advertisers/${adv.id}/archive`);
    expect(archived.body.data.archived_resources).toEqual([
      { object: 'advertiser', id: adv.id },
      { object: 'banner_campaign', id: camp.id },
      { object: 'campaign_assignment', id: asg.id },
    ]);
    expectError(await api.get(`/v1/campaign-assignments/${asg.id}`), 404, 'v1');
    expect((await api.get(`/v1/campaign-assignments?id=${asg.id}`)).body.data).toEqual([]);
    const plain = await api.get(`/v1/advertisers/${adv.id}/unarchive`);
    expect(plain.body.data.unarchived_resources).toEqual([{ object: 'advertiser', id: adv.id }, { object: 'banner_campaign', id: camp.id }]);
    expectError(await api.get(`/v1/campaign-assignments/${asg.id}`), 404, 'v1');

    const asg2 = await make(api, '/v1/campaign-assignments', { campaign: { id: camp.id, type: 'banner_campaign' }, advertisement: { id: banner.id, type: 'image_banner' }, weight: 4 });
    await api.get(`/v1/advertisers/${adv.id}/archive`);
    const withAsg = await api.get(`/v1/advertisers/${adv.id}/unarchive?include_campaign_assignments=true`);
    expect(withAsg.body.data.unarchived_resources).toContainEqual({ object: 'campaign_assignment', id: asg2.id });
    expect(withAsg.body.data).not.toHaveProperty('not_restored_resources');
    expect((await api.get(`/v1/campaign-assignments/${asg2.id}`)).body).toEqual(asg2);
  });

  test('an assignment whose banner was deleted meanwhile is reported, not restored, and the advertiser still comes back', async () => {
    const adv = await make(api, '/v1/advertisers', { name: 'Broken link' });
    const camp = await make(api, '/v1/campaigns/banner', { name: 'C', advertiser: adv.id });
    const banner = await make(api, '/v1/banners/image', { name: 'Doomed', width: 300, height: 250, creative_url: IMG });
    const asg = await make(api, '/v1/campaign-assignments', { campaign: { id: camp.id, type: 'banner_campaign' }, advertisement: { id: banner.id, type: 'image_banner' } });
    await api.get(`/v1/advertisers/${adv.id}/archive`);
    expect((await api.del(`/v1/banners/image/${banner.id}`)).status).toBe(200);
    const res = await api.get(`/v1/advertisers/${adv.id}/unarchive?include_campaign_assignments=1`);
    expect(res.status).toBe(200);
    expect(res.body.data.unarchived_resources).toEqual([{ object: 'advertiser', id: adv.id }, { object: 'banner_campaign', id: camp.id }]);
    expect(res.body.data.not_restored_resources).toEqual([{ object: 'campaign_assignment', id: asg.id, reason: expect.stringMatching(/advertisement.*deleted/) }]);
    expect((await api.get(`/v1/advertisers/${adv.id}`)).status).toBe(200);
    expectError(await api.get(`/v1/campaign-assignments/${asg.id}`), 404, 'v1');
  });

  test('deleting an advertiser deletes its campaigns and what serves through them; deleting a banner its assignments', async () => {
    const adv = await make(api, '/v1/advertisers', { name: 'Deleted advertiser' });
    const camp = await make(api, '/v1/campaigns/text', { name: 'Gone', advertiser: adv.id });
    const b1 = await make(api, '/v1/banners/flash', { name: 'Stays', width: 300, height: 250, creative: '3' });
    const asg = await make(api, '/v1/campaign-assignments', { campaign: { id: camp.id, type: 'text_campaign' }, advertisement: { id: b1.id, type: 'flash_banner' } });
    expect((await api.del(`/v1/advertisers/${adv.id}`)).body).toEqual({ id: adv.id, delete: true });
    expectError(await api.get(`/v1/campaigns/text/${camp.id}`), 404, 'v1');
    expectError(await api.get(`/v1/campaign-assignments/${asg.id}`), 404, 'v1');
    expect((await api.get(`/v1/banners/flash/${b1.id}`)).status).toBe(200);

    const camp2 = await make(api, '/v1/campaigns/banner', { name: 'Stays' });
    const asg2 = await make(api, '/v1/campaign-assignments', { campaign: { id: camp2.id, type: 'banner_campaign' }, advertisement: { id: b1.id, type: 'flash_banner' } });
    await api.del(`/v1/banners/flash/${b1.id}`);
    expectError(await api.get(`/v1/campaign-assignments/${asg2.id}`), 404, 'v1');
    expect((await api.get(`/v1/campaigns/banner/${camp2.id}`)).status).toBe(200);

    const pub = await make(api, '/v1/publishers', { name: 'Deleted publisher' });
    const zone = await make(api, '/v1/zones/text', { name: 'Gone too', publisher: pub.id });
    await api.del(`/v1/publishers/${pub.id}`);
    expectError(await api.get(`/v1/zones/text/${zone.id}`), 404, 'v1');
  });
});
