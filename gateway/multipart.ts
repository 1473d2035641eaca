import busboy from 'busboy';
import type { Request } from 'express';
import { uploadMaxBytes } from '../services/shared/creative-files';
import { ApiError, apiErrors } from './errors';

/** Paths that take a multipart/form-data body (creative uploads); every other path reads its body as JSON. */
const UPLOAD_PATH = /^\/v2\/creatives\/(image|video|audio|rich-media)(\/[^/]+\/replace-file)?\/?$/i;

/** A parsed form: its text parts in order and its one file part. */
export interface Upload {
  fields: { name: string; value: string }[];
  file?: { field: string; fileName: string; declaredType: string; bytes: Buffer };
}

const MAX_FIELDS = 50;
const MAX_FIELD_BYTES = 64 * 1024;

export function isMultipart(req: Request): boolean {
  return /^multipart\/form-data\s*(;|$)/i.test(String(req.headers['content-type'] ?? ''));
}

/** Whether the JSON body parser leaves this request's body to the upload routes. */
export function isUploadRequest(req: Request): boolean {
  return req.method === 'POST' && UPLOAD_PATH.test(req.path) && isMultipart(req);
}

const tooLarge = () =>
  new ApiError(413, 'request_too_large_error', `The file is larger than the upload limit of ${uploadMaxBytes()} bytes (${Math.round(uploadMaxBytes() / 1024 / 1024)} MB).`);

const parsed = new WeakMap<Request, Promise<Upload>>();

/**
 * The request's form, read once (the idempotency check reads it to fingerprint the request, then the
 * route uses it). The file is held in memory, up to CREATIVE_UPLOAD_MAX_BYTES: it goes to inventory
 * in one message anyway. Refuses with 413 past that limit and 400 for a form it cannot take.
 */
export function readUpload(req: Request): Promise<Upload> {
  let p = parsed.get(req);
  if (!p) parsed.set(req, (p = parse(req)));
  return p;
}

function parse(req: Request): Promise<Upload> {
  const max = uploadMaxBytes();
  // A declared length far past the limit is refused before any byte is read (room left for the form's own parts).
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max + MAX_FIELDS * MAX_FIELD_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { fileSize: max, files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_FIELDS + 1 } });
    } catch (err) {
      reject(apiErrors.badRequest(`The multipart/form-data body cannot be read: ${(err as Error).message}.`));
      return;
    }
    const upload: Upload = { fields: [] };
    // The first problem wins; the rest of the body is still read so that the answer reaches the client.
    let problem: ApiError | undefined;
    const refuse = (e: ApiError) => (problem ??= e);
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) refuse(apiErrors.invalid([{ field: name.slice(0, 64), type: 'invalid_value', message: `The '${name.slice(0, 64)}' part is longer than ${MAX_FIELD_BYTES} bytes.` }]));
      else upload.fields.push({ name, value });
    });
    bb.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => refuse(tooLarge()));
      stream.on('end', () => {
        if (!problem) upload.file = { field, fileName: info.filename ?? '', declaredType: info.mimeType ?? '', bytes: Buffer.concat(chunks) };
        chunks.length = 0;
      });
    });
    bb.on('filesLimit', () => refuse(apiErrors.badRequest("Send one file, in the 'file' part.")));
    bb.on('fieldsLimit', () => refuse(apiErrors.badRequest(`The form has more than ${MAX_FIELDS} parts.`)));
    bb.on('partsLimit', () => refuse(apiErrors.badRequest(`The form has more than ${MAX_FIELDS} parts.`)));
    bb.on('error', (err: Error) => reject(problem ?? apiErrors.badRequest(`The multipart/form-data body cannot be read: ${err.message}.`)));
    bb.on('close', () => (problem ? reject(problem) : resolve(upload)));
    req.on('aborted', () => reject(apiErrors.badRequest('The request body was not received completely.')));
    req.pipe(bb);
  });
}

/** What the idempotency fingerprint sees of a form: its text parts and the file's digest, not its boundary. */
export async function uploadFingerprint(req: Request, digest: (b: Buffer) => string): Promise<unknown> {
  const u = await readUpload(req);
  return { fields: u.fields, file: u.file && { field: u.file.field, name: u.file.fileName, sha256: digest(u.file.bytes) } };
}
