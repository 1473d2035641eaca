/** The bench's table, on the terminal and as a section of BENCHMARKS.md. */
import fs from 'node:fs';
import type { CaseResult, RunOptions } from './harness';

const pct = (r: number | undefined) => (r === undefined ? '' : `${(r * 100).toFixed(1)} %`);

function targetText(r: CaseResult): string {
  const t: string[] = [];
  if (r.target?.minRatio !== undefined) t.push(`≥ ${(r.target.minRatio * 100).toFixed(0)} %`);
  if (r.target?.maxP99Ms !== undefined) t.push(`p99 ≤ ${r.target.maxP99Ms} ms`);
  return t.join(', ');
}

/** CPU µs per request of the platform's processes, and the largest single share. */
export function cpuText(r: CaseResult): string {
  const parts = Object.entries(r.cpuUs ?? {}).filter(([, v]) => v >= 1);
  if (!parts.length) return '';
  const total = parts.reduce((n, [, v]) => n + v, 0);
  const sys = (k: string) => (r.sysShare?.[k] !== undefined && v(k) >= 20 ? ` (${Math.round(r.sysShare[k] * 100)} % kernel)` : '');
  const v = (k: string) => r.cpuUs?.[k] ?? 0;
  return `${total.toFixed(0)} (${parts.map(([k, n]) => `${k} ${n.toFixed(0)}${sys(k)}`).join(', ')})`;
}

function verdict(r: CaseResult): string {
  return r.met === undefined ? '' : r.met ? 'met' : 'MISSED';
}

export function renderTable(results: CaseResult[], rss: Record<string, number>): string {
  const head = `${'case'.padEnd(52)}${'req/s'.padStart(8)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'share'.padStart(9)}${'failed'.padStart(8)}  target · notes · CPU µs/req`;
  const lines = results.map(
    (r) =>
      `${r.name.padEnd(52)}${r.reqPerSec.toFixed(0).padStart(8)}${String(r.p50).padStart(9)}${String(r.p99).padStart(9)}${pct(r.ratio).padStart(9)}${String(r.failed).padStart(8)}  ${[targetText(r), verdict(r), r.note, cpuText(r)].filter(Boolean).join(' · ')}`,
  );
  const mem = Object.entries(rss).map(([k, v]) => `${k} ${v.toFixed(0)} MB`);
  const over = Object.values(rss).some((v) => v > 200);
  return [head, ...lines, '', `RSS after the run (target < 200 MB each${over ? ': MISSED' : ': met'}): ${mem.join(', ')}`].join('\n');
}

export function renderMarkdown(results: CaseResult[], rss: Record<string, number>, about: { command: string; opts: RunOptions; machine: string }): string {
  const rows = results.map(
    (r) => `| ${r.name} | ${r.reqPerSec.toFixed(0)} | ${r.p50} | ${r.p99} | ${pct(r.ratio)} | ${r.failed} | ${[targetText(r), verdict(r)].filter(Boolean).join(' ')} | ${r.note ?? ''} | ${cpuText(r)} |`,
  );
  return [
    `Command: \`${about.command}\` (${about.opts.connections} connections, ${about.opts.durationS} s per case) on ${new Date().toISOString().slice(0, 16)}Z.`,
    `Machine: ${about.machine}.`,
    '',
    '| case | req/s | p50 ms | p99 ms | share of baseline | failed | target | notes | CPU µs per request (our processes, Postgres, Redis, the load generator) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `RSS after the run: ${Object.entries(rss)
      .map(([k, v]) => `${k} ${v.toFixed(0)} MB`)
      .join(', ')}.`,
  ].join('\n');
}

/** Replaces (or appends) the section between this label's markers, leaving the rest of the file alone. */
export function writeSection(file: string, label: string, body: string): void {
  const start = `<!-- bench:${label}:start -->`;
  const end = `<!-- bench:${label}:end -->`;
  const block = `${start}\n### Run: ${label}\n\n${body}\n${end}`;
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  text = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, text);
}
