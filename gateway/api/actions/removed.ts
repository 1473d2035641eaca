import { ApiError } from '../../errors';
import type { ActionModule } from './index';

/**
 * v2 paths that v1 clients might carry over but that v2 renamed or dropped (spec section 9): they answer
 * 410 Gone with where to go instead, rather than a bare 404.
 */
const REMOVED_IN_V2: { path: string; instead: string }[] = [
  { path: '/v2/banners', instead: 'Banners are ad items in v2: use /v2/ad-items (for example /v2/ad-items/image).' },
  { path: '/v2/zones/banner', instead: 'Banner zones are standard zones in v2: use /v2/zones/standard.' },
  { path: '/v2/campaigns/banner', instead: 'Banner campaigns are standard campaigns in v2: use /v2/campaigns/standard.' },
  { path: '/v2/vast-banners', instead: 'VAST banners are VAST ad items in v2: use /v2/vast-ad-items.' },
  { path: '/v2/zones/text', instead: 'Text zones exist only in v1: use /v1/zones/text.' },
  { path: '/v2/campaigns/text', instead: 'Text campaigns exist only in v1: use /v1/campaigns/text.' },
];

export const removedEndpoints: ActionModule = (router) => {
  for (const { path, instead } of REMOVED_IN_V2) {
    const gone = () => {
      throw new ApiError(410, 'endpoint_removed_error', `${path} was removed in v2. ${instead}`);
    };
    router.all(path, gone);
    router.all(`${path}/*rest`, gone);
  }
};
