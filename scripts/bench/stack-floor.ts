/**
 * The fixed stack's floor: what a GET by id costs when it does only the work any design on this stack
 * must do, with none of the platform's code. Two processes, started by the stack-floor bench case:
 *
 * - `service`: a grpc-js server with one unary method, which looks a row up by id in Postgres (pg,
 *   a pool of 10, a named prepared statement) and answers its JSON document;
 * - `edge`: a Node HTTPS server (the platform's certificate) that answers each request by one call of
 *   that method, over one grpc-js channel. `/grpc/{id}` does only that; `/redis/{id}` first runs one
 *   Lua script in Redis (ioredis, as the rate limiter does; only with REDIS_URL); `/express/{id}` does
 *   the same as `/redis/{id}` behind an express route; `/adserve/...` is proxied with
 *   http-proxy-middleware (as the gateway proxies decisions) to a plain HTTP server in the service
 *   process that answers a fixed decision.
 *
 * No authentication, tracing, metrics, validation or field mapping: the platform's cost above this
 * floor is its own code; the floor itself is the price of the stack.
 *
 * Each prints its port on stdout.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import Redis from 'ioredis';
import pg from 'pg';
import { rawUnaryMethod } from './raw-grpc';

const GET = rawUnaryMethod('/bench.Floor/Get');

function service(): void {
  const pool = new pg.Pool({ connectionString: process.env.FLOOR_DATABASE_URL, max: 10, options: `-c search_path=${process.env.FLOOR_SCHEMA}` });
  const server = new grpc.Server();
  server.addService({ Get: GET } as grpc.ServiceDefinition, {
    Get: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      pool
        .query({ name: 'floor-get', text: 'select doc from bench_floor_items where id = $1', values: [call.request.readUInt32BE(0)] })
        .then((r) => done(null, Buffer.from(JSON.stringify(r.rows[0]?.doc ?? null))), (err: Error) => done({ code: grpc.status.INTERNAL, details: err.message }));
    },
  });
  // A decision answered from memory, for the proxy floor.
  const decision = Buffer.from(JSON.stringify({ status: 'SUCCESS', placements: { placement_1: { banner_id: 1, width: 300, height: 250, image_url: 'https://cdn.example/bench.png' } } }));
  const plain = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': decision.length });
    res.end(decision);
  });
  plain.keepAliveTimeout = 5_000;
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    plain.listen(0, '127.0.0.1', () => process.stdout.write(`${port} ${(plain.address() as { port: number }).port}\n`));
  });
}

function edge(): void {
  const Client = grpc.makeGenericClientConstructor({ Get: GET } as grpc.ServiceDefinition, 'Floor');
  const client = new Client(process.env.FLOOR_SERVICE_ADDR!, grpc.credentials.createInsecure());
  // Without REDIS_URL (the embedded default) the platform keeps its limits in process: so does the floor.
  const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
  // A script call like the rate limiter's: one key, a counter that expires.
  redis?.defineCommand('floorHit', { numberOfKeys: 1, lua: "local n = redis.call('INCR', KEYS[1]); if n == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end; return n" });
  const get = (id: number) =>
    new Promise<Buffer>((resolve, reject) => {
      const req = Buffer.alloc(4);
      req.writeUInt32BE(id);
      (client as unknown as { Get: Function }).Get(req, new grpc.Metadata(), { deadline: Date.now() + 5000 }, (err: Error | null, res: Buffer) => (err ? reject(err) : resolve(res)));
    });
  const answer = (res: { writeHead: Function; end: Function }, body: Buffer) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  };
  const fail = (res: { writeHead: Function; end: Function }) => (err: Error) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(err.message);
  };
  const hit = () => (redis ? (redis as unknown as { floorHit(key: string): Promise<number> }).floorHit('bench-floor:hits') : Promise.resolve(0));
  const app = express();
  app.get('/express/:id', (req, res) => {
    hit()
      .then(() => get(Number(req.params.id)))
      .then((body) => answer(res, body), fail(res));
  });
  // As the gateway's serving proxy: a keep-alive agent, X-Forwarded-* headers.
  const proxy = createProxyMiddleware({ target: `http://${process.env.FLOOR_DECISION_ADDR}`, agent: new http.Agent({ keepAlive: true, maxSockets: 256 }), xfwd: true }) as unknown as (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    next: (err?: unknown) => void,
  ) => void;
  const server = https.createServer({ cert: fs.readFileSync(process.env.TLS_CERT_FILE!), key: fs.readFileSync(process.env.TLS_KEY_FILE!) }, (req, res) => {
    const [, step, id] = (req.url ?? '').split('/');
    if (step === 'adserve') proxy(req, res, (err) => fail(res)(err as Error));
    else if (step === 'grpc') get(Number(id)).then((body) => answer(res, body), fail(res));
    else if (step === 'redis') hit().then(() => get(Number(id))).then((body) => answer(res, body), fail(res));
    else app(req, res);
  });
  server.keepAliveTimeout = 5_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));
}

if (process.argv[2] === 'service') service();
else if (process.argv[2] === 'edge') edge();
else throw new Error('usage: stack-floor.js service|edge');
process.on('SIGTERM', () => process.exit(0));
