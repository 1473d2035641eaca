import fs from 'node:fs';
import https from 'node:https';
import zlib from 'node:zlib';
import { expectError, gatewayPort, newAccount, paramFor, request, type ApiResponse, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';

// Small real files, made from bytes so that nothing binary is committed.
function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}
/** A valid RGB PNG of width x height, every pixel `rgb`. */
function png(width: number, height: number, rgb = [200, 30, 30]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', zlib.deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]);
}
function box(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + payload.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, payload]);
}
/** An ISO BMFF file: an `ftyp` box (isom, mp41) and an `mdat` of distinct bytes, enough to slice. */
function mp4(mdatBytes = 5000): Buffer {
  const ftyp = box('ftyp', Buffer.concat([Buffer.from('isom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41', 'latin1')]));
  return Buffer.concat([ftyp, box('mdat', Buffer.from(Array.from({ length: mdatBytes }, (_, i) => (i * 7 + 3) % 256)))]);
}
const webm = () => Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01]), Buffer.from('webm-test-payload')]);
function wav(): Buffer {
  const data = Buffer.alloc(400, 0x80);
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0);
  fmt.writeUInt16LE(1, 2);
  fmt.writeUInt32LE(8000, 4);
  fmt.writeUInt32LE(8000, 8);
  fmt.writeUInt16LE(1, 12);
  fmt.writeUInt16LE(8, 14);
  const chunks = Buffer.concat([Buffer.from('WAVE'), Buffer.from('fmt '), Buffer.from([16, 0, 0, 0]), fmt, Buffer.from('data'), Buffer.alloc(4, 0), data]);
  chunks.writeUInt32LE(data.length, 4 + 8 + 16 + 4);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(chunks.length, 4);
  return Buffer.concat([head, chunks]);
}
/** An empty ZIP archive: just the end-of-central-directory record. */
const zip = () => Buffer.concat([Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)]);

interface Part {
  name: string;
  value: string | Buffer;
  fileName?: string;
  type?: string;
}

/** A multipart/form-data body made by the platform's own FormData (a fresh random boundary each time). */
async function form(parts: Part[]): Promise<{ raw: Buffer; contentType: string }> {
  const fd = new FormData();
  for (const p of parts) {
    if (typeof p.value === 'string' && p.fileName === undefined) fd.append(p.name, p.value);
    else fd.append(p.name, new Blob([p.value], { type: p.type ?? 'application/octet-stream' }), p.fileName ?? 'file');
  }
  const r = new Response(fd);
  return { raw: Buffer.from(await r.arrayBuffer()), contentType: r.headers.get('content-type')! };
}

async function upload(api: Client, path: string, parts: Part[], headers: Record<string, string> = {}): Promise<ApiResponse> {
  const { raw, contentType } = await form(parts);
  return api.request('POST', path, undefined, { raw, headers: { 'Content-Type': contentType, ...headers }, freshConnection: raw.length > 1024 * 1024 });
}

/** GET of a public file with its bytes intact (the shared helper decodes text). */
function fetchFile(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', servername: 'localhost', port: gatewayPort(), method, path: new URL(url, 'https://x').pathname, headers, ca: fs.readFileSync(process.env.TEST_CA_FILE!, 'utf8') },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('creative uploads (multipart) and their files', () => {
  let acct: TestAccount;
  let api: Client;
  let group: number;
  beforeAll(async () => {
    acct = await newAccount();
    api = acct.test;
    const g = await api.post('/v2/media-groups', { name: 'Uploads' });
    expect(g.status).toBe(200);
    group = g.body.id;
  });

  test('an image uploaded with attributes is created with its file fields and served byte for byte', async () => {
    const image = png(3, 2);
    const res = await upload(api, '/v2/creatives/image', [
      { name: 'attributes', value: JSON.stringify({ group, name: 'Red pixel' }) },
      { name: 'file', value: image, fileName: 'red.png', type: 'image/png' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'image_creative', group, name: 'Red pixel', file_name: 'red.png', file_size: image.length, mime_type: 'image/png', width: 3, height: 2 });
    expect(res.body.file_url).toMatch(/^https:\/\/[^/]+\/creatives\/upload-[0-9a-f]{48}\.png$/);
    expectReferenceShape('/v2/creatives/image', 'post', res.body);
    expect((await api.get(`/v2/creatives/image/${res.body.id}`)).body).toEqual(res.body);

    const file = await fetchFile(res.body.file_url);
    expect(file.status).toBe(200);
    expect(file.bytes.equals(image)).toBe(true);
    expect(file.headers).toMatchObject({
      'content-type': 'image/png',
      'accept-ranges': 'bytes',
      'content-length': String(image.length),
      'cache-control': 'public, max-age=31536000, immutable',
      'content-security-policy': "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
    });
    // Conditional requests still get 304.
    expect((await fetchFile(res.body.file_url, { 'If-None-Match': String(file.headers.etag) })).status).toBe(304);
  });

  test('a video given with plain form parts is served as video/mp4 and answers Range requests', async () => {
    const video = mp4();
    const res = await upload(api, '/v2/creatives/video', [
      { name: 'group', value: String(group) },
      { name: 'name', value: 'Clip' },
      { name: 'duration', value: '15' },
      { name: 'file', value: video, fileName: 'clip.mp4', type: 'video/mp4' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'video_creative', group, name: 'Clip', duration: 15, file_name: 'clip.mp4', file_size: video.length, mime_type: 'video/mp4' });
    expectReferenceShape('/v2/creatives/video', 'post', res.body);
    const url = res.body.file_url;

    const whole = await fetchFile(url);
    expect(whole.headers['content-type']).toBe('video/mp4');
    expect(whole.bytes.equals(video)).toBe(true);

    // What a media player sends first, then a seek.
    const open = await fetchFile(url, { Range: 'bytes=0-' });
    expect(open.status).toBe(206);
    expect(open.headers['content-range']).toBe(`bytes 0-${video.length - 1}/${video.length}`);
    expect(open.bytes.equals(video)).toBe(true);
    const mid = await fetchFile(url, { Range: 'bytes=100-1099' });
    expect(mid.status).toBe(206);
    expect(mid.headers).toMatchObject({ 'content-range': `bytes 100-1099/${video.length}`, 'content-length': '1000', 'content-type': 'video/mp4', 'accept-ranges': 'bytes' });
    expect(mid.bytes.equals(video.subarray(100, 1100))).toBe(true);
    const tail = await fetchFile(url, { Range: 'bytes=-10' });
    expect(tail.status).toBe(206);
    expect(tail.bytes.equals(video.subarray(video.length - 10))).toBe(true);
    // Past the end: the end is clamped.
    const over = await fetchFile(url, { Range: `bytes=${video.length - 5}-${video.length + 100}` });
    expect(over.status).toBe(206);
    expect(over.bytes.equals(video.subarray(video.length - 5))).toBe(true);

    const outside = await fetchFile(url, { Range: `bytes=${video.length}-` });
    expect(outside.status).toBe(416);
    expect(outside.headers['content-range']).toBe(`bytes */${video.length}`);
    expect(JSON.parse(outside.bytes.toString())).toMatchObject({ object: 'error', http_status: 416 });

    // If-Range naming another version, or several ranges: the whole file.
    const stale = await fetchFile(url, { Range: 'bytes=0-9', 'If-Range': '"not-this-one"' });
    expect(stale.status).toBe(200);
    expect(stale.bytes.equals(video)).toBe(true);
    const fresh = await fetchFile(url, { Range: 'bytes=0-9', 'If-Range': String(whole.headers.etag) });
    expect(fresh.status).toBe(206);
    expect(fresh.bytes.equals(video.subarray(0, 10))).toBe(true);
    const several = await fetchFile(url, { Range: 'bytes=0-9,100-109' });
    expect(several.status).toBe(200);
    expect(several.bytes.equals(video)).toBe(true);

    const head = await fetchFile(url, { Range: 'bytes=10-19' }, 'HEAD');
    expect(head).toMatchObject({ status: 206, headers: { 'content-length': '10' } });
  });

  test('a file larger than one read slice is sent whole and in ranges across slices', async () => {
    // 7 MB: three slices of inventory reads.
    const video = mp4(7 * 1024 * 1024);
    const res = await upload(api, '/v2/creatives/video', [{ name: 'attributes', value: JSON.stringify({ group }) }, { name: 'file', value: video, fileName: 'long.mp4' }]);
    expect(res.status).toBe(200);
    const whole = await fetchFile(res.body.file_url);
    expect(whole.status).toBe(200);
    expect(whole.bytes.equals(video)).toBe(true);
    const start = 3 * 1024 * 1024 - 10;
    const across = await fetchFile(res.body.file_url, { Range: `bytes=${start}-${start + 6 * 1024 * 1024}` });
    expect(across.status).toBe(206);
    expect(across.bytes.equals(video.subarray(start, start + 6 * 1024 * 1024 + 1))).toBe(true);
  });

  test('WebM video, WAV audio and ZIP rich media are taken and served with their types', async () => {
    const cases: [string, Buffer, string, string][] = [
      ['/v2/creatives/video', webm(), 'video/webm', 'video_creative'],
      ['/v2/creatives/audio', wav(), 'audio/wav', 'audio_creative'],
      ['/v2/creatives/rich-media', zip(), 'application/zip', 'rich_media_creative'],
    ];
    for (const [path, bytes, type, object] of cases) {
      const res = await upload(api, path, [{ name: 'attributes', value: JSON.stringify({ group }) }, { name: 'file', value: bytes, fileName: 'f.bin' }]);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object, mime_type: type, file_size: bytes.length, file_name: 'f.bin' });
      const file = await fetchFile(res.body.file_url);
      expect(file.headers['content-type']).toBe(type);
      expect(file.bytes.equals(bytes)).toBe(true);
    }
  });

  test('JSON create still works as before', async () => {
    const res = await api.post('/v2/creatives/image', { group, file_url: 'https://cdn.example.com/a.png', width: 300, height: 250 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'image_creative', file_url: 'https://cdn.example.com/a.png', file_size: null });
  });

  test('replace-file swaps the bytes and the file fields; the old file stays at its URL', async () => {
    const first = png(1, 1);
    const created = await upload(api, '/v2/creatives/image', [{ name: 'attributes', value: JSON.stringify({ group, name: 'Swap me' }) }, { name: 'file', value: first, fileName: 'one.png' }]);
    const second = png(4, 5, [10, 200, 10]);
    const res = await upload(api, `/v2/creatives/image/${created.body.id}/replace-file`, [{ name: 'file', value: second, fileName: 'two.png', type: 'image/png' }]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.body.id, name: 'Swap me', file_name: 'two.png', file_size: second.length, mime_type: 'image/png', width: 4, height: 5 });
    expect(res.body.file_url).not.toBe(created.body.file_url);
    expectReferenceShape('/v2/creatives/image/{id}/replace-file', 'post', res.body);
    expect((await fetchFile(res.body.file_url)).bytes.equals(second)).toBe(true);
    expect((await fetchFile(created.body.file_url)).bytes.equals(first)).toBe(true);
    expect((await api.get(`/v2/creatives/image/${created.body.id}`)).body.file_url).toBe(res.body.file_url);

    // A video's file is replaced the same way.
    const clip = await upload(api, '/v2/creatives/video', [{ name: 'group', value: String(group) }, { name: 'file', value: mp4(100), fileName: 'a.mp4' }]);
    const other = webm();
    const swapped = await upload(api, `/v2/creatives/video/${clip.body.id}/replace-file`, [{ name: 'file', value: other, fileName: 'b.webm' }]);
    expect(swapped.body).toMatchObject({ mime_type: 'video/webm', file_size: other.length, file_name: 'b.webm' });
  });

  test('invalid forms are refused with 400 and a message saying what to fix', async () => {
    const attrs = { name: 'attributes', value: JSON.stringify({ group }) };
    const cases: [string, Part[], string, string][] = [
      ['/v2/creatives/image', [attrs], 'file', 'missing_field'],
      ['/v2/creatives/image', [attrs, { name: 'file', value: Buffer.alloc(0), fileName: 'e.png' }], 'file', 'invalid_value'],
      ['/v2/creatives/video', [attrs, { name: 'file', value: png(1, 1), fileName: 'x.mp4', type: 'video/mp4' }], 'file', 'invalid_value'],
      ['/v2/creatives/image', [attrs, { name: 'file', value: Buffer.from('just some text'), fileName: 'x.png', type: 'image/png' }], 'file', 'invalid_value'],
      ['/v2/creatives/audio', [attrs, { name: 'file', value: mp4(10).subarray(0, 8), fileName: 'x.m4a' }], 'file', 'invalid_value'],
      ['/v2/creatives/rich-media', [attrs, { name: 'file', value: png(1, 1), fileName: 'x.zip' }], 'file', 'invalid_value'],
      ['/v2/creatives/image', [{ name: 'attributes', value: JSON.stringify({ group, colour: 'red' }) }, { name: 'file', value: png(1, 1) }], 'colour', 'unknown_field'],
      ['/v2/creatives/image', [attrs, { name: 'shade', value: 'dark' }, { name: 'file', value: png(1, 1) }], 'shade', 'unknown_field'],
      ['/v2/creatives/image', [{ name: 'attributes', value: JSON.stringify({ group, file_url: 'https://x.example/a.png' }) }, { name: 'file', value: png(1, 1) }], 'file_url', 'read_only'],
      ['/v2/creatives/image', [attrs, { name: 'group', value: String(group) }, { name: 'file', value: png(1, 1) }], 'group', 'invalid_value'],
      ['/v2/creatives/image', [{ name: 'attributes', value: '[1]' }, { name: 'file', value: png(1, 1) }], 'attributes', 'invalid_value'],
      ['/v2/creatives/image', [{ name: 'name', value: 'no group' }, { name: 'file', value: png(1, 1) }], 'group', 'missing_field'],
      ['/v2/creatives/image', [{ name: 'group', value: '999999999' }, { name: 'file', value: png(1, 1) }], 'group', 'invalid_reference'],
      ['/v2/creatives/image', [attrs, { name: 'image', value: png(1, 1), fileName: 'a.png' }], 'image', 'invalid_value'],
    ];
    for (const [path, parts, field, type] of cases) {
      const res = await upload(api, path, parts);
      const body = expectError(res, 400, 'v2');
      expect({ field, type: paramFor(body, field).type }).toEqual({ field, type });
    }
    const badJson = await upload(api, '/v2/creatives/image', [{ name: 'attributes', value: '{group: 1' }, { name: 'file', value: png(1, 1) }]);
    expect(expectError(badJson, 400, 'v2').message).toMatch(/'attributes' part must be a JSON object/);
    const wrongType = await upload(api, '/v2/creatives/video', [attrs, { name: 'file', value: png(1, 1), fileName: 'x.mp4', type: 'video/mp4' }]);
    expect(wrongType.body.message).toBe('The uploaded file (sent as video/mp4) is not a MP4, WebM or Ogg file, judging by its content: a video creative takes MP4, WebM or Ogg.');
    const broken = await api.request('POST', '/v2/creatives/image', undefined, { raw: 'garbage', headers: { 'Content-Type': 'multipart/form-data' } });
    expect(expectError(broken, 400, 'v2').message).toMatch(/multipart\/form-data body cannot be read/);
    // Nothing was created by any of them.
    const listed = await api.get(`/v2/creatives/image?limit=100`);
    expect(listed.body.data.filter((c: { name: string }) => c.name === 'no group')).toEqual([]);
  });

  test('replace-file refusals: 404 for an unknown id, 400 without a form or with other parts', async () => {
    const created = await upload(api, '/v2/creatives/image', [{ name: 'group', value: String(group) }, { name: 'file', value: png(1, 1) }]);
    expectError(await upload(api, '/v2/creatives/image/999999999/replace-file', [{ name: 'file', value: png(1, 1) }]), 404, 'v2');
    expectError(await upload(api, '/v2/creatives/image/abc/replace-file', [{ name: 'file', value: png(1, 1) }]), 404, 'v2');
    // The id of an image creative is no video creative.
    expectError(await upload(api, `/v2/creatives/video/${created.body.id}/replace-file`, [{ name: 'file', value: mp4(10) }]), 404, 'v2');
    expect(expectError(await api.post(`/v2/creatives/image/${created.body.id}/replace-file`, { file: 'x' }), 400, 'v2').message).toMatch(/multipart\/form-data/);
    const extra = await upload(api, `/v2/creatives/image/${created.body.id}/replace-file`, [{ name: 'name', value: 'x' }, { name: 'file', value: png(1, 1) }]);
    expect(paramFor(expectError(extra, 400, 'v2'), 'name').type).toBe('unknown_field');
    expect(paramFor(expectError(await upload(api, `/v2/creatives/image/${created.body.id}/replace-file`, []), 400, 'v2'), 'file').type).toBe('missing_field');
    expectError(await api.get(`/v2/creatives/image/${created.body.id}/replace-file`), 501, 'v2');
  });

  test('a file over the upload limit is refused with 413 in the error shape', async () => {
    const big = Buffer.alloc(50 * 1024 * 1024 + 1);
    png(1, 1).copy(big);
    const res = await upload(api, '/v2/creatives/image', [{ name: 'group', value: String(group) }, { name: 'file', value: big, fileName: 'huge.png' }]);
    const body = expectError(res, 413, 'v2');
    expect(body.type).toBe('request_too_large_error');
    expect(body.message).toMatch(/larger than the upload limit of 52428800 bytes/);
    // Declared far past the limit: refused before the body is read (the client has sent one byte of it).
    const early = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          servername: 'localhost',
          port: gatewayPort(),
          method: 'POST',
          path: '/v2/creatives/image',
          ca: fs.readFileSync(process.env.TEST_CA_FILE!, 'utf8'),
          headers: { Authorization: `Basic ${acct.testKey}`, 'Content-Type': 'multipart/form-data; boundary=abc', 'Content-Length': String(200 * 1024 * 1024) },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c) => chunks.push(c));
          r.on('end', () => {
            resolve({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      req.write('-');
    });
    expect(early.status).toBe(413);
    expect(JSON.parse(early.body)).toMatchObject({ object: 'error', type: 'request_too_large_error', http_status: 413 });
  });

  test('accounts and modes are separate: no one else can replace (or see) a creative or its file record', async () => {
    const created = await upload(api, '/v2/creatives/image', [{ name: 'group', value: String(group) }, { name: 'file', value: png(2, 2) }]);
    const other = await newAccount();
    expectError(await upload(other.test, `/v2/creatives/image/${created.body.id}/replace-file`, [{ name: 'file', value: png(1, 1) }]), 404, 'v2');
    // The same account's live key sees no test creative either.
    expectError(await upload(acct.live, `/v2/creatives/image/${created.body.id}/replace-file`, [{ name: 'file', value: png(1, 1) }]), 404, 'v2');
    expect((await api.get(`/v2/creatives/image/${created.body.id}`)).body.file_url).toBe(created.body.file_url);
    // Creating with the test group from live mode names a group live mode does not have.
    const live = await upload(acct.live, '/v2/creatives/image', [{ name: 'group', value: String(group) }, { name: 'file', value: png(2, 2) }]);
    expect(paramFor(expectError(live, 400, 'v2'), 'group').type).toBe('invalid_reference');
    // The same bytes uploaded by two tenants are two files.
    const liveGroup = (await acct.live.post('/v2/media-groups', { name: 'Live uploads' })).body.id;
    const liveCreative = await upload(acct.live, '/v2/creatives/image', [{ name: 'group', value: String(liveGroup) }, { name: 'file', value: png(2, 2) }]);
    expect(liveCreative.status).toBe(200);
    expect(liveCreative.body.file_url).not.toBe(created.body.file_url);
  });

  test('an Idempotency-Key replays the same upload (whatever its boundary) and refuses another file', async () => {
    const key = `upload-${Date.now()}-${Math.random()}`;
    const parts = (bytes: Buffer): Part[] => [{ name: 'attributes', value: JSON.stringify({ group, name: 'Once' }) }, { name: 'file', value: bytes, fileName: 'once.png' }];
    const first = await upload(api, '/v2/creatives/image', parts(png(1, 1)), { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    const again = await upload(api, '/v2/creatives/image', parts(png(1, 1)), { 'Idempotency-Key': key });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expectError(await upload(api, '/v2/creatives/image', parts(png(2, 1)), { 'Idempotency-Key': key }), 409, 'v2');
  });

  test('an unknown file name is 404', async () => {
    const res = await request('GET', '/creatives/upload-0000.png');
    expect(res.status).toBe(404);
  });
});
