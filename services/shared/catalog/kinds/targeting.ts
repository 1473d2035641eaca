import { targetingKinds } from '../../../targeting';
import type { FieldSpec, KindGroup, ResourceKind } from '../types';
import { priority } from './fields';

/**
 * Who sees an ad and where: the target resources of every targeting rule (geo, day-parting, platform,
 * postal-code, list and data-key targets, the data lists and data keys they read), each described in
 * its rule's module under services/targeting/, and channels with their zone assignments. Paths, field
 * names and enums follow the reference OpenAPI; rules the field language cannot say (time ranges,
 * target logic) are checked in inventory's targeting hooks.
 */

const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };

export const channel: ResourceKind = {
  kind: 'channel',
  service: 'inventory',
  title: 'channel',
  archivable: true,
  fields: {
    name,
    priority,
    use_share_of_voice: { type: 'boolean', default: false },
  },
  views: { v2: { object: 'channel', path: '/v2/channels', archive: true, archivedDelete: true } },
};

export const channelZoneAssignment: ResourceKind = {
  kind: 'channel_zone_assignment',
  service: 'inventory',
  title: 'channel zone assignment',
  fields: {
    channel: { type: 'ref', ref: 'channel', required: true, parent: true, createOnly: true },
    zone: { type: 'typed_ref', refKinds: ['standard_zone', 'email_zone'], required: true, onRefDelete: 'delete', createOnly: true },
  },
  views: { v2: { object: 'channel_zone_assignment', path: '/v2/channel-zone-assignments', operations: ['list', 'create', 'get', 'delete'] } },
};

// Each targeting rule's target resources are described in its module (services/targeting/).
export const kinds: ResourceKind[] = [...targetingKinds(), channel, channelZoneAssignment];

/** The reference also lists data lists under `/v2/data-targets` (list only; each keeps its `/v2/data-lists` self). */
export const groups: KindGroup[] = [{ version: 'v2', path: '/v2/data-targets', kinds: ['data_list'] }];
