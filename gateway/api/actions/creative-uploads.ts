import type { NextFunction, Request, Response, Router } from 'express';
import { getKind, type FieldSpec, type Json, type ParameterError } from '../../../services/shared/catalog';
import { checkJsonShape, isPlainObject } from '../../../services/shared/catalog/validate';
import { parseBoolean } from '../../../services/shared/booleans';
import { serveBaseUrl } from '../../../services/shared/config';
import { ACCEPTED_FORMATS, imageSize, sniffMediaType, uploadMaxBytes, type UploadKind } from '../../../services/shared/creative-files';
import { creativeFiles } from '../../../services/shared/grpc/clients';
import { ctxOf } from '../../context';
import { apiErrors, methodNotSupported } from '../../errors';
import { markReplayed } from '../../idempotency';
import { isMultipart, readUpload, type Upload } from '../../multipart';
import { asCaller, backend } from '../backend';
import { parseId, parseShapeParams } from '../params';
import { describeMultipartBody, documentedRoute, type JsonSchema } from '../route-docs';
import { shape } from '../shape';
import { translateInput, viewOf, type View } from '../views';
import type { ActionModule } from './index';

const UPLOAD_KINDS: UploadKind[] = ['image_creative', 'video_creative', 'audio_creative', 'rich_media_creative'];
/** Fields the uploaded file decides; a form may not set them. */
const FROM_FILE = new Set(['file_url', 'file_size', 'mime_type']);

const invalid = (field: string, message: string, type: ParameterError['type'] = 'invalid_value') => apiErrors.invalid([{ field, type, message }]);

/** The uploaded file, checked: present, not empty, and of a format the kind takes (by its bytes). */
function checkedFile(view: View, upload: Upload) {
  const kind = view.kind.kind as UploadKind;
  const file = upload.file;
  if (!file) throw invalid('file', `The form has no 'file' part: send the ${view.kind.title}'s file (${ACCEPTED_FORMATS[kind]}) as a part named 'file'.`, 'missing_field');
  if (file.field !== 'file') throw invalid(file.field.slice(0, 64), `The file must be sent in a part named 'file', not '${file.field.slice(0, 64)}'.`);
  if (!file.bytes.length) throw invalid('file', 'The uploaded file is empty.');
  const mediaType = sniffMediaType(kind, file.bytes);
  if (!mediaType) {
    const declared = file.declaredType && file.declaredType !== 'application/octet-stream' ? ` (sent as ${file.declaredType.slice(0, 64)})` : '';
    throw invalid('file', `The uploaded file${declared} is not a ${ACCEPTED_FORMATS[kind]} file, judging by its content: a ${view.kind.title} takes ${ACCEPTED_FORMATS[kind]}.`);
  }
  return { ...file, mediaType, fileName: (file.fileName || 'upload').slice(0, 255) };
}

/** A plain form part's text as the JSON value its field takes (forms carry text only). */
function fromText(spec: FieldSpec | undefined, text: string): Json {
  if (!spec) return text;
  if ((spec.type === 'ref' || spec.type === 'integer') && /^-?\d{1,15}$/.test(text)) return Number(text);
  if (spec.type === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  if (spec.type === 'boolean') return parseBoolean(text) ?? text;
  if (spec.nullable && text === 'null') return null;
  return text;
}

/** The creative's fields from the form: the `attributes` JSON object and plain parts, each field given once. */
function formAttributes(view: View, upload: Upload): Record<string, Json> {
  const body: Record<string, Json> = {};
  const errors: ParameterError[] = [];
  const put = (name: string, value: Json) => {
    if (name in body) errors.push({ field: name, type: 'invalid_value', message: `'${name}' is given more than once in the form; give each field once.` });
    else if (FROM_FILE.has(view.input.get(name) ?? name)) errors.push({ field: name, type: 'read_only', message: `'${name}' is taken from the uploaded file and cannot be given.` });
    else body[name] = value;
  };
  for (const { name, value } of upload.fields) {
    if (name !== 'attributes') {
      put(name, fromText(view.kind.fields[view.input.get(name) ?? ''], value));
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw apiErrors.badRequest(`The 'attributes' part must be a JSON object, e.g. {"group": 55, "name": "Spring sale"}; it is not valid JSON.`, 'invalid_json_error');
    }
    if (!isPlainObject(parsed)) throw invalid('attributes', `The 'attributes' part must be a JSON object, e.g. {"group": 55, "name": "Spring sale"}.`);
    const deep = checkJsonShape(parsed, 0, 16);
    if (deep) throw invalid('attributes', `The 'attributes' part ${deep}.`);
    for (const [name, value] of Object.entries(parsed)) put(name, value as Json);
  }
  if (errors.length) throw apiErrors.invalid(errors);
  return body;
}

/** Stores the file in inventory for the caller's account and mode; answers its public URL. */
async function storeFile(res: Response, mediaType: string, bytes: Buffer): Promise<string> {
  const ctx = ctxOf(res);
  // A whole file in one message: allow for a slow database with a longer deadline than reads get.
  const stored = await asCaller(ctx, (metadata) => creativeFiles.putCreativeFile({ contentType: mediaType, body: bytes }, { metadata, timeoutMs: 60_000 }));
  return `${serveBaseUrl()}/creatives/${stored.name}`;
}

/** The form-data schema of a create: the file, `attributes`, or the kind's fields as plain parts. */
function createFormSchema(view: View): JsonSchema {
  const kind = view.kind.kind as UploadKind;
  const plain: Record<string, JsonSchema> = {};
  for (const [name, canonical] of view.input) {
    if (FROM_FILE.has(canonical)) continue;
    const spec = view.kind.fields[canonical];
    const type = spec.type === 'ref' || spec.type === 'integer' ? 'integer' : spec.type === 'boolean' ? 'boolean' : spec.type === 'number' ? 'number' : 'string';
    plain[name] = { type, description: `The ${name.replace(/_/g, ' ')} (may also be given in 'attributes').${name === 'file_name' ? ' Default: the uploaded file\'s name.' : ''}` };
  }
  return {
    type: 'object',
    required: ['file'],
    properties: {
      file: { type: 'string', contentMediaType: 'application/octet-stream', description: `The ${view.kind.title}'s file: ${ACCEPTED_FORMATS[kind]} (checked by content), at most CREATIVE_UPLOAD_MAX_BYTES (default 50 MB). It is served at the creative's file_url.` },
      attributes: {
        type: 'string',
        contentMediaType: 'application/json',
        description: `A JSON object of the ${view.kind.title}'s fields, e.g. {"group": 55, "name": "Spring sale"}. 'group' is required, here or as a plain part; file_url, file_size and mime_type come from the file.`,
      },
      ...plain,
    },
  };
}

/**
 * Creative uploads (v2): POST /v2/creatives/{type} also takes multipart/form-data with the file, and
 * POST /v2/creatives/{type}/{id}/replace-file swaps the file of an existing creative. The bytes are
 * stored in inventory (CreativeFiles.PutCreativeFile) and served at GET /creatives/{name}.
 */
export const creativeUploadActions: ActionModule = (router: Router) => {
  for (const kindName of UPLOAD_KINDS) {
    const view = viewOf(getKind(kindName), 'v2')!;
    const fieldNames = new Set(view.output.map((f) => f.name));

    // Ahead of the catalog's JSON create on the same path: a form is handled here, anything else goes on.
    router.post(view.path, async (req: Request, res: Response, next: NextFunction) => {
      if (!isMultipart(req)) return next();
      const ctx = ctxOf(res);
      const sp = parseShapeParams(req, fieldNames, view.expandable);
      const upload = await readUpload(req);
      const file = checkedFile(view, upload);
      const body = formAttributes(view, upload);
      const size = view.kind.kind === 'image_creative' ? imageSize(file.bytes, file.mediaType) : undefined;
      const fits = (n: number) => n >= 1 && n <= 10000;
      if (size && fits(size.width) && fits(size.height)) {
        body.width ??= size.width;
        body.height ??= size.height;
      }
      body.file_name ??= file.fileName;
      // Checked before the file is stored, so that a form with unknown fields or no group leaves no file behind.
      const { attributes, errors } = translateInput(view, { ...body, file_url: 'https://placeholder.invalid/' });
      if (errors.length) throw apiErrors.invalid(errors);
      if (attributes.group === undefined || attributes.group === null) {
        throw invalid('group', "'group' is required: the id of the media group to file the creative in, in 'attributes' or as a plain part.", 'missing_field');
      }
      attributes.file_url = await storeFile(res, file.mediaType, file.bytes);
      attributes.file_size = file.bytes.length;
      attributes.mime_type = file.mediaType;
      const created = await backend.create(ctx, view.kind.kind, attributes);
      markReplayed(res, created.replayed);
      res.json((await shape(ctx, [created], sp))[0]);
    });
    describeMultipartBody('post', view.path, createFormSchema(view));

    const replacePath = `${view.path}/:id/replace-file`;
    documentedRoute(router, {
      method: 'post',
      path: replacePath,
      summary: `Replace the file of a ${view.kind.title}`,
      description: `A multipart/form-data body with the new file in the 'file' part (${ACCEPTED_FORMATS[kindName]}, checked by content). The creative gets a new file_url, file_name, file_size and mime_type; the old file stays at its URL.`,
      tag: 'creatives',
      pathParams: { id: `The ${view.kind.title} id.` },
      multipart: {
        type: 'object',
        required: ['file'],
        properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: `The new file, at most CREATIVE_UPLOAD_MAX_BYTES (default ${uploadMaxBytes()} bytes).` } },
      },
      response: { resource: kindName },
      errors: [413],
    }, async (req: Request, res: Response) => {
      const ctx = ctxOf(res);
      const id = parseId(req.params.id as string, view.kind.title);
      if (!isMultipart(req)) throw apiErrors.badRequest("Send the new file as multipart/form-data, in a part named 'file'.");
      const sp = parseShapeParams(req, fieldNames, view.expandable);
      const upload = await readUpload(req);
      const file = checkedFile(view, upload);
      const extra = upload.fields.find((f) => f.name !== 'file');
      if (extra) throw invalid(extra.name.slice(0, 64), `'${extra.name.slice(0, 64)}' is not taken here: replace-file takes only the 'file' part (change other fields with PUT ${view.path}/${id}).`, 'unknown_field');
      // 404 for another account's (or mode's) creative before anything is stored.
      await backend.get(ctx, view.kind.kind, id);
      const attributes: Record<string, Json> = {
        file_url: await storeFile(res, file.mediaType, file.bytes),
        file_name: file.fileName,
        file_size: file.bytes.length,
        mime_type: file.mediaType,
      };
      const size = view.kind.kind === 'image_creative' ? imageSize(file.bytes, file.mediaType) : undefined;
      if (size && size.width >= 1 && size.width <= 10000 && size.height >= 1 && size.height <= 10000) Object.assign(attributes, size);
      const updated = await backend.update(ctx, view.kind.kind, id, attributes);
      res.json((await shape(ctx, [updated], sp))[0]);
    });
    router.all(replacePath, methodNotSupported);
  }
};
