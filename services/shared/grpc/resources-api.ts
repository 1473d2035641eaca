import type { Metadata } from '@grpc/grpc-js';
import {
  ArchiveRequest,
  CascadeRequest,
  CreateRequest,
  DeleteRequest,
  GetRequest,
  ListRequest,
  ResourcesClient,
  UnarchiveRequest,
  UpdateRequest,
} from '../../../proto/gen/adserver/resources/v1/resources';
import type { ServiceName } from '../catalog/types';
import { serviceClient, type CallOptions, type ServiceClient } from './client';

/**
 * Calls to a service's Resources API with the caller's metadata. Every request goes through its
 * message's `fromPartial`: ts-proto's encoders expect every field present, and a missing string would
 * otherwise travel as the text "undefined".
 */
export function resourcesApi(service: ServiceName, metadata: Metadata) {
  const api = resourceClients[service];
  const with_ = (opts: CallOptions, defaults: CallOptions = {}): CallOptions => ({ ...defaults, ...opts, metadata });
  return {
    create: (req: Partial<CreateRequest>, opts: CallOptions = {}) => api.create(CreateRequest.fromPartial(req), with_(opts)),
    get: (req: Partial<GetRequest>, opts: CallOptions = {}) => api.get(GetRequest.fromPartial(req), with_(opts, { idempotent: true })),
    update: (req: Partial<UpdateRequest>, opts: CallOptions = {}) => api.update(UpdateRequest.fromPartial(req), with_(opts)),
    delete: (req: Partial<DeleteRequest>, opts: CallOptions = {}) => api.delete(DeleteRequest.fromPartial(req), with_(opts)),
    list: (req: Partial<ListRequest>, opts: CallOptions = {}) => api.list(ListRequest.fromPartial({ limit: 10, ...req }), with_(opts, { idempotent: true })),
    archive: (req: Partial<ArchiveRequest>, opts: CallOptions = {}) => api.archive(ArchiveRequest.fromPartial(req), with_(opts)),
    unarchive: (req: Partial<UnarchiveRequest>, opts: CallOptions = {}) => api.unarchive(UnarchiveRequest.fromPartial(req), with_(opts)),
    cascade: (method: 'cascadeArchive' | 'cascadeUnarchive' | 'cascadeDelete', req: Partial<CascadeRequest>, opts: CallOptions = {}) =>
      api[method](CascadeRequest.fromPartial(req), with_(opts)),
  };
}

/** Each service's Resources API (one generated definition served by every service). */
const resourceClients: Record<ServiceName, ServiceClient<typeof ResourcesClient.service>> = {
  accounts: serviceClient('accounts', ResourcesClient),
  inventory: serviceClient('inventory', ResourcesClient),
  selfserve: serviceClient('selfserve', ResourcesClient),
  reporting: serviceClient('reporting', ResourcesClient),
};
