import type * as grpc from '@grpc/grpc-js';

/**
 * A unary gRPC method whose messages travel as raw bytes, for the bench's bare gRPC processes: they
 * measure grpc-js itself, with no message encoding of their own.
 */
export function rawUnaryMethod(path: string): grpc.MethodDefinition<Buffer, Buffer> {
  const same = (b: Buffer) => b;
  return { path, requestStream: false, responseStream: false, requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same };
}
