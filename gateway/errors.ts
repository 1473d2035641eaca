import { status as grpcStatus, type ServiceError as GrpcError } from '@grpc/grpc-js';
import type { ApiVersion, ParameterError } from '../services/shared/catalog';

/** An error answered to an API caller in the spec's JSON error shape. */
export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly type: string,
    message: string,
    readonly parameters?: ParameterError[],
    readonly headers?: Record<string, string>,
  ) {
    // An answer to the caller, not a fault: capturing a stack for every 4xx was a visible share of
    // the gateway's time when refusing bad keys (see BENCHMARKS.md).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }

  body(version: ApiVersion | undefined): Record<string, unknown> {
    const b: Record<string, unknown> = { object: 'error', type: this.type, message: this.message, http_status: this.httpStatus };
    if (version === 'v1') b.status = this.httpStatus;
    if (this.parameters?.length) b.parameters = this.parameters;
    return b;
  }
}

/** Status codes differ per version: v1 knows no 403, 405 or 409 (spec section 7). */
const BY_VERSION = {
  unauthenticated: { v1: 401, v2: 403 },
  forbidden: { v1: 401, v2: 403 },
  conflict: { v1: 400, v2: 409 },
  notModifiable: { v1: 400, v2: 405 },
} as const;

export function versionStatus(kind: keyof typeof BY_VERSION, version: ApiVersion | undefined): number {
  return BY_VERSION[kind][version ?? 'v2'];
}

export const apiErrors = {
  invalid: (parameters: ParameterError[], message?: string) =>
    new ApiError(400, 'invalid_request_parameters_error', message ?? (parameters.length === 1 ? parameters[0].message : `${parameters.length} parameters are invalid. See 'parameters'.`), parameters),
  badRequest: (message: string, type = 'invalid_request_error') => new ApiError(400, type, message),
  notFound: (message: string) => new ApiError(404, 'resource_not_found_error', message),
  unauthenticated: (version: ApiVersion | undefined, message: string) => new ApiError(versionStatus('unauthenticated', version), 'authentication_error', message),
  notSupported: (method: string, path: string) => new ApiError(501, 'method_not_supported_error', `${method} is not supported on ${path}.`),
  unavailable: (message = 'The service is temporarily unavailable; retry shortly.') => new ApiError(503, 'service_unavailable_error', message, undefined, { 'Retry-After': '1' }),
};

/** Maps a failed gRPC call to the API error of the spec's table for this version. */
export function fromGrpcError(err: unknown, version: ApiVersion | undefined, renameField?: (canonical: string) => string): ApiError {
  const e = err as GrpcError;
  if (typeof e?.code !== 'number') return new ApiError(500, 'api_error', 'Internal error; retry in a few minutes.');
  const reason = String(e.metadata?.get('x-error-reason')?.[0] ?? '');
  const rawParams = e.metadata?.get('x-error-parameters')?.[0];
  let parameters: ParameterError[] | undefined;
  let canonical: string[] = [];
  if (rawParams) {
    try {
      const given = JSON.parse(String(rawParams)) as ParameterError[];
      canonical = given.map((p) => p.field);
      parameters = given.map((p) => ({ ...p, field: renameField ? renameField(p.field) : p.field }));
    } catch {
      parameters = undefined;
    }
  }
  const message = e.details || 'Request failed.';
  switch (e.code) {
    case grpcStatus.INVALID_ARGUMENT:
      return new ApiError(400, reason || 'invalid_request_error', renameMessage(message, parameters, canonical), parameters);
    case grpcStatus.NOT_FOUND:
      return new ApiError(404, reason || 'resource_not_found_error', message);
    case grpcStatus.ALREADY_EXISTS:
      return new ApiError(versionStatus('conflict', version), reason || 'resource_conflict_error', message);
    case grpcStatus.FAILED_PRECONDITION:
      return new ApiError(versionStatus('notModifiable', version), reason || 'resource_not_modifiable_error', message);
    case grpcStatus.ABORTED:
      return new ApiError(402, reason || 'request_failed_error', message);
    case grpcStatus.PERMISSION_DENIED:
      return new ApiError(versionStatus('forbidden', version), reason || 'account_error', message);
    case grpcStatus.UNAUTHENTICATED:
      return new ApiError(versionStatus('unauthenticated', version), 'authentication_error', message);
    case grpcStatus.RESOURCE_EXHAUSTED:
      return new ApiError(429, 'rate_limit_error', message);
    case grpcStatus.UNIMPLEMENTED:
      return new ApiError(501, 'method_not_supported_error', message);
    case grpcStatus.UNAVAILABLE:
    case grpcStatus.DEADLINE_EXCEEDED:
    case grpcStatus.CANCELLED:
      return apiErrors.unavailable();
    default:
      return new ApiError(500, 'api_error', 'Internal error; retry in a few minutes.');
  }
}

/**
 * A single-parameter message names the field; show the caller's (version) name for it, where the
 * message starts with the service's name for that field (a message may start with another name:
 * "'from' and 'to' must …" refuses 'to').
 */
function renameMessage(message: string, parameters: ParameterError[] | undefined, canonical: string[]): string {
  if (parameters?.length !== 1) return message;
  const own = `'${canonical[0]}'`;
  const text = parameters[0].message;
  return text.startsWith(own) ? `'${parameters[0].field}'${text.slice(own.length)}` : text;
}

/**
 * The 501 for a method a path does not serve: mounted with `router.all(path, methodNotSupported)` after
 * the path's real handlers. The message names the path as documented (`{id}`, not `:id`).
 */
export function methodNotSupported(req: { method: string; route?: { path?: unknown }; path: string }): never {
  const path = typeof req.route?.path === 'string' ? req.route.path.replace(/:(\w+)/g, '{$1}') : req.path;
  throw apiErrors.notSupported(req.method, path);
}
