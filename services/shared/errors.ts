import { Metadata, status } from '@grpc/grpc-js';
import type { ParameterError } from './catalog/types';

/**
 * An error a service answers on purpose. It travels as a gRPC status; `reason` and `parameters` ride in
 * trailing metadata so the gateway can render the API's error shape without parsing messages.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: status,
    message: string,
    readonly reason: string,
    readonly parameters?: ParameterError[],
  ) {
    super(message);
  }

  toMetadata(): Metadata {
    const md = new Metadata();
    md.set('x-error-reason', this.reason);
    // Metadata values must be printable ASCII (grpc-js throws otherwise, leaving the call unanswered);
    // \u escapes keep the JSON identical once parsed, whatever text the caller sent.
    if (this.parameters?.length) {
      md.set('x-error-parameters', JSON.stringify(this.parameters).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
    }
    return md;
  }
}

export const fail = {
  invalid(parameters: ParameterError[], message?: string): ServiceError {
    const msg =
      message ??
      (parameters.length === 1 ? parameters[0].message : `${parameters.length} fields are invalid: ${parameters.map((p) => p.field).join(', ')}. See 'parameters'.`);
    return new ServiceError(status.INVALID_ARGUMENT, msg, 'invalid_request_parameters_error', parameters);
  },
  badRequest(message: string, reason = 'invalid_request_error'): ServiceError {
    return new ServiceError(status.INVALID_ARGUMENT, message, reason);
  },
  notFound(title: string, id: number | string): ServiceError {
    return new ServiceError(status.NOT_FOUND, `No ${title} with id ${id} exists.`, 'resource_not_found_error');
  },
  conflict(message: string): ServiceError {
    return new ServiceError(status.ALREADY_EXISTS, message, 'resource_conflict_error');
  },
  notModifiable(message: string): ServiceError {
    return new ServiceError(status.FAILED_PRECONDITION, message, 'resource_not_modifiable_error');
  },
  /** Parameters were valid but the request could not be carried out (402). */
  requestFailed(message: string, reason = 'request_failed_error'): ServiceError {
    return new ServiceError(status.ABORTED, message, reason);
  },
  permissionDenied(message: string, reason = 'account_error'): ServiceError {
    return new ServiceError(status.PERMISSION_DENIED, message, reason);
  },
  unauthenticated(message: string): ServiceError {
    return new ServiceError(status.UNAUTHENTICATED, message, 'authentication_error');
  },
};
