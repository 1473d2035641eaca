/**
 * The accounts side of the settings page: sign-in answers a wrong email and a wrong password alike,
 * and sessions kept in accounts' database expire when idle and end together on sign-out.
 */
import crypto from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { AccountsClient } from '../../../proto/gen/adserver/accounts/v1/accounts';
import { call, clientFor } from '../../shared/grpc/client';

const rpc = <Res>(method: string, req: unknown) => call<unknown, Res>('accounts', clientFor('accounts', AccountsClient), method, req, new Metadata(), { timeoutMs: 10_000 });
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: { code: number; details: string }) => ({ code: e.code, details: e.details }));
const hash = () => crypto.randomBytes(32).toString('hex');
const csrf = () => crypto.randomBytes(24).toString('base64url');

test('sign-in: right password in any letter case of the email; wrong email and wrong password fail alike', async () => {
  const email = `Owner-${Date.now()}@Sessions.example`;
  const made = await rpc<{ account: { id: number } }>('createAccount', { name: 'Sessions', email, password: 'correct horse', features: [] });
  expect(await rpc<{ id: number }>('signIn', { email: email.toLowerCase(), password: 'correct horse' })).toMatchObject({ id: made.account.id });
  const wrongPassword = await failure(rpc('signIn', { email, password: 'wrong horse' }));
  const wrongEmail = await failure(rpc('signIn', { email: `x${email}`, password: 'correct horse' }));
  expect(wrongPassword.code).toBe(5);
  expect(wrongEmail).toEqual(wrongPassword);
  // An account without a password cannot be signed into.
  const bare = `bare-${Date.now()}@sessions.example`;
  await rpc('createAccount', { name: 'No password', email: bare, password: '', features: [] });
  expect(await failure(rpc('signIn', { email: bare, password: '' }))).toEqual(wrongPassword);
});

test('sessions expire when idle, are kept alive by use, and end together', async () => {
  const made = await rpc<{ account: { id: number } }>('createAccount', { name: 'Sessions idle', email: '', password: '', features: [] });
  const accountId = made.account.id;
  const [a, b] = [hash(), hash()];
  for (const h of [a, b]) await rpc('createSession', { sessionHash: h, accountId, csrfToken: csrf() });
  expect(await rpc('touchSession', { sessionHash: a, idleSeconds: 2 })).toMatchObject({ accountId });
  await new Promise((r) => setTimeout(r, 2200));
  expect((await failure(rpc('touchSession', { sessionHash: a, idleSeconds: 2 }))).code).toBe(5);
  // b, idle just as long but asked with the real 12 h, is still there; sign-out ends it.
  expect(await rpc('touchSession', { sessionHash: b, idleSeconds: 43_200 })).toMatchObject({ accountId });
  expect(await rpc('endSessions', { accountId })).toMatchObject({ ended: 1 });
  expect((await failure(rpc('touchSession', { sessionHash: b, idleSeconds: 43_200 }))).code).toBe(5);
});
