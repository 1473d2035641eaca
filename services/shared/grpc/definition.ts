import type * as grpc from '@grpc/grpc-js';

/**
 * Types read off a ts-proto service definition (`FooService`), so that handlers and client calls get
 * their request and answer types from the proto, and a method name that is not in it fails `tsc`.
 */

/** One method of a ts-proto definition: its path, streaming flags and (de)serialisers. */
export interface MethodShape {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  readonly requestSerialize: (value: never) => Buffer;
  readonly requestDeserialize: (value: Buffer) => unknown;
  readonly responseSerialize: (value: never) => Buffer;
  readonly responseDeserialize: (value: Buffer) => unknown;
}

export type DefinitionShape = { readonly [method: string]: MethodShape };

export type RequestOf<M> = M extends { requestDeserialize: (value: Buffer) => infer Q } ? Q : never;
export type ResponseOf<M> = M extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;

/** Method names of unary calls. */
export type UnaryName<D> = { [K in keyof D]: D[K] extends { requestStream: false; responseStream: false } ? K : never }[keyof D] & string;
/** Method names of server-streaming calls (subscriptions). */
export type StreamName<D> = { [K in keyof D]: D[K] extends { requestStream: false; responseStream: true } ? K : never }[keyof D] & string;

/** The ts-proto client class of a definition (`FooClient`), which carries it as `service`. */
export interface ClientClass<D extends DefinitionShape> {
  new (address: string, credentials: grpc.ChannelCredentials, options?: Partial<grpc.ClientOptions>): grpc.Client;
  readonly service: D;
  readonly serviceName: string;
}

/** The unary methods of a definition, for iteration at run time. */
export function unaryMethods<D extends DefinitionShape>(definition: D): [UnaryName<D>, MethodShape][] {
  return Object.entries(definition).filter(([, m]) => !m.requestStream && !m.responseStream) as [UnaryName<D>, MethodShape][];
}
