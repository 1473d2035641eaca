/**
 * The bench must keep working: `npm run bench -- --smoke` (2 s per case, few rows) on a platform of its
 * own, every registered case answering as expected, and the results written where asked.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../gateway/test/support/platform';
import { CASES } from '../bench/cases';

jest.setTimeout(180_000);

test('the bench runs every case in smoke mode and reports ratios to its baseline', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-smoke-'));
  const json = path.join(dir, 'results.json');
  const md = path.join(dir, 'BENCHMARKS.md');
  fs.writeFileSync(md, '# Benchmarks\n\nHand-written notes stay.\n');
  // The bench starts its own platform from the environment of an operator, not the test platform's.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/_ADDR$|_PORT$|^TEST_|^INTERNAL_TOKEN$|^DB_SCHEMA_PREFIX$|^REDIS_KEY_PREFIX$|^DATA_DIR$/.test(k)));
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [path.join(ROOT, 'dist/scripts/bench/index.js'), '--smoke', '--json', json, '--out', md], { env, maxBuffer: 1 << 22 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    ),
  );
  const { results, rss } = JSON.parse(fs.readFileSync(json, 'utf8')) as {
    results: { name: string; caseName?: string; reqPerSec: number; p50: number; p99: number; failed: number; ratio: number }[];
    rss: Record<string, number>;
  };
  const names = results.map((r) => r.name);
  expect(names[0]).toBe('bare HTTPS baseline');
  // Every registered case reported (a case may report several rows).
  expect(new Set(results.slice(1).map((r) => r.caseName))).toEqual(new Set(CASES.map((c) => c.name)));
  expect(names).toEqual(expect.arrayContaining(['list p50 at 100 rows', 'list p50 at 1,000 rows']));
  for (const r of results) {
    // Every request answered with the status its case expects, and something was measured.
    expect({ name: r.name, failed: r.failed }).toEqual({ name: r.name, failed: 0 });
    expect(r.reqPerSec).toBeGreaterThan(0);
    expect(r.ratio).toBeGreaterThan(0);
  }
  for (const name of ['gateway', 'inventory', 'accounts']) expect(rss[name]).toBeGreaterThan(10);
  expect(out).toContain('share');
  const written = fs.readFileSync(md, 'utf8');
  expect(written).toContain('Hand-written notes stay.');
  expect(written).toContain('| GET /v2/ad-items/custom-html/{id} |');
  fs.rmSync(dir, { recursive: true, force: true });
});
