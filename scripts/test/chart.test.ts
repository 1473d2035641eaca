/**
 * The deployment checks of deploy/check-chart.sh as tests, so that CI runs them with the suite: helm
 * lint and template of every values set, strict schema validation of every rendered object, a
 * 52-character release name, values that must be refused, and the dashboard and alerting rules
 * checked against the code's metrics and by promtool. No Kubernetes API server is involved.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../gateway/test/support/platform';

// Run once while jest collects the tests: each line of the script's report becomes one test.
const run = spawnSync('bash', [path.join(ROOT, 'deploy/check-chart.sh')], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
const report = `${run.stdout ?? ''}${run.stderr ?? ''}`;
const results = [...report.matchAll(/^(ok|FAIL|skip)\s+(.+)$/gm)].map((m) => ({ status: m[1], name: m[2], detail: '' }));
// Attach the indented output that follows a FAIL line to it.
{
  const lines = report.split('\n');
  let current: (typeof results)[number] | undefined;
  for (const line of lines) {
    const m = /^(ok|FAIL|skip)\s+(.+)$/.exec(line);
    if (m) current = results.find((r) => r.name === m[2] && r.status === m[1]);
    else if (current && line.startsWith('      ')) current.detail += `${line}\n`;
  }
}

test('deploy/check-chart.sh ran to its summary line', () => {
  expect(report).toMatch(/check-chart: \d+ passed, \d+ failed/);
  expect(results.filter((r) => r.status !== 'skip').length).toBeGreaterThanOrEqual(20);
});

test.each(results.filter((r) => r.status !== 'skip').map((r) => [r.name, r] as const))('%s', (_name, r) => {
  if (r.status === 'FAIL') throw new Error(`check failed:\n${r.detail}`);
  expect(r.status).toBe('ok');
});

test('the script exits 0 only when every check passed', () => {
  const failed = results.some((r) => r.status === 'FAIL');
  expect(run.status === 0).toBe(!failed);
});
