import type { Request, Response, Router } from 'express';
import {
  type NativeToImageTask,
} from '../../../proto/gen/adserver/inventory/v1/tasks';
import { ctxOf } from '../../context';
import { ApiError, methodNotSupported } from '../../errors';
import { markReplayed } from '../../idempotency';
import { asCaller } from '../backend';
import { adItemTasks } from '../../../services/shared/grpc/clients';
import { actionBody, parseId } from '../params';
import type { FieldSpec } from '../../../services/shared/catalog';
import { documentedRoute } from '../route-docs';
import type { ActionModule } from './index';

const NATIVE_TO_IMAGE_FEATURE = 'native-to-image';
const TASKS_PATH = '/v2/scheduled-tasks/native-ad-to-image';


/** A task in the reference's scheduled-task shape, with its own status and, when done, its result. */
function scheduledTask(task: NativeToImageTask) {
  const done = task.status === 'success' || task.status === 'error';
  return {
    object: 'scheduled_task',
    url: `${TASKS_PATH}/${task.id}`,
    data: {
      status: task.status,
      started_at: task.startedAt || null,
      completed_at: task.completedAt || null,
      estimated_end_at: null,
      percent_complete: done ? 1 : 0,
      results: !done
        ? null
        : task.status === 'success'
          ? { status: 'success', extra: { image_creative: task.imageCreative, media_group: task.mediaGroup, size: `${task.width}x${task.height}`, native_ad_item: task.nativeAdItem } }
          : { status: 'error', extra: { message: task.error } },
    },
  };
}

/**
 * v2 ad item operations beyond CRUD: the custom_html alias of /ad-items/custom-html and the
 * native-to-image conversion with its task (conversion tags are the tags module's, for every kind).
 */
export const adItemActions: ActionModule = (router: Router) => {
  // The spec names /ad-items/custom_html as another path of the same collection.
  router.all(/^\/v2\/ad-items\/custom_html(\/.*)?$/, (req, _res, next) => {
    req.url = req.url.replace('/v2/ad-items/custom_html', '/v2/ad-items/custom-html');
    next();
  });

  const toImageBody = {
    media_group: { type: 'ref', ref: 'media_group', required: true },
    size: { type: 'string', required: true, format: 'size' },
    name: { type: 'string', maxLength: 255, nullable: true },
  } as const satisfies Record<string, FieldSpec>;
  documentedRoute(router, {
    method: 'post',
    path: '/v2/ad-items/native/:id/to-image',
    summary: 'Convert a native ad item into an image ad item (a scheduled task)',
    description: "Needs the account feature 'native-to-image'.",
    tag: 'ad-items',
    pathParams: { id: 'The native ad item id.' },
    body: toImageBody,
    response: { schema: { type: 'object', properties: { data: { type: 'object', properties: { status: { const: 'success' }, task: { type: 'integer' }, task_url: { type: 'string' } } } } } },
  }, async (req: Request, res: Response) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, 'native ad item');
    if (!ctx.features.includes(NATIVE_TO_IMAGE_FEATURE)) {
      throw new ApiError(403, 'feature_not_enabled_error', "The 'Native Ad to Image' feature (native-to-image) is not enabled on this account.");
    }
    const body = actionBody(req, 'a to-image request', toImageBody);
    const task = await asCaller(ctx, (metadata) => adItemTasks.scheduleNativeToImage({
      nativeAdItem: id,
      mediaGroup: body.media_group,
      size: body.size,
      name: body.name ?? '',
    }, { metadata }), { keyed: true });
    markReplayed(res, task.replayed);
    res.json({ data: { status: 'success', task: task.id, task_url: `${TASKS_PATH}/${task.id}` } });
  });
  router.all('/v2/ad-items/native/:id/to-image', methodNotSupported);

  documentedRoute(router, {
    method: 'get',
    path: `${TASKS_PATH}/:task`,
    summary: 'The status and result of a native-to-image task',
    tag: 'scheduled-tasks',
    pathParams: { task: 'The task id.' },
    response: {
      schema: {
        type: 'object',
        properties: {
          object: { const: 'scheduled_task' },
          url: { type: 'string' },
          data: { type: 'object', properties: { status: { type: 'string' }, started_at: { type: ['string', 'null'] }, completed_at: { type: ['string', 'null'] }, percent_complete: { type: 'number' }, results: { type: ['object', 'null'] } } },
        },
      },
    },
  }, async (req: Request, res: Response) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.task as string, 'native-to-image task');
    const task = await asCaller(ctx, (metadata) => adItemTasks.getNativeToImageTask({ id }, { idempotent: true, metadata }));
    res.json(scheduledTask(task));
  });
  router.all(`${TASKS_PATH}/:task`, methodNotSupported);
};
