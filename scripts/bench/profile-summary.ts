/**
 * Summarises V8 .cpuprofile files (from `node --cpu-prof`, e.g. `npm run bench -- --cpu-prof DIR`):
 * the functions with the most self time and the most inclusive time, as shares of the busy time.
 *
 *   node dist/scripts/bench/profile-summary.js FILE.cpuprofile [--top 25]
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

export interface Summary {
  busyMs: number;
  idleMs: number;
  self: { name: string; ms: number; share: number }[];
  inclusive: { name: string; ms: number; share: number }[];
}

function label(n: Node): string {
  const f = n.callFrame;
  const file = f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '~/').replace(/^.*\/dist\//, 'dist/');
  return `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
}

export function summarise(p: Profile, top = 25): Summary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfMs = new Map<number, number>();
  // Each sample weighs the median interval: a long gap (the process descheduled on a busy machine, or
  // the final sample at exit) would otherwise charge seconds to whatever ran last.
  const deltas = [...p.timeDeltas].sort((a, b) => a - b);
  const interval = (deltas[Math.floor(deltas.length / 2)] ?? 1000) / 1000;
  for (const id of p.samples) selfMs.set(id, (selfMs.get(id) ?? 0) + interval);
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const [id, ms] of selfMs) {
    const n = byId.get(id)!;
    const name = label(n);
    if (n.callFrame.functionName === '(idle)' || n.callFrame.functionName === '(program)') {
      idle += ms;
      continue;
    }
    busy += ms;
    self.set(name, (self.get(name) ?? 0) + ms);
    // Inclusive: each function on the stack once, however often it recurs.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!);
      if (seen.has(l)) continue;
      seen.add(l);
      incl.set(l, (incl.get(l) ?? 0) + ms);
    }
  }
  const rank = (m: Map<string, number>) =>
    [...m]
      .filter(([name]) => !name.startsWith('(root)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms, share: busy ? ms / busy : 0 }));
  return { busyMs: busy, idleMs: idle, self: rank(self), inclusive: rank(incl) };
}

if (require.main === module) {
  const files = process.argv.slice(2).filter((a) => a.endsWith('.cpuprofile'));
  const i = process.argv.indexOf('--top');
  const top = i > 0 ? Number(process.argv[i + 1]) : 25;
  for (const f of files) {
    const s = summarise(JSON.parse(fs.readFileSync(f, 'utf8')) as Profile, top);
    process.stdout.write(`\n## ${f}: busy ${(s.busyMs / 1000).toFixed(1)} s, idle ${(s.idleMs / 1000).toFixed(1)} s\n\nself time:\n`);
    for (const r of s.self) process.stdout.write(`  ${(r.share * 100).toFixed(1).padStart(5)} %  ${r.name}\n`);
    process.stdout.write('inclusive time:\n');
    for (const r of s.inclusive) process.stdout.write(`  ${(r.share * 100).toFixed(1).padStart(5)} %  ${r.name}\n`);
  }
}
