import { status as grpcStatus } from '@grpc/grpc-js';
import type { Request, Response } from 'express';
import type { CreativeFile } from '../proto/gen/adserver/inventory/v1/creative_files';
import { creativeFiles } from '../services/shared/grpc/clients';
import { errorFields, log } from '../services/shared/log';
import { ApiError } from './errors';

/**
 * `GET /creatives/{name}`: the public file behind a creative's `file_url` (ad tags load it, so no key),
 * read from inventory, which keeps it in its database for every replica. A name never changes content,
 * so it may be cached for good. The file is served as a sandboxed document: an SVG cannot run script on
 * this origin.
 */
export async function creativeFile(req: Request, res: Response): Promise<void> {
  const name = String(req.params.name ?? '');
  let file: CreativeFile;
  try {
    file = await creativeFiles.getCreativeFile({ name }, { idempotent: true });
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === grpcStatus.NOT_FOUND || code === grpcStatus.INVALID_ARGUMENT) throw new ApiError(404, 'not_found_error', 'No such creative file.');
    log.warn('creative file unavailable', errorFields(err));
    throw new ApiError(503, 'service_unavailable_error', 'The creative file cannot be read right now; retry shortly.');
  }
  const etag = `"${file.etag}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  res.setHeader('Content-Security-Policy', "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox");
  res.setHeader('Access-Control-Allow-Origin', '*');
  // req.fresh compares If-None-Match (lists and weak forms included) with the ETag set above.
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  res.type(file.contentType).send(Buffer.from(file.body));
}
