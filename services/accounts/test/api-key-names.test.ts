/**
 * Keys have names (set on create, listed with first characters, created and last-used dates) and an
 * account's password can be set from the operator CLI, through the accounts service's gRPC API.
 */
import { as } from '../../../gateway/test/support/api';
import { startGatewayProcess } from '../../../gateway/test/support/gateway-process';
import { admin } from '../../../gateway/test/support/platform';

async function run(...args: string[]): Promise<any> {
  const { stdout } = await admin(...args);
  return JSON.parse(stdout);
}

async function refused(...args: string[]): Promise<string> {
  try {
    await admin(...args);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    expect(e.code).toBe(1);
    return JSON.parse(e.stderr).error;
  }
  throw new Error(`admin ${args.join(' ')} was not refused`);
}

test('keys are created with a name and listed with it; the first keys of an account are named after their mode', async () => {
  const made = await run('create-account', '--name', 'Named keys', '--email', `named-${Date.now()}@example.test`, '--password', 'first-password');
  const id = String(made.account.id);
  const created = await run('create-key', '--account', id, '--mode', 'live', '--name', 'Checkout service');
  expect(created.key).toMatchObject({ mode: 'live', name: 'Checkout service', last_used: null });
  expect(created.secret.startsWith(created.key.prefix)).toBe(true);
  const listed = await run('list-keys', '--account', id);
  expect(listed.keys.map((k: { name: string }) => k.name)).toEqual(['Default test key', 'Default live key', 'Checkout service']);

  expect(await refused('create-key', '--account', id, '--mode', 'test', '--name', ' ')).toMatch(/'name' is required/);
  expect(await refused('create-key', '--account', id, '--mode', 'test', '--name', 'x'.repeat(101))).toMatch(/1-100 characters/);
  expect((await run('list-keys', '--account', id)).keys).toHaveLength(3);
});

test('set-password replaces the password; short ones and unknown accounts are refused', async () => {
  const made = await run('create-account', '--name', 'Password owner');
  const id = String(made.account.id);
  expect(await run('set-password', '--account', id, '--password', 'a-long-enough-secret')).toEqual({ account: { id: made.account.id, email: null, password_set: true } });
  expect(await refused('set-password', '--account', id, '--password', 'short')).toMatch(/at least 8 characters/);
  expect(await refused('set-password', '--account', '99999999', '--password', 'a-long-enough-secret')).toMatch(/99999999/);
});

test('a gateway records when keys were last used, in batches, at most once a minute per key', async () => {
  const gw = await startGatewayProcess({ KEY_USAGE_FLUSH_MS: '200' });
  try {
    const made = await run('create-account', '--name', 'Key use');
    const id = String(made.account.id);
    const lastUsed = async () => Object.fromEntries((await run('list-keys', '--account', id)).keys.map((k: { mode: string; last_used: string | null }) => [k.mode, k.last_used]));
    expect(await lastUsed()).toEqual({ test: null, live: null });
    expect((await as(made.keys.test, gw.httpsPort).get('/v2/publishers')).status).toBe(200);
    let seen: Record<string, string | null> = {};
    for (let i = 0; i < 40 && !seen.test; i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await lastUsed();
    }
    expect(seen.test).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(seen.live).toBeNull();
    // Used again within the minute: the time stays (no write per request).
    await new Promise((r) => setTimeout(r, 1100));
    expect((await as(made.keys.test, gw.httpsPort).get('/v2/publishers')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 600));
    expect((await lastUsed()).test).toBe(seen.test);
  } finally {
    await gw.stop();
  }
}, 60_000);
