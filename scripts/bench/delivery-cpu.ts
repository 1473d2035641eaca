/**
 * What delivery goals cost a decision, in one process of this build:
 *
 *   node --expose-gc dist/scripts/bench/delivery-cpu.js [--rounds 40] [--per-round 1000]
 *
 * One serve handler with its delivery ledger (counters in process, as on the embedded default)
 * answers two zones alike in everything but goals: zone 10's two placements have none, zone 11's two
 * sit on a schedule with a lifetime quota, a day cap and smooth delivery (limits and window set so
 * that no request is refused: the same work is done to the same answer). Rounds alternate between the
 * zones; the figure is the median ratio of the paired rounds' CPU (issue target: ≥ 0.9× the speed).
 */
import { DecisionEntity, type DeepPartial } from '../../proto/gen/adserver/inventory/v1/decision_data';
import { cpuOf, handlerOf } from './decision-cpu';
import path from 'node:path';

const ACCOUNT = 1;
const e = (kind: string, id: number, fields: DeepPartial<DecisionEntity>) => DecisionEntity.fromPartial({ kind, id, account: ACCOUNT, ...fields });
const at = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

function entities(): DecisionEntity[] {
  const ad = (id: number) => e('image_ad_item', id, { adItem: { width: 300, height: 250, location: 'https://advertiser.example/', creativeUrl: 'https://cdn.example/a.png' } });
  const placement = (id: number, zone: number, item: number, schedule: number, weight: number) =>
    e('placement', id, { placement: { zoneKind: 'standard_zone', zone, advertisementKind: 'image_ad_item', advertisement: item, schedule, weight, active: true, priority: 'standard', serveMethod: 'weight', shareOfVoice: -1 } });
  const now = Date.now();
  return [
    e('standard_zone', 10, { zone: { width: 300, height: 250, dimensions: 'fixed', publisher: 1 } }),
    e('standard_zone', 11, { zone: { width: 300, height: 250, dimensions: 'fixed', publisher: 1 } }),
    e('schedule', 30, { schedule: { startDate: '2020-01-01 00:00:00' } }),
    // Two billion views over the hour that is left: the pace admits every request.
    e('schedule', 31, {
      schedule: {
        startDate: at(now - 86_400_000), endDate: at(now + 3_600_000), quotaLifetime: 2_000_000_000, quotaType: 'views',
        dayCapLimit: 2_000_000_000, dayCapType: 'views', deliveryMethod: 'smooth', underDeliveryBehaviour: 'endOnDate', timezone: 'America/New_York',
      },
    }),
    ad(100),
    ad(101),
    placement(200, 10, 100, 30, 1),
    placement(201, 10, 101, 30, 3),
    placement(210, 11, 100, 31, 1),
    placement(211, 11, 101, 31, 3),
  ];
}

async function main(): Promise<void> {
  const rounds = Number(flag('rounds', '40'));
  const perRound = Number(flag('per-round', '1000'));
  const handler = handlerOf(path.join(__dirname, '..', '..'), entities(), true);
  const zones = { without: `/adserve/;ID=${ACCOUNT};setID=10;type=json`, with: `/adserve/;ID=${ACCOUNT};setID=11;type=json` };
  for (const url of Object.values(zones)) await cpuOf(handler, url, perRound);
  const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const total = { without: 0, with: 0 };
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? (['with', 'without'] as const) : (['without', 'with'] as const);
    const round = { without: 0, with: 0 };
    for (const z of order) round[z] = await cpuOf(handler, zones[z], perRound);
    total.without += round.without;
    total.with += round.with;
    // Speed of the decision with goals as a share of the one without: CPU without over CPU with.
    ratios.push(round.without / round.with);
  }
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
  const us = (t: number) => (t / (rounds * perRound)).toFixed(1);
  collect();
  const heapGrowth = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  process.stdout.write(`heap after ${2 * rounds * perRound} decisions (collected): ${heapGrowth >= 0 ? '+' : ''}${heapGrowth.toFixed(1)} MB\n`);
  process.stdout.write(`decision without goals ${us(total.without)} µs, with quota + day cap + pacing ${us(total.with)} µs of CPU; speed with goals ${median.toFixed(3)}x of without (median of ${rounds} paired rounds)\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
