import { status } from '@grpc/grpc-js';
import { expectError, newAccount, paramFor, request, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { adItemTasks } from '../../shared/grpc/clients';
import { nativeFixture, waitForTask } from './v2-fixtures';
import { tenantMetadata } from '../../shared/tenant';

describe('POST /v2/ad-items/native/{id}/to-image', () => {
  let acct: TestAccount;
  let api: Client;
  let fx: Awaited<ReturnType<typeof nativeFixture>>;
  beforeAll(async () => {
    acct = await newAccount(['native-to-image']);
    api = acct.test;
    fx = await nativeFixture(api);
  });

  test('schedules a task that renders the native ad item into an SVG image creative of that size, in that media group', async () => {
    const res = await api.post(`${fx.item.self}/to-image`, { media_group: fx.group.id, size: '320x100', name: 'Homepage banner' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { status: 'success', task: expect.any(Number), task_url: `/v2/scheduled-tasks/native-ad-to-image/${res.body.data.task}` } });
    expectReferenceShape('/v2/ad-items/native/{id}/to-image', 'post', res.body);

    const done = await waitForTask(api, res.body.data.task_url);
    expect(done).toMatchObject({ object: 'scheduled_task', url: res.body.data.task_url, data: { status: 'success', percent_complete: 1, results: { status: 'success' } } });
    expect(done.data.started_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(done.data.completed_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const creativeId = done.data.results.extra.image_creative;
    expect(done.data.results.extra).toMatchObject({ media_group: fx.group.id, size: '320x100', native_ad_item: fx.item.id });

    const creative = await api.get(`/v2/creatives/image/${creativeId}`);
    expect(creative.body).toMatchObject({ object: 'image_creative', group: fx.group.id, name: 'Homepage banner', width: 320, height: 100, mime_type: 'image/svg+xml' });
    // The image is served at its file_url (public, no key) and holds the template rendered with the item's values.
    const file = await request('GET', new URL(creative.body.file_url).pathname);
    expect(file.status).toBe(200);
    const svg = file.text;
    expect(Buffer.byteLength(svg)).toBe(creative.body.file_size);
    expect(svg).toMatch(/^<\?xml[^>]*>\s*<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="320" height="100"/);
    expect(svg).toContain('Running &lt;shoes&gt;');
    expect(svg).toContain('Now 59 &amp; free delivery');
    expect(svg).not.toContain('track()');
    expect(svg).not.toContain('[%');
    // Filed in the media group, as listed creatives of the account.
    const listed = await api.get(`/v2/creatives/image?id=${creativeId}`);
    expect(listed.body.data).toEqual([creative.body]);
  });

  test('the name is optional: the creative is named after the ad item and size', async () => {
    const res = await api.post(`${fx.item.self}/to-image`, { media_group: fx.group.id, size: '300x250' });
    const done = await waitForTask(api, res.body.data.task_url);
    const creative = await api.get(`/v2/creatives/image/${done.data.results.extra.image_creative}`);
    expect(creative.body.name).toBe('Running shoes (300x250)');
  });

  test('invalid input is refused with 400 naming the parameter, and schedules nothing', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ size: '300x250' }, 'media_group', 'missing_field'],
      [{ media_group: fx.group.id }, 'size', 'missing_field'],
      [{ media_group: 'one', size: '300x250' }, 'media_group', 'invalid_value'],
      [{ media_group: 999999999, size: '300x250' }, 'media_group', 'invalid_reference'],
      [{ media_group: fx.group.id, size: '300 by 250' }, 'size', 'invalid_value'],
      [{ media_group: fx.group.id, size: '0x250' }, 'size', 'invalid_value'],
      [{ media_group: fx.group.id, size: '99999x1' }, 'size', 'invalid_value'],
      [{ media_group: fx.group.id, size: '4001x10' }, 'size', 'invalid_value'],
      [{ media_group: fx.group.id, size: 300 }, 'size', 'invalid_value'],
      [{ media_group: fx.group.id, size: '300x250', name: 'n'.repeat(256) }, 'name', 'invalid_value'],
      [{ media_group: fx.group.id, size: '300x250', name: 7 }, 'name', 'invalid_value'],
      [{ media_group: fx.group.id, size: '300x250', name: 'nul\u0000byte' }, 'name', 'invalid_value'],
      [{ media_group: fx.group.id, size: '300x250', name: 'half \ud800 pair' }, 'name', 'invalid_value'],
      [{ media_group: fx.group.id, size: '30\u0000x250' }, 'size', 'invalid_value'],
      [{ media_group: fx.group.id, size: '300x250', colour: 'red' }, 'colour', 'unknown_field'],
    ];
    // Task ids are consecutive: one scheduled before and one after show that none was scheduled between.
    const first = await api.post(`${fx.item.self}/to-image`, { media_group: fx.group.id, size: '10x10' });
    for (const [body, field, type] of cases) {
      const err = expectError(await api.post(`${fx.item.self}/to-image`, body), 400, 'v2');
      expect([JSON.stringify(body).slice(0, 60), paramFor(err, field).type]).toEqual([JSON.stringify(body).slice(0, 60), type]);
      // One size rule, whichever of the gateway and inventory applies it.
      if (field === 'size' && typeof body.size === 'string' && !body.size.includes('\u0000')) expect(err.message).toMatch(/each side from 1 to 4000/);
    }
    expectError(await api.request('POST', `${fx.item.self}/to-image`, undefined, { raw: '[1]' }), 400, 'v2');
    // A 255-character name is accepted.
    const last = await api.post(`${fx.item.self}/to-image`, { media_group: fx.group.id, size: '10x10', name: 'n'.repeat(255) });
    expect(last.status).toBe(200);
    expect(last.body.data.task).toBe(first.body.data.task + 1);
  });

  test('a missing native ad item, or one of another account or mode, is 404', async () => {
    expectError(await api.post('/v2/ad-items/native/999999999/to-image', { media_group: fx.group.id, size: '1x1' }), 404, 'v2');
    expectError(await api.post('/v2/ad-items/native/abc/to-image', { media_group: fx.group.id, size: '1x1' }), 404, 'v2');
    const live = await acct.live.post(`${fx.item.self}/to-image`, { media_group: fx.group.id, size: '1x1' });
    expect(live.status).toBe(400); // the live mode has no such media group either
    const liveGroup = await acct.live.post('/v2/media-groups', { name: 'live group' });
    expectError(await acct.live.post(`${fx.item.self}/to-image`, { media_group: liveGroup.body.id, size: '1x1' }), 404, 'v2');
  });

  test('a native ad item whose template was deleted cannot be converted: 405', async () => {
    const own = await nativeFixture(api);
    await api.del(`/v2/templates/native/${own.item.template}`);
    expect((await api.get(own.item.self)).body.template).toBeNull();
    const err = expectError(await api.post(`${own.item.self}/to-image`, { media_group: own.group.id, size: '1x1' }), 405, 'v2');
    expect(err.message).toMatch(/no template/);
  });

  test('tasks are private to their account and mode; unknown tasks are 404; other methods 501', async () => {
    const res = await api.post(`${fx.item.self}/to-image`, { media_group: fx.group.id, size: '1x1' });
    const other = await newAccount(['native-to-image']);
    expectError(await other.test.get(res.body.data.task_url), 404, 'v2');
    expectError(await acct.live.get(res.body.data.task_url), 404, 'v2');
    expectError(await api.get('/v2/scheduled-tasks/native-ad-to-image/999999999'), 404, 'v2');
    expectError(await api.put(res.body.data.task_url, {}), 501, 'v2');
    expectError(await api.get(`${fx.item.self}/to-image`), 501, 'v2');
  });

  test('without the native-to-image feature the account gets 403 from the gateway, and the service refuses too', async () => {
    const plain = await newAccount();
    const own = await nativeFixture(plain.test);
    const res = await plain.test.post(`${own.item.self}/to-image`, { media_group: own.group.id, size: '300x250' });
    const err = expectError(res, 403, 'v2');
    expect(err.message).toMatch(/Native Ad to Image/);
    // The inventory service checks the account itself, whoever calls it.
    const direct = adItemTasks.scheduleNativeToImage({ nativeAdItem: own.item.id, mediaGroup: own.group.id, size: '300x250', name: '' }, { metadata: tenantMetadata({ accountId: plain.id, mode: 'test' }) });
    await expect(direct).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
  });
});
