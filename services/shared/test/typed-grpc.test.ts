/**
 * The typed gRPC plumbing: handlers and calls take their types from the generated definitions, so a
 * misspelt method or a wrong request is a compile error (the `@ts-expect-error` lines below make
 * `tsc`, and so `npm run build` and this test, fail the day they compile). At run time: a real server
 * on loopback, called through the typed client, with the internal token checked on both sides.
 */
import { credentials, status } from '@grpc/grpc-js';
import { CreativeFilesClient, CreativeFilesService } from '../../../proto/gen/adserver/inventory/v1/creative_files';
import { ServiceError, fail } from '../errors';
import { closeClients, serviceClient } from '../grpc/client';
import { reports } from '../grpc/clients';
import { implement, startGrpcServer, type RunningServer } from '../grpc/server';

// Compile-time checks: each line must be an error for `tsc`.
export const compileTimeChecks = [
  // @ts-expect-error a method the Reports service does not have
  () => reports.getReprot,
  // @ts-expect-error a request of the wrong type
  () => reports.getEventDetails({ kind: 'click' }),
  // @ts-expect-error every method of the service must be handled
  () => implement('CreativeFiles', CreativeFilesService, {}),
  // @ts-expect-error a handler answering the wrong message
  () => implement('CreativeFiles', CreativeFilesService, { getCreativeFile: async () => ({ stored: 1 }) }),
];

describe('typed gRPC plumbing', () => {
  let server: RunningServer;
  const saved = { token: process.env.INTERNAL_TOKEN, addr: process.env.INVENTORY_ADDR };

  beforeAll(async () => {
    process.env.INTERNAL_TOKEN = 'typed-grpc-test-token';
    server = await startGrpcServer('typed-test', 0, [
      implement('inventory.CreativeFiles', CreativeFilesService, {
        async getCreativeFile(req) {
          if (req.name === 'missing') throw fail.notFound('creative file', req.name);
          return { name: req.name, contentType: 'image/svg+xml', body: Buffer.from('<svg/>'), etag: 'e1', size: 6 };
        },
        async putCreativeFile() {
          throw fail.invalid([{ field: 'file', type: 'invalid_value', message: 'not in this test' }]);
        },
      }),
    ], '127.0.0.1');
    process.env.INVENTORY_ADDR = `127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    closeClients();
    await server.shutdown(100);
    process.env.INTERNAL_TOKEN = saved.token;
    process.env.INVENTORY_ADDR = saved.addr;
  });

  it('answers a typed call with the typed message', async () => {
    const files = serviceClient('inventory', CreativeFilesClient);
    const file = await files.getCreativeFile({ name: 'a.svg', offset: 0, length: 0 }, { idempotent: true });
    expect(file).toMatchObject({ name: 'a.svg', contentType: 'image/svg+xml', etag: 'e1' });
    expect(file.body.toString()).toBe('<svg/>');
    expect(Object.keys(files)).toEqual(['getCreativeFile', 'putCreativeFile']);
  });

  it('passes a handler failure through as its status', async () => {
    const files = serviceClient('inventory', CreativeFilesClient);
    await expect(files.getCreativeFile({ name: 'missing', offset: 0, length: 0 })).rejects.toMatchObject({ code: status.NOT_FOUND, details: 'No creative file with id missing exists.' });
    expect(fail.notFound('creative file', 'x')).toBeInstanceOf(ServiceError);
  });

  it('refuses a caller without the internal token', async () => {
    // A bare generated client: no token in its metadata.
    const bare = new CreativeFilesClient(`127.0.0.1:${server.port}`, credentials.createInsecure());
    try {
      const err = await new Promise((resolve) => bare.getCreativeFile({ name: 'a.svg', offset: 0, length: 0 }, (e) => resolve(e)));
      expect(err).toMatchObject({ code: status.UNAUTHENTICATED });
    } finally {
      bare.close();
    }
  });
});
