import type { ParameterError } from '../../shared/catalog';
import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';
import { assignIds, given, invalid, merged, throwIf } from './common';
import { matchFlexibleType } from './zones-campaigns';

/** Ad items of every type: what all share, then the rules of each type (native ones in native.ts). */

/** What every ad item created through this API gets: not self-serve (self-serve items come from orders), and ids for its tracking pixels. */
export async function adItemBasics(values: Attributes, ctx: HookContext): Promise<void> {
  if (ctx.op === 'create') values.is_self_serve = 'false';
  const errors: ParameterError[] = [];
  await assignIds(values, 'tracking_pixels', ctx, errors);
  throwIf(errors);
}

/** An ad item shows a stored creative or an image at a URL: after every write it has one of them. */
function requireCreative(values: Attributes, ctx: HookContext, onlyOneOnCreate: boolean): void {
  if (ctx.op === 'create' && onlyOneOnCreate && given(values.creative) && given(values.creative_url)) {
    invalid('creative_url', `Give only one of 'creative' and 'creative_url'.`);
  }
  const all = merged(values, ctx);
  if (!given(all.creative) && !given(all.creative_url)) {
    const field = ctx.op === 'update' && values.creative === null ? 'creative' : 'creative_url';
    invalid(field, `One of 'creative' and 'creative_url' is required${ctx.op === 'update' ? ' to remain set' : ''}.`);
  }
}

const imageAdItem: KindHooks = {
  async prepare(values, ctx) {
    await adItemBasics(values, ctx);
    requireCreative(values, ctx, false);
    await matchFlexibleType(values, ctx, true);
  },
};

const flashAdItem: KindHooks = {
  prepare(values, ctx) {
    requireCreative(values, ctx, true);
  },
};

/** Custom HTML and rich media ad items. */
const htmlAdItem: KindHooks = { prepare: adItemBasics };

export const adItemHooks: Record<string, KindHooks> = {
  image_ad_item: imageAdItem,
  flash_ad_item: flashAdItem,
  custom_html_ad_item: htmlAdItem,
  rich_media_ad_item: htmlAdItem,
};
