import type { Json, ParameterError } from '../../shared/catalog';
import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';
import { given, loadAttributes, merged, throwIf } from './common';

/**
 * The VAST 4.2 model (catalog kinds/vast-4.ts): rules between fields that its description cannot
 * state. A file comes from one source; an offset is written as its type says; id lists name existing
 * resources; a wrapper names what it wraps; a placement has a zone or a channel; a frequency cap is
 * whole.
 */

const PERCENT = /^(100|[1-9]?\d)$/;

/** An offset of type `type` ('time' or 'percentage') written as such; either form when no type is given. */
function offsetProblem(type: Json | undefined, value: Json | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (type === 'percentage' && !PERCENT.test(value)) return 'must be a whole percentage from 0 to 100 when its type is percentage';
  if (type === 'time' && PERCENT.test(value)) return 'must be a time HH:MM:SS(.mmm) when its type is time';
  return undefined;
}

function atMostOne(a: string, b: string): KindHooks['prepare'] {
  return (values, ctx) => {
    const all = merged(values, ctx);
    if (given(all[a]) && given(all[b])) throwIf([{ field: values[b] !== undefined ? b : a, type: 'invalid_value', message: `Give at most one of '${a}' and '${b}'.` }]);
  };
}

/** Every id of a list field names an existing resource of `kind` in the caller's account and mode. */
async function checkIds(values: Attributes, field: string, kind: string, title: string, ctx: HookContext, errors: ParameterError[]): Promise<void> {
  const ids = values[field];
  if (!Array.isArray(ids)) return;
  for (const id of new Set(ids as number[])) {
    if (!(await loadAttributes(ctx, kind, id))) {
      errors.push({ field, type: 'invalid_reference', message: `'${field}' names ${title} ${id}, which does not exist.` });
      return;
    }
  }
}

function checkTrackingEvents(values: Attributes, errors: ParameterError[]): void {
  const events = values.tracking_events;
  if (!Array.isArray(events)) return;
  events.forEach((e, i) => {
    const ev = e as Record<string, Json>;
    const problem = offsetProblem(ev.offset_type, ev.offset_amount);
    if (problem) errors.push({ field: 'tracking_events', type: 'invalid_value', message: `'tracking_events' element ${i}: 'offset_amount' ${problem}.` });
  });
}

const withResources: KindHooks = {
  async prepare(values, ctx) {
    const errors: ParameterError[] = [];
    checkTrackingEvents(values, errors);
    await checkIds(values, 'resources', 'vast4_resource', 'VAST 4.2 resource', ctx, errors);
    throwIf(errors);
  },
};

export const vast4Hooks: Record<string, KindHooks> = {
  vast4_ad: {
    prepare(values, ctx) {
      const all = merged(values, ctx);
      if (all.type === 'wrapper' && !given(all.ad_url)) {
        throwIf([{ field: 'ad_url', type: ctx.op === 'create' ? 'missing_field' : 'invalid_value', message: "A wrapper needs the 'ad_url' of the VAST document it wraps." }]);
      }
    },
  },
  vast4_linear: {
    async prepare(values, ctx) {
      const errors: ParameterError[] = [];
      const all = merged(values, ctx);
      const problem = offsetProblem(all.skip_offset_type, all.skip_offset);
      if (problem) errors.push({ field: values.skip_offset !== undefined ? 'skip_offset' : 'skip_offset_type', type: 'invalid_value', message: `'skip_offset' ${problem}.` });
      checkTrackingEvents(values, errors);
      await checkIds(values, 'icons', 'vast4_icon', 'VAST 4.2 icon', ctx, errors);
      throwIf(errors);
    },
  },
  vast4_non_linear: withResources,
  vast4_companion: withResources,
  vast4_icon: withResources,
  vast4_media_file: { prepare: atMostOne('video_creative_id', 'file_uri') },
  vast4_mezzanine: { prepare: atMostOne('video_creative_id', 'file_uri') },
  vast4_closed_caption_file: { prepare: atMostOne('creative_id', 'file_uri') },
  vast4_interactive_creative_file: { prepare: atMostOne('creative_id', 'file_uri') },
  vast4_resource: { prepare: atMostOne('static_file_id', 'static_uri') },
  vast4_placement: {
    prepare(values, ctx) {
      const all = merged(values, ctx);
      const zone = all.zone ?? null;
      const channel = all.channel ?? null;
      if ((zone === null) === (channel === null)) {
        throwIf([
          { field: zone === null ? 'zone' : 'channel', type: zone === null ? 'missing_field' : 'invalid_value', message: "A VAST placement goes into a VAST zone or onto a VAST channel: give exactly one of 'zone' and 'channel'." },
        ]);
      }
      const cap = ['max_frequency', 'max_frequency_period', 'max_frequency_type'];
      const set = cap.filter((f) => given(all[f]));
      if (set.length && set.length < cap.length) {
        const missing = cap.find((f) => !given(all[f]))!;
        throwIf([{ field: missing, type: 'invalid_value', message: `A frequency cap needs all of ${cap.map((f) => `'${f}'`).join(', ')}.` }]);
      }
    },
  },
};
