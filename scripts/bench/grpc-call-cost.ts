/**
 * What one grpc-js unary call costs on this machine, measured alone: a client and a server process on
 * loopback, a 4-byte request and a fixed ~150-byte answer, 50 calls in flight, 5,000 calls of warm-up
 * then 40,000 measured. Prints calls/s and CPU µs per call of each side (from /proc).
 *
 *   node dist/scripts/bench/grpc-call-cost.js
 */
import { fork } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { cpuMs } from './harness';
import { rawUnaryMethod } from './raw-grpc';

const GET = rawUnaryMethod('/bench.Cost/Get');
const ANSWER = Buffer.from(JSON.stringify({ object: 'custom_html_ad_item', id: 1, name: 'Bench ad item', height: 250, width: 300, custom_html: '<div>bench</div>' }));

function server(): void {
  const s = new grpc.Server();
  s.addService({ Get: GET } as grpc.ServiceDefinition, { Get: (_call: unknown, done: grpc.sendUnaryData<Buffer>) => done(null, ANSWER) });
  s.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.send!(port);
  });
}

async function client(): Promise<void> {
  const child = fork(__filename, ['server']);
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));
  const Client = grpc.makeGenericClientConstructor({ Get: GET } as grpc.ServiceDefinition, 'Cost');
  const c = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as { Get: Function; close(): void };
  const one = () => new Promise((resolve, reject) => c.Get(Buffer.alloc(4), new grpc.Metadata(), { deadline: Date.now() + 5000 }, (e: Error | null, r: Buffer) => (e ? reject(e) : resolve(r))));
  const run = async (n: number, inFlight: number) => {
    let left = n;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (left-- > 0) await one();
    }));
  };
  await run(5_000, 50);
  const calls = 40_000;
  const started = Date.now();
  const [c0, s0] = [cpuMs(process.pid)!, cpuMs(child.pid!)!];
  await run(calls, 50);
  const ms = Date.now() - started;
  const [c1, s1] = [cpuMs(process.pid)!, cpuMs(child.pid!)!];
  process.stdout.write(`${Math.round((calls / ms) * 1000)} calls/s; CPU per call: client ${Math.round(((c1 - c0) * 1000) / calls)} µs, server ${Math.round(((s1 - s0) * 1000) / calls)} µs\n`);
  c.close();
  child.kill();
}

if (process.argv[2] === 'server') server();
else client().then(() => process.exit(0), (err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
