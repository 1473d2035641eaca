/**
 * The accounts side of the settings page: sign-in answers a wrong email and a wrong password alike,
 * and sessions kept in accounts' database expire when idle and end together on sign-out.
 */
import crypto from 'node:crypto';
import { accounts } from '../../shared/grpc/clients';

const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: { code: number; details: string }) => ({ code: e.code, details: e.details }));
const hash = () => crypto.randomBytes(32).toString('hex');
const csrf = () => crypto.randomBytes(24).toString('base64url');

test('sign-in: right password in any letter case of the email; wrong email and wrong password fail alike', async () => {
  const email = `Owner-${Date.now()}@Sessions.example`;
  const made = await accounts.createAccount({ name: 'Sessions', email, password: 'correct horse', features: [] }, { timeoutMs: 10_000 });
  expect(await accounts.signIn({ email: email.toLowerCase(), password: 'correct horse' }, { timeoutMs: 10_000 })).toMatchObject({ id: made.account!.id });
  const wrongPassword = await failure(accounts.signIn({ email, password: 'wrong horse' }, { timeoutMs: 10_000 }));
  const wrongEmail = await failure(accounts.signIn({ email: `x${email}`, password: 'correct horse' }, { timeoutMs: 10_000 }));
  expect(wrongPassword.code).toBe(5);
  expect(wrongEmail).toEqual(wrongPassword);
  // An account without a password cannot be signed into.
  const bare = `bare-${Date.now()}@sessions.example`;
  await accounts.createAccount({ name: 'No password', email: bare, password: '', features: [] }, { timeoutMs: 10_000 });
  expect(await failure(accounts.signIn({ email: bare, password: '' }, { timeoutMs: 10_000 }))).toEqual(wrongPassword);
});

test('sessions expire when idle, are kept alive by use, and end together', async () => {
  const made = await accounts.createAccount({ name: 'Sessions idle', email: '', password: '', features: [] }, { timeoutMs: 10_000 });
  const accountId = made.account!.id;
  const [a, b] = [hash(), hash()];
  for (const h of [a, b]) await accounts.createSession({ sessionHash: h, accountId, csrfToken: csrf() }, { timeoutMs: 10_000 });
  expect(await accounts.touchSession({ sessionHash: a, idleSeconds: 2 }, { timeoutMs: 10_000 })).toMatchObject({ accountId });
  await new Promise((r) => setTimeout(r, 2200));
  expect((await failure(accounts.touchSession({ sessionHash: a, idleSeconds: 2 }, { timeoutMs: 10_000 }))).code).toBe(5);
  // b, idle just as long but asked with the real 12 h, is still there; sign-out ends it.
  expect(await accounts.touchSession({ sessionHash: b, idleSeconds: 43_200 }, { timeoutMs: 10_000 })).toMatchObject({ accountId });
  expect(await accounts.endSessions({ accountId }, { timeoutMs: 10_000 })).toMatchObject({ ended: 1 });
  expect((await failure(accounts.touchSession({ sessionHash: b, idleSeconds: 43_200 }, { timeoutMs: 10_000 }))).code).toBe(5);
});
