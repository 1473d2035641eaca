/**
 * The decision case of `npm run bench`: an `/adserve` JSON decision measured directly on the serving
 * process (plain HTTP) and through the gateway (HTTPS proxy), each as a ratio of a bare Node HTTP
 * server answering a fixed JSON body in a process of its own, in the same run.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { freePort } from '../../gateway/test/support/platform';

export interface DecisionBenchDeps {
  /** HTTPS request through the gateway with a key: status and parsed body. */
  api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  httpsAgent: https.Agent;
  gatewayPort: number;
  servingPort: number;
  measure(name: string, total: number, concurrency: number, op: (i: number) => Promise<boolean>): Promise<{ name: string; ok: number; seconds: number; p50: number; p99: number; failed: number }>;
}

const BARE_SERVER = `require('http').createServer((q, s) => { const b = '{"status":"SUCCESS","placements":{"placement_1":{"banner_id":"1"}}}'; s.writeHead(200, {'Content-Type':'application/json','Content-Length':b.length}); s.end(b); }).listen(Number(process.argv[1]), '127.0.0.1');`;

export async function decisionBench(deps: DecisionBenchDeps, liveKey: string, account: number, total: number, concurrency: number) {
  // A live zone with one ad, placed through the API, then waited for on the serving process.
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
  const zone = (await deps.api(liveKey, 'POST', '/v2/zones/standard', { name: 'Bench zone', width: 300, height: 250 })).body;
  const item = (await deps.api(liveKey, 'POST', '/v2/ad-items/image', { name: 'Bench ad', width: 300, height: 250, creative_url: 'https://cdn.example/bench.png', location: 'https://advertiser.example/' })).body;
  const schedule = (await deps.api(liveKey, 'POST', '/v2/schedules', { start_date: yesterday })).body;
  const placed = await deps.api(liveKey, 'POST', '/v2/placements', { zone: { id: zone.id, type: 'standard_zone' }, advertisement: { id: item.id, type: 'image_ad_item' }, schedule: schedule.id });
  if (placed.status !== 200) throw new Error(`bench placement failed: ${JSON.stringify(placed.body)}`);
  const path = `/adserve/;ID=${account};setID=${zone.id};type=json`;

  const barePort = await freePort();
  const bare = spawn(process.execPath, ['-e', BARE_SERVER, String(barePort)], { stdio: 'ignore' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const plain = (port: number) =>
    new Promise<boolean>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(res.statusCode === 200 && text.includes('"SUCCESS"')));
      });
      req.on('error', reject);
    });
  const viaGateway = () =>
    new Promise<boolean>((resolve, reject) => {
      const req = https.get({ host: '127.0.0.1', servername: 'localhost', port: deps.gatewayPort, path, agent: deps.httpsAgent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(res.statusCode === 200 && text.includes('"SUCCESS"')));
      });
      req.on('error', reject);
    });
  try {
    for (let i = 0; i < 100; i++) {
      if (await plain(deps.servingPort).catch(() => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    for (let i = 0; i < 50; i++) {
      await plain(barePort).catch(() => false);
      await plain(deps.servingPort);
      await viaGateway();
    }
    return [
      await deps.measure('decision: bare Node HTTP', total, concurrency, () => plain(barePort)),
      await deps.measure('decision: serving direct', total, concurrency, () => plain(deps.servingPort)),
      await deps.measure('decision: HTTPS gateway', total, concurrency, () => viaGateway()),
    ];
  } finally {
    agent.destroy();
    bare.kill();
  }
}
