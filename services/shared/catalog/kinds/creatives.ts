import type { FieldSpec, KindGroup, ResourceKind } from '../types';
import { name, optionalName, optionalInt } from './fields';

/**
 * What ads are made of: media groups, creatives (image, video, audio, rich media files) and native
 * templates.
 */
export const mediaGroup: ResourceKind = {
  kind: 'media_group',
  service: 'inventory',
  title: 'media group',
  fields: {
    name,
    is_default: { type: 'boolean', default: false },
  },
  views: { v2: { object: 'media_group', path: '/v2/media-groups' } },
};

/**
 * Creative metadata. The file itself lives at `file_url`: given by the caller, or a file in inventory's
 * database served at `GET /creatives/{name}` (uploaded with multipart/form-data, see
 * gateway/api/actions/creative-uploads.ts, or made by the platform, such as a rendered native ad).
 */
function creative(type: 'image' | 'video' | 'audio' | 'rich_media', extra: Record<string, FieldSpec>): ResourceKind {
  const segment = type.replace('_', '-');
  const fields: Record<string, FieldSpec> = {
    // Deleting a media group deletes the creatives filed in it.
    group: { type: 'ref', ref: 'media_group', required: true, parent: true },
    name: optionalName,
    description: { type: 'string', nullable: true, maxLength: 1024, default: null },
    file_url: { type: 'string', format: 'url', required: true, maxLength: 2048 },
    file_name: { type: 'string', nullable: true, maxLength: 255, default: null },
    mime_type: { type: 'string', nullable: true, maxLength: 127, default: null },
    file_size: { type: 'integer', nullable: true, min: 0, default: null },
    ...extra,
  };
  return {
    kind: `${type}_creative`,
    service: 'inventory',
    title: `${type.replace('_', ' ')} creative`,
    timestamps: { created: 'uploaded_time' },
    fields,
    views: { v2: { object: `${type}_creative`, path: `/v2/creatives/${segment}` } },
  };
}
const dimension: FieldSpec = { type: 'integer', nullable: true, min: 1, max: 10000, default: null };
export const imageCreative = creative('image', { width: dimension, height: dimension });
export const videoCreative = creative('video', { width: dimension, height: dimension, duration: optionalInt, video_data_rate: optionalInt });
export const audioCreative = creative('audio', { duration: optionalInt, audio_data_rate: optionalInt });
export const richMediaCreative = creative('rich_media', { has_click_macro: { type: 'boolean', default: false } });

export const NATIVE_VARIABLE_TYPES = ['url', 'url_raw', 'text', 'file', 'number', 'image_url', 'dropdown', 'third_party_script'] as const;

export const nativeTemplate: ResourceKind = {
  kind: 'native_template',
  service: 'inventory',
  title: 'native template',
  fields: {
    name,
    raw_html: { type: 'string', required: true, minLength: 1, maxLength: 65536 },
    // Each variable gets an id (services/inventory/hooks/); native ad items key their values by it.
    variables: {
      type: 'array',
      required: true,
      maxLength: 100,
      items: {
        type: 'object',
        closed: true,
        properties: {
          id: { type: 'integer', min: 1 },
          name: { type: 'string', required: true, minLength: 1, maxLength: 255 },
          placeholder: { type: 'string', required: true, minLength: 1, maxLength: 255 },
          type: { type: 'string', required: true, enum: NATIVE_VARIABLE_TYPES },
          max_length: { type: 'integer', min: 1, max: 65536, nullable: true },
          dropdown_values: { type: 'string', maxLength: 4096, nullable: true },
          optional: { type: 'boolean' },
        },
      },
    },
  },
  views: { v2: { object: 'native_template', path: '/v2/templates/native' } },
};

export const kinds: ResourceKind[] = [mediaGroup, imageCreative, videoCreative, audioCreative, richMediaCreative, nativeTemplate];

export const groups: KindGroup[] = [
  { version: 'v2', path: '/v2/creatives', kinds: ['image_creative', 'video_creative', 'audio_creative', 'rich_media_creative'] },
];
