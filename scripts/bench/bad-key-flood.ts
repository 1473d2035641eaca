/**
 * A flood of requests with keys the platform does not know, from a process of its own so that its
 * sending costs nothing to the load generator whose latency is measured meanwhile. Half carry a
 * malformed key, half a well-formed key never issued (a new one each time, so no cache of misses helps).
 * Prints the statuses it got as JSON when done.
 *
 *   node dist/scripts/bench/bad-key-flood.js PORT RATE DURATION_MS CA_FILE
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';

const [port, rate, durationMs, caFile] = process.argv.slice(2);
const agent = new https.Agent({ keepAlive: true, maxSockets: 50, ca: fs.readFileSync(caFile) });
const statuses: Record<string, number> = {};
const interval = 1000 / Number(rate);
let sent = 0;
let inFlight = 0;

function send(): void {
  const key = sent % 2 ? 'not-a-key' : `live_${crypto.randomBytes(24).toString('base64url')}`;
  inFlight++;
  const req = https.request(
    { host: '127.0.0.1', servername: 'localhost', port: Number(port), path: '/v2/ad-items/custom-html/1', agent, headers: { authorization: `Basic ${key}` }, timeout: 30_000 },
    (res) => {
      res.resume();
      res.on('end', () => {
        statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        inFlight--;
      });
    },
  );
  req.on('error', () => {
    statuses.error = (statuses.error ?? 0) + 1;
    inFlight--;
  });
  req.end();
  sent++;
}

const start = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  while (sent < Math.floor((Math.min(now, start + Number(durationMs)) - start) / interval)) send();
  if (now >= start + Number(durationMs)) {
    clearInterval(timer);
    const done = setInterval(() => {
      if (inFlight > 0) return;
      clearInterval(done);
      agent.destroy();
      process.stdout.write(JSON.stringify({ sent, statuses }));
    }, 10);
  }
}, 1);
