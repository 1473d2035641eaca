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
  type ArchiveResponse,
  type CascadeResponse,
  type DeleteResponse,
  type ListResponse,
  type Resource,
  type UnarchiveResponse,
} from '../../../proto/gen/adserver/resources/v1/resources';
import type { ServiceName } from '../catalog/types';
import { call, clientFor, type CallOptions } from './client';

/**
 * Typed calls to a service's Resources API. Every request goes through its message's `fromPartial`:
 * ts-proto's encoders expect every field present, and a missing string would otherwise travel as
 * the text "undefined".
 */
export function resourcesApi(service: ServiceName, metadata: Metadata) {
  const client = () => clientFor(service, ResourcesClient);
  const rpc = <Res>(method: string, request: unknown, opts: CallOptions) => call<unknown, Res>(service, client(), method, request, metadata, opts);
  return {
    create: (req: Partial<CreateRequest>, opts: CallOptions = {}) => rpc<Resource>('create', CreateRequest.fromPartial(req), opts),
    get: (req: Partial<GetRequest>, opts: CallOptions = {}) => rpc<Resource>('get', GetRequest.fromPartial(req), { idempotent: true, ...opts }),
    update: (req: Partial<UpdateRequest>, opts: CallOptions = {}) => rpc<Resource>('update', UpdateRequest.fromPartial(req), opts),
    delete: (req: Partial<DeleteRequest>, opts: CallOptions = {}) => rpc<DeleteResponse>('delete', DeleteRequest.fromPartial(req), opts),
    list: (req: Partial<ListRequest>, opts: CallOptions = {}) => rpc<ListResponse>('list', ListRequest.fromPartial({ limit: 10, ...req }), { idempotent: true, ...opts }),
    archive: (req: Partial<ArchiveRequest>, opts: CallOptions = {}) => rpc<ArchiveResponse>('archive', ArchiveRequest.fromPartial(req), opts),
    unarchive: (req: Partial<UnarchiveRequest>, opts: CallOptions = {}) => rpc<UnarchiveResponse>('unarchive', UnarchiveRequest.fromPartial(req), opts),
    cascade: (method: 'cascadeArchive' | 'cascadeUnarchive' | 'cascadeDelete', req: Partial<CascadeRequest>, opts: CallOptions = {}) =>
      rpc<CascadeResponse>(method, CascadeRequest.fromPartial(req), opts),
  };
}
