/** Requests the gateway answers without a resource service: the cost of the edge itself. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describePauses } from '../runtime-pauses';
import { load, paced, type BenchCase, type BenchContext, type CaseResult } from '../harness';
import { benchItem } from './ad-items';

const FLOOD_RATE = 1000;
/** The tenant's own pace while it is measured: well below saturation, so the flood is what changes. */
const TENANT_RATE = 100;

/** Runs the bad-key flood in a child process for `ms`; resolves with the statuses it got. */
function flood(ctx: BenchContext, ms: number): Promise<{ sent: number; statuses: Record<string, number> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'bad-key-flood.js'), String(ctx.gatewayPort), String(FLOOD_RATE), String(ms), ctx.certFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bad-key flood exited with ${code}`))));
  });
}

export const edgeCases: BenchCase[] = [
  {
    name: '403 for a malformed key (no service call)',
    target: { minRatio: 0.6 },
    run: (ctx) => load(ctx, '403 for a malformed key (no service call)', { port: ctx.gatewayPort, path: '/v2/ad-items/custom-html/1', key: 'not-a-key', expectStatus: 403 }),
  },
  {
    name: 'unknown route, valid key (auth, rate limit, 404)',
    run: (ctx) => load(ctx, 'unknown route, valid key (auth, rate limit, 404)', { port: ctx.gatewayPort, path: '/v2/no-such-thing', expectStatus: 404 }),
  },
];

/**
 * Run last: the flood spends the bench address's budget of failed authentications, after which a key
 * the gateway has not seen yet (a later case's new account) is refused for a minute.
 */
export const floodCases: BenchCase[] = [
  {
    // Issue 25: a flood of bad keys (1,000 a second, malformed and well-formed unknown ones, from one
    // address) must not slow a real tenant: its p50 under the flood within 1.5x of its quiet p50.
    name: 'GET by id p50 quiet, then under 1,000 bad-key requests a second',
    run: async (ctx): Promise<CaseResult[]> => {
      const spec = { port: ctx.gatewayPort, path: `/v2/ad-items/custom-html/${await benchItem(ctx)}`, rate: TENANT_RATE };
      const quiet = await paced(ctx, 'GET by id p50, quiet', spec);
      // The flood starts before the tenant's unmeasured lead-in (3 s) and outlasts its window.
      const flooding = flood(ctx, (ctx.options.smoke ? 500 : 3000) + ctx.options.durationS * 1000 + 1000);
      const loaded = await paced(ctx, 'GET by id p50, under 1,000 bad-key req/s', spec);
      const { sent, statuses } = await flooding;
      const growth = loaded.p50 / Math.max(quiet.p50, 0.001);
      quiet.note = `${TENANT_RATE} req/s paced; ${describePauses(quiet.pauses ?? {})}`;
      loaded.note = `p50 ${growth.toFixed(2)}x quiet (target ≤ 1.5x); flood answered ${Object.entries(statuses).map(([s, n]) => `${n}× ${s}`).join(', ')} of ${sent}; ${describePauses(loaded.pauses ?? {})}`;
      loaded.met = growth <= 1.5;
      return [quiet, loaded];
    },
  },
];
