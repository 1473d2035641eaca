import crypto from 'node:crypto';
import { CreativeFilesService, type CreativeFile, type GetCreativeFileRequest, type PutCreativeFileRequest } from '../../proto/gen/adserver/inventory/v1/creative_files';
import {
  AdItemTasksService,
  type GetNativeToImageTaskRequest,
  type NativeToImageTask,
  type ScheduleNativeToImageRequest,
} from '../../proto/gen/adserver/inventory/v1/tasks';
import { getKind, type Json, type ParameterError } from '../shared/catalog';
import { parseSize, sizeProblem } from '../shared/catalog/validate';
import { LeaseQueue } from '../shared/lease-queue';
import { envInt, serveBaseUrl } from '../shared/config';
import { EXTENSIONS, uploadMaxBytes } from '../shared/creative-files';
import type { Database } from '../shared/db';
import { formatTimestamp } from '../shared/db';
import { fail } from '../shared/errors';
import { checkSameRequest, idempotencyFromMetadata, isKeyTaken } from '../shared/idempotency';
import { accounts } from '../shared/grpc/clients';
import { implement, type ServiceBinding } from '../shared/grpc/server';
import { errorFields, log } from '../shared/log';
import { escapeXml, renderTemplate } from '../shared/native-template';
import type { ResourceStore } from '../shared/resource-store';
import { tenantFromMetadata, type Tenant } from '../shared/tenant';

export const NATIVE_TO_IMAGE_FEATURE = 'native-to-image';
const MAX_ATTEMPTS = 3;

interface TaskRow {
  id: number;
  account_id: number;
  mode: 'test' | 'live';
  native_ad_item: number;
  media_group: number;
  width: number;
  height: number;
  name: string | null;
  status: 'queued' | 'running' | 'success' | 'error';
  attempts: number;
  image_creative: number | null;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  lease_owner: string | null;
  lease_until: Date | null;
  file_name: string | null;
}

function toTask(r: TaskRow): NativeToImageTask {
  return {
    id: Number(r.id),
    status: r.status,
    nativeAdItem: Number(r.native_ad_item),
    mediaGroup: Number(r.media_group),
    width: r.width,
    height: r.height,
    name: r.name ?? '',
    imageCreative: Number(r.image_creative ?? 0),
    error: r.error ?? '',
    createdAt: formatTimestamp(r.created_at),
    startedAt: formatTimestamp(r.started_at),
    completedAt: formatTimestamp(r.completed_at),
  };
}

export { renderTemplate };

/** Visible text of rendered HTML, one entry per block, for laying out in the image. */
function textLines(html: string): string[] {
  const withBreaks = html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
    .replace(/<\s*(br|\/p|\/div|\/h\d|\/li|\/tr|\/a)\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;|&#39;/g, "'")
    .replace(/&amp;/g, '&');
  return withBreaks
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

/** An SVG image of `width`x`height` showing the rendered ad's text, wrapped to the width. */
export function renderSvg(html: string, width: number, height: number): string {
  const fontSize = Math.max(10, Math.min(24, Math.floor(height / 8)));
  const lineHeight = Math.round(fontSize * 1.3);
  const maxChars = Math.max(4, Math.floor((width - 16) / (fontSize * 0.55)));
  const lines: string[] = [];
  for (const block of textLines(html)) {
    let current = '';
    for (const word of block.split(' ')) {
      if (current && (current + ' ' + word).length > maxChars) {
        lines.push(current);
        current = '';
      }
      current = current ? `${current} ${word}` : word.slice(0, maxChars);
    }
    if (current) lines.push(current);
  }
  const fit = lines.slice(0, Math.max(1, Math.floor((height - 8) / lineHeight)));
  const text = fit
    .map((l, i) => `<text x="8" y="${8 + fontSize + i * lineHeight}" font-family="sans-serif" font-size="${fontSize}" fill="#1a1a1a">${escapeXml(l)}</text>`)
    .join('\n  ');
  return `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
  <rect width="${width}" height="${height}" fill="#ffffff" stroke="#cccccc"/>
  ${text}
</svg>
`;
}


async function accountFeatures(accountId: number): Promise<string[]> {
  const account = await accounts.getAccount({ id: accountId }, { idempotent: true });
  return account.features ?? [];
}

/** AdItemTasks: native-to-image scheduling and its tasks. */
export function adItemTasksBinding(db: Database, store: ResourceStore): ServiceBinding {
  const knex = db.knex;
  const scoped = (t: Tenant) => knex<TaskRow>('native_to_image_tasks').where({ account_id: t.accountId, mode: t.mode });
  const delayMs = () => envInt('NATIVE_TO_IMAGE_DELAY_MS', 0);

  return implement('inventory.AdItemTasks', AdItemTasksService, {
    async scheduleNativeToImage(req: ScheduleNativeToImageRequest, c) {
      const t = tenantFromMetadata(c.metadata);
      const idem = idempotencyFromMetadata(c.metadata);
      // The task a request with this Idempotency-Key scheduled, if any (the key is stored with the task).
      const scheduledWith = async (): Promise<NativeToImageTask | undefined> => {
        if (!idem) return undefined;
        const prior = await scoped(t).andWhere('idempotency_key', idem.key).first();
        if (!prior) return undefined;
        checkSameRequest(prior as unknown as { idempotency_fingerprint: string | null }, idem);
        return { ...toTask(prior), replayed: true };
      };
      const prior = await scheduledWith();
      if (prior) return prior;
      if (!(await accountFeatures(t.accountId)).includes(NATIVE_TO_IMAGE_FEATURE)) {
        throw fail.permissionDenied("The 'Native Ad to Image' feature (native-to-image) is not enabled on this account.", 'feature_not_enabled_error');
      }
      const errors: ParameterError[] = [];
      const size = parseSize(req.size);
      if (!req.size) errors.push({ field: 'size', type: 'missing_field', message: "'size' is required, in the form {width}x{height}, for example 300x250." });
      else if (!size) errors.push({ field: 'size', type: 'invalid_value', message: `'size' ${sizeProblem(req.size)}.` });
      if (req.name.length > 255) errors.push({ field: 'name', type: 'invalid_value', message: "'name' must be at most 255 characters long." });
      if (!req.mediaGroup) errors.push({ field: 'media_group', type: 'missing_field', message: "'media_group' is required: the id of the media group to store the image in." });
      else if (!(await store.exists(t, getKind('media_group'), req.mediaGroup))) {
        errors.push({ field: 'media_group', type: 'invalid_reference', message: `'media_group' refers to media group ${req.mediaGroup}, which does not exist.` });
      }
      if (errors.length) throw fail.invalid(errors);
      const item = await store.get(t, 'native_ad_item', req.nativeAdItem);
      if (!item.attributes?.template) throw fail.notModifiable(`Native ad item ${req.nativeAdItem} has no template to render.`);
      const [row] = await knex<TaskRow>('native_to_image_tasks')
        .insert({
          account_id: t.accountId,
          mode: t.mode,
          native_ad_item: req.nativeAdItem,
          media_group: req.mediaGroup,
          width: size!.width,
          height: size!.height,
          name: req.name || null,
          not_before: knex.raw(`now() + (? * interval '1 millisecond')`, [delayMs()]) as never,
          idempotency_key: idem?.key ?? null,
          idempotency_fingerprint: idem?.fingerprint ?? null,
        } as never)
        .returning('*')
        .catch(async (err) => {
          // A concurrent request with the same key scheduled its task first.
          if (isKeyTaken(err, 'native_to_image_tasks')) return [];
          throw err;
        });
      if (!row) return (await scheduledWith())!;
      return toTask(row);
    },

    async getNativeToImageTask(req: GetNativeToImageTaskRequest, c) {
      const t = tenantFromMetadata(c.metadata);
      const row = await scoped(t).andWhere({ id: req.id }).first();
      if (!row) throw fail.notFound('native-to-image task', req.id);
      return toTask(row);
    },
  });
}

/**
 * Runs conversions one at a time on every inventory replica. A replica claims a task with a lease
 * (`FOR UPDATE SKIP LOCKED`, so two replicas never claim one task) and renews it while it works; a task
 * whose lease ran out (its replica died) is claimed again by whichever replica polls next. A replica
 * that lost its lease does not record a result. The creative a task may already have made is found by
 * its file rather than made twice. `lease_owner` stays on a finished task: the replica that finished it.
 * A replica that stops hands back the task it could not finish in time, rather than leaving it to its lease.
 */
export async function startNativeToImageWorker(db: Database, store: ResourceStore): Promise<() => Promise<void>> {
  const knex = db.knex;
  const queue = new LeaseQueue<TaskRow>(knex, {
    table: 'native_to_image_tasks',
    leaseUntil: 'lease_until',
    leaseMs: envInt('NATIVE_TO_IMAGE_LEASE_MS', 30_000),
    readyWhen: 'not_before <= now()',
    onClaim: 'started_at = coalesce(started_at, now())',
  });
  const whileHeld = (id: number, fields: Record<string, unknown>) => queue.whileHeld(id, fields);
  let stopped = false;
  const pollMs = envInt('NATIVE_TO_IMAGE_POLL_MS', 250);

  const runOne = async (task: TaskRow) => {
    if (task.attempts > MAX_ATTEMPTS) {
      // Its replicas died holding it each time (a task that crashes its replica must not take them all down).
      await whileHeld(task.id, { status: 'error', error: `Conversion gave up after ${MAX_ATTEMPTS} attempts.`, completed_at: knex.fn.now(), lease_until: null });
      log.warn('native-to-image task abandoned', { task: Number(task.id), attempts: task.attempts });
      return;
    }
    const t: Tenant = { accountId: Number(task.account_id), mode: task.mode };
    const releaseLease = queue.keepLease(task.id);
    try {
      const creativeId = await convert(knex, store, t, task);
      if (await whileHeld(task.id, { status: 'success', image_creative: creativeId, error: null, completed_at: knex.fn.now(), lease_until: null })) {
        log.info('native-to-image task done', { task: Number(task.id), image_creative: creativeId });
      }
    } catch (err) {
      const code = (err as { code?: number }).code;
      // A missing ad item, template or media group will not come back: fail now. Anything else is retried.
      const permanent = code === 5 || code === 9 || task.attempts >= MAX_ATTEMPTS;
      const message = (err as Error).message || 'conversion failed';
      if (permanent) await whileHeld(task.id, { status: 'error', error: message.slice(0, 1000), completed_at: knex.fn.now(), lease_until: null });
      else await whileHeld(task.id, { status: 'queued', lease_owner: null, lease_until: null, not_before: knex.raw("now() + interval '2 seconds'") });
      log.warn('native-to-image task failed', { task: Number(task.id), permanent, ...errorFields(err) });
    } finally {
      releaseLease();
    }
  };

  let current: TaskRow | undefined;
  let wake: (() => void) | undefined;
  const loop = async () => {
    while (!stopped) {
      try {
        current = await queue.claim();
      } catch (err) {
        log.warn('native-to-image poll failed', errorFields(err));
      }
      if (current) {
        await runOne(current);
        current = undefined;
        continue;
      }
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, pollMs);
      });
    }
  };
  const running = loop();
  return async () => {
    stopped = true;
    wake?.();
    const finished = await Promise.race([running.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
    const held = current;
    if (!finished && held) {
      await queue.handBack(held.id).catch(() => undefined);
      log.info('native-to-image task handed back at stop', { task: Number(held.id) });
    }
  };
}

/** CreativeFiles: the bytes behind the `file_url` of creatives the platform made or was sent. */
export function creativeFilesBinding(db: Database): ServiceBinding {
  const knex = db.knex;
  return implement('inventory.CreativeFiles', CreativeFilesService, {
    async getCreativeFile(req: GetCreativeFileRequest): Promise<CreativeFile> {
      if (typeof req.name !== 'string' || !/^[A-Za-z0-9._-]{1,96}$/.test(req.name)) throw fail.notFound('creative file', String(req.name).slice(0, 96));
      // substring() of bytea stored EXTERNAL (migration 0112) reads only the slice's TOAST chunks.
      const from = Number(req.offset ?? 0) + 1;
      const slice = req.length ? knex.raw('substring(body from ? for ?) as body', [from, Number(req.length)]) : knex.raw('substring(body from ?) as body', [from]);
      const row = await knex('creative_files').where({ name: req.name }).first('name', 'content_type', 'etag', knex.raw('octet_length(body)::bigint as size'), slice);
      if (!row) throw fail.notFound('creative file', req.name);
      return { name: row.name, contentType: row.content_type, body: row.body, etag: row.etag, size: Number(row.size) };
    },

    async putCreativeFile(req: PutCreativeFileRequest, c): Promise<CreativeFile> {
      const t = tenantFromMetadata(c.metadata);
      const ext = EXTENSIONS[req.contentType];
      const body = Buffer.from(req.body ?? []);
      if (!ext) throw fail.invalid([{ field: 'content_type', type: 'invalid_value', message: `Files of type '${String(req.contentType).slice(0, 127)}' are not stored.` }]);
      if (!body.length) throw fail.invalid([{ field: 'file', type: 'invalid_value', message: 'The file is empty.' }]);
      if (body.length > uploadMaxBytes()) throw fail.invalid([{ field: 'file', type: 'invalid_value', message: `The file is larger than ${uploadMaxBytes()} bytes.` }]);
      const hash = (prefix: string) => crypto.createHash('sha256').update(prefix).update(body).digest('hex');
      // Named by tenant and content: a retry stores nothing new, and test and live files never share a row.
      const name = `upload-${hash(`${t.accountId}:${t.mode}:`).slice(0, 48)}.${ext}`;
      const etag = hash('').slice(0, 32);
      await knex('creative_files').insert({ name, account_id: t.accountId, mode: t.mode, content_type: req.contentType, body, etag }).onConflict('name').ignore();
      return { name, contentType: req.contentType, body: Buffer.alloc(0), etag, size: body.length };
    },
  });
}

/**
 * Renders the native ad item into an SVG file in inventory's database and records it as an image
 * creative. The file's name is random (its URL is public) and kept with the task, so a retry after a
 * crash stores the same file and finds the creative it may already have made.
 */
async function convert(knex: Database['knex'], store: ResourceStore, t: Tenant, task: TaskRow): Promise<number> {
  const item = await store.get(t, 'native_ad_item', Number(task.native_ad_item));
  const templateId = item.attributes?.template as number | null;
  if (!templateId) throw fail.notModifiable(`Native ad item ${task.native_ad_item} has no template to render.`);
  const template = await store.get(t, 'native_template', templateId);
  const html = renderTemplate(
    String(template.attributes?.raw_html ?? ''),
    (template.attributes?.variables ?? []) as { id: number; placeholder: string }[],
    (item.attributes?.variables ?? {}) as Record<string, Json>,
  );
  const svg = renderSvg(html, task.width, task.height);
  let fileName = task.file_name;
  if (!fileName) {
    fileName = `native-to-image-${task.id}-${crypto.randomBytes(12).toString('base64url')}.svg`;
    await knex('native_to_image_tasks').where({ id: task.id }).update({ file_name: fileName });
  }
  const body = Buffer.from(svg);
  await knex('creative_files')
    .insert({ name: fileName, account_id: t.accountId, mode: t.mode, content_type: 'image/svg+xml', body, etag: crypto.createHash('sha256').update(body).digest('hex').slice(0, 32) })
    .onConflict('name')
    .merge(['body', 'etag']);
  const fileUrl = `${serveBaseUrl()}/creatives/${fileName}`;
  const already = await store.list(t, { kinds: ['image_creative'], limit: 1, offset: 0, ids: [], newestFirst: false, archived: false, filters: [{ field: 'file_url', equals: fileUrl, anyOf: [] }] });
  if (already.items.length) return Number(already.items[0].id);
  const created = await store.create(t, 'image_creative', {
    group: Number(task.media_group),
    name: task.name ?? `${String(item.attributes?.name ?? 'Native ad item')} (${task.width}x${task.height})`.slice(0, 255),
    description: `Rendered from native ad item ${task.native_ad_item}`,
    file_url: fileUrl,
    file_name: fileName,
    mime_type: 'image/svg+xml',
    file_size: body.length,
    width: task.width,
    height: task.height,
  });
  return Number(created.id);
}
