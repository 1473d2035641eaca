/**
 * The common CRUD behaviour of every v1 inventory collection (and the flexible types extension),
 * through the HTTPS gateway against the real services.
 */
import type { Client } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';

const IMG = 'https://cdn.example.com/banner.png';

async function created(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
  return res.body;
}

describeCrud('flexible types', {
  version: 'v1',
  path: '/v1/flexible-types',
  object: 'flexible_type',
  create: (_api, n) => ({ name: `Flexible ${n}`, width: 300 + n, height: 250 }),
  update: { name: 'Renamed flexible type' },
  invalid: [
    { body: { name: '' }, field: 'name' },
    { body: { width: 0 }, field: 'width' },
    { body: { height: 'tall' }, field: 'height' },
  ],
  required: ['name', 'width', 'height'],
});

describeCrud('banner zones', {
  version: 'v1',
  path: '/v1/zones/banner',
  object: 'banner_zone',
  create: async (api, n) => ({
    name: `Banner zone ${n}`,
    width: 728,
    height: 90,
    publisher: (await created(api, '/v1/publishers', { name: `Zone owner ${n}` })).id,
    refresh_frequency: 30,
    responsive: 'auto',
  }),
  update: { name: 'Renamed zone', unique_delivery: true, refresh_limit: 5 },
  invalid: [
    { body: { name: '' }, field: 'name' },
    { body: { dimensions: 'square' }, field: 'dimensions' },
    { body: { responsive: 'stretchy' }, field: 'responsive' },
    { body: { width: -1 }, field: 'width' },
    { body: { unique_delivery: 'yes' }, field: 'unique_delivery' },
    { body: { publisher: 999999999 }, field: 'publisher' },
    { body: { publisher: 'one' }, field: 'publisher' },
  ],
  required: ['name'],
});

describeCrud('email zones', {
  version: 'v1',
  path: '/v1/zones/email',
  object: 'email_zone',
  create: (_api, n) => ({ name: `Email zone ${n}`, width: 600, height: 200 + n }),
  update: { name: 'Newsletter footer', width: 640 },
  invalid: [
    { body: { width: 'wide' }, field: 'width' },
    { body: { height: 0 }, field: 'height' },
    { body: { publisher: 999999999 }, field: 'publisher' },
  ],
  required: ['name', 'width', 'height'],
});

describeCrud('text zones', {
  version: 'v1',
  path: '/v1/zones/text',
  object: 'text_zone',
  create: (_api, n) => ({ name: `Text zone ${n}` }),
  update: { name: 'Sidebar links' },
  invalid: [
    { body: { name: 7 }, field: 'name' },
    { body: { publisher: 999999999 }, field: 'publisher' },
  ],
  required: [],
});

describeCrud('banner campaigns', {
  version: 'v1',
  path: '/v1/campaigns/banner',
  object: 'banner_campaign',
  create: async (api, n) => ({
    name: `Banner campaign ${n}`,
    width: 300,
    height: 250,
    advertiser: (await created(api, '/v1/advertisers', { name: `Campaign owner ${n}` })).id,
    roadblock_tags: 'tag1,tag2',
  }),
  update: { name: 'Spring sale', roadblock_tags: null },
  invalid: [
    { body: { name: null }, field: 'name' },
    { body: { advertiser: 999999999 }, field: 'advertiser' },
    { body: { roadblock_tags: 5 }, field: 'roadblock_tags' },
    { body: { width: 1.5 }, field: 'width' },
  ],
  required: ['name'],
});

describeCrud('text campaigns', {
  version: 'v1',
  path: '/v1/campaigns/text',
  object: 'text_campaign',
  create: (_api, n) => ({ name: `Text campaign ${n}` }),
  update: { name: 'Text links' },
  invalid: [
    { body: { name: '' }, field: 'name' },
    { body: { advertiser: 999999999 }, field: 'advertiser' },
  ],
  required: ['name'],
});

describeCrud('image banners', {
  version: 'v1',
  path: '/v1/banners/image',
  object: 'image_banner',
  create: (_api, n) => ({
    name: `Image banner ${n}`,
    width: 300,
    height: 250,
    creative_url: IMG,
    location: 'https://shop.example.com/',
    html_target: '_blank',
    html_alt_text: 'Shop now',
  }),
  update: { name: 'Renamed banner', tracking_pixel: 'https://pixel.example.com/p.gif' },
  invalid: [
    { body: { width: 'x' }, field: 'width' },
    { body: { location: 'not a url' }, field: 'location' },
    { body: { creative_url: 'ftp://cdn.example.com/a.png' }, field: 'creative_url' },
    { body: { creative: 999999999 }, field: 'creative' },
  ],
  required: ['name', 'width', 'height'],
});

describeCrud('flash banners', {
  version: 'v1',
  path: '/v1/banners/flash',
  object: 'flash_banner',
  create: (_api, n) => ({ name: `Flash banner ${n}`, width: 468, height: 60, creative_url: 'https://cdn.example.com/ad.swf', version: 9 }),
  update: { quality: 'low', mode: 'transparent', version: 11 },
  invalid: [
    { body: { version: 4 }, field: 'version' },
    { body: { version: 101 }, field: 'version' },
    { body: { mode: 'fullscreen' }, field: 'mode' },
    { body: { quality: 'best' }, field: 'quality' },
  ],
  required: ['name', 'width', 'height'],
});

describeCrud('campaign assignments', {
  version: 'v1',
  path: '/v1/campaign-assignments',
  object: 'campaign_assignment',
  create: async (api, n) => {
    const campaign = await created(api, '/v1/campaigns/banner', { name: `Assigned campaign ${n}`, width: 300, height: 250 });
    const banner = await created(api, '/v1/banners/image', { name: `Assigned banner ${n}`, width: 300, height: 250, creative_url: IMG });
    return { campaign: { id: campaign.id, type: 'banner_campaign' }, advertisement: { id: banner.id, type: 'image_banner' }, weight: n + 1 };
  },
  update: { weight: 7, active: false },
  invalid: [
    { body: { weight: 0 }, field: 'weight' },
    { body: { active: 'no' }, field: 'active' },
  ],
  required: ['campaign', 'advertisement'],
});
