/**
 * Before and after side by side, from two `npm run bench -- --json FILE` results:
 *
 *   node dist/scripts/bench/compare.js BEFORE.json AFTER.json
 *
 * Prints a markdown table: req/s, share of each run's own baseline, p50/p99, and CPU µs per request of
 * the processes both runs measured (the figure least moved by whatever else the machine runs).
 */
import fs from 'node:fs';
import type { CaseResult } from './harness';

type Run = { results: CaseResult[]; rss: Record<string, number> };

/** CPU µs per request summed over the processes both runs measured (later runs measure more of them). */
const cpu = (r: CaseResult | undefined, other: CaseResult | undefined) =>
  r?.cpuUs && other?.cpuUs ? Object.entries(r.cpuUs).reduce((n, [k, v]) => (k in other.cpuUs! ? n + v : n), 0) : NaN;
const share = (r?: CaseResult) => (r?.ratio === undefined ? '' : `${(r.ratio * 100).toFixed(1)} %`);
const num = (v: number | undefined, digits = 0) => (v === undefined || Number.isNaN(v) ? '' : v.toFixed(digits));

export function compare(before: Run, after: Run): string {
  const names = [...new Set([...before.results.map((r) => r.name), ...after.results.map((r) => r.name)])];
  const lines = [
    '| case | req/s before | req/s after | share before | share after | p50 / p99 ms before | p50 / p99 ms after | CPU µs/req before | CPU µs/req after | CPU change |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const name of names) {
    const b = before.results.find((r) => r.name === name);
    const a = after.results.find((r) => r.name === name);
    const [cb, ca] = [cpu(b, a), cpu(a, b)];
    const change = cb && ca ? `${(((ca - cb) / cb) * 100).toFixed(0)} %` : '';
    lines.push(
      `| ${name} | ${num(b?.reqPerSec)} | ${num(a?.reqPerSec)} | ${share(b)} | ${share(a)} | ${b ? `${b.p50} / ${b.p99}` : ''} | ${a ? `${a.p50} / ${a.p99}` : ''} | ${num(cb)} | ${num(ca)} | ${change} |`,
    );
  }
  const rss = (run: Run) => Object.entries(run.rss).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
  lines.push('', `RSS MB after the run, before: ${rss(before)}.`, `RSS MB after the run, after: ${rss(after)}.`);
  return lines.join('\n');
}

if (require.main === module) {
  const [b, a] = process.argv.slice(2).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Run);
  process.stdout.write(`${compare(b, a)}\n`);
}
