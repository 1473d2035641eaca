/** The operator CLI's usage: asked for, it is printed and the CLI succeeds; an unknown command is refused with it. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../gateway/test/support/platform';

const admin = (...args: string[]) => spawnSync(process.execPath, [path.join(ROOT, 'dist/scripts/admin.js'), ...args], { encoding: 'utf8', timeout: 30_000 });

test.each([['--help'], ['-h'], ['help'], [], ['create-account', '--help']])('admin %s prints the usage and exits 0', (...args: string[]) => {
  const res = admin(...args);
  expect(res.status).toBe(0);
  expect(res.stderr).toBe('');
  expect(res.stdout).toMatch(/^Usage: npm run admin -- COMMAND/);
  for (const command of ['create-account', 'create-key', 'list-keys', 'delete-key', 'set-limits']) expect(res.stdout).toContain(command);
});

test('an unknown command exits 2 with the usage on stderr', () => {
  const res = admin('frobnicate', '--x', '1');
  expect(res.status).toBe(2);
  expect(res.stdout).toBe('');
  expect(res.stderr).toMatch(/^unknown command 'frobnicate'/);
  expect(res.stderr).toContain('Usage: npm run admin');
});
