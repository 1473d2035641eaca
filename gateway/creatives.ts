import { status as grpcStatus } from '@grpc/grpc-js';
import type { Request, Response } from 'express';
import type { CreativeFile } from '../proto/gen/adserver/inventory/v1/creative_files';
import { creativeFiles } from '../services/shared/grpc/clients';
import { errorFields, log } from '../services/shared/log';
import { ApiError } from './errors';

/** Bytes read per call: below grpc-js's default 4 MB receive limit, and what the gateway holds at once. */
const READ_CHUNK = 3 * 1024 * 1024;

async function readSlice(name: string, offset: number, length: number): Promise<CreativeFile> {
  try {
    return await creativeFiles.getCreativeFile({ name, offset, length }, { idempotent: true });
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === grpcStatus.NOT_FOUND || code === grpcStatus.INVALID_ARGUMENT) throw new ApiError(404, 'not_found_error', 'No such creative file.');
    log.warn('creative file unavailable', errorFields(err));
    throw new ApiError(503, 'service_unavailable_error', 'The creative file cannot be read right now; retry shortly.');
  }
}

/**
 * The byte range to answer, or undefined for the whole file. A Range header is ignored (whole file,
 * as RFC 9110 allows) when malformed, when it asks for several ranges, or when If-Range names another
 * version; one that no byte of the file satisfies is a 416.
 */
function rangeOf(req: Request, size: number, etag: string): { start: number; end: number } | undefined {
  if (req.headers.range === undefined) return undefined;
  const ifRange = req.headers['if-range'];
  // Only our strong ETag can match: the file has no Last-Modified, so an HTTP date never does.
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const ranges = req.range(size, { combine: true });
  if (ranges === -1) {
    throw new ApiError(416, 'range_not_satisfiable_error', `The requested range is outside the file, which has ${size} bytes.`, undefined, { 'Content-Range': `bytes */${size}` });
  }
  if (ranges === -2 || ranges === undefined || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0].start, end: ranges[0].end };
}

/**
 * `GET /creatives/{name}`: the public file behind a creative's `file_url` (ad tags load it, so no key),
 * read from inventory, which keeps it in its database for every replica. A name never changes content,
 * so it may be cached for good. Range requests are answered (video players seek with them); large
 * files are read from inventory and sent in slices. The file is served as a sandboxed document: an
 * SVG cannot run script on this origin.
 */
export async function creativeFile(req: Request, res: Response): Promise<void> {
  const name = String(req.params.name ?? '');
  // With a Range header, a one-byte probe learns the size without reading the start of a long video.
  const first = await readSlice(name, 0, req.headers.range !== undefined ? 1 : READ_CHUNK);
  const etag = `"${first.etag}"`;
  const size = Number(first.size);
  const range = rangeOf(req, size, etag);
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  res.setHeader('Content-Security-Policy', "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox");
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Accept-Ranges', 'bytes');
  // req.fresh compares If-None-Match (lists and weak forms included) with the ETag set above.
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  const start = range?.start ?? 0;
  const end = range ? range.end : size - 1;
  res.status(range ? 206 : 200);
  if (range) res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
  res.setHeader('Content-Type', first.contentType);
  res.setHeader('Content-Length', String(end - start + 1));
  const have = Buffer.from(first.body);
  if (req.method === 'HEAD' || end < start) {
    res.end();
    return;
  }
  if (start === 0 && end < have.length) {
    res.end(have.subarray(0, end + 1));
    return;
  }
  await streamSlices(res, name, first.etag, start, end);
}

/** Sends bytes start..end (inclusive) in READ_CHUNK slices, waiting for the client to take each. */
async function streamSlices(res: Response, name: string, etag: string, start: number, end: number): Promise<void> {
  try {
    for (let offset = start; offset <= end && !res.destroyed; offset += READ_CHUNK) {
      const slice = await readSlice(name, offset, Math.min(READ_CHUNK, end - offset + 1));
      // A name's content never changes; if it somehow did, a spliced answer would be corrupt.
      if (slice.etag !== etag) throw new Error('creative file changed while it was being sent');
      if (!res.write(Buffer.from(slice.body))) await drained(res);
    }
    res.end();
  } catch (err) {
    // The status line is gone: all that is left is to cut the answer short, so the client sees it incomplete.
    log.warn('creative file send failed', { name, ...errorFields(err) });
    res.destroy(err as Error);
  }
}

/** Resolves once the response can take more, or has closed (a client gone mid-video never drains). */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
