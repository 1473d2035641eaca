/**
 * A platform of a test file's own, for tests that kill, freeze or restart its processes without
 * disturbing the shared one. It serves the shared platform's certificate, so the same HTTPS client
 * trusts both; its accounts come from its own accounts service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { AccountsClient } from '../../../proto/gen/adserver/accounts/v1/accounts';
import { channelOptions } from '../../../services/shared/grpc/client';
import { as, type TestAccount } from './api';
import { dropSchemas, startPlatform, stopPlatform, type PlatformInfo } from './platform';

export interface OwnPlatform {
  info: PlatformInfo;
  /** Its gateway's HTTPS port. */
  port: number;
  newAccount(features?: string[]): Promise<TestAccount>;
  /** Current pid of each child process (the launcher restarts a child that dies). */
  pids(): Record<string, number>;
  stop(): Promise<void>;
}

export async function startOwnPlatform(env: Record<string, string> = {}): Promise<OwnPlatform> {
  const tls = process.env.TEST_CA_FILE!;
  const { info } = await startPlatform({ TLS_CERT_FILE: tls, TLS_KEY_FILE: tls.replace(/\.crt$/, '.key'), ...env });
  const port = Number(info.env.GATEWAY_HTTPS_PORT);
  const accounts = new AccountsClient(info.env.ACCOUNTS_ADDR, credentials.createInsecure(), channelOptions);
  let seq = 0;
  const ownToken = () => {
    const md = new Metadata();
    md.set('x-internal-token', info.env.INTERNAL_TOKEN);
    return md;
  };
  return {
    info,
    port,
    newAccount: (features = []) =>
      new Promise((resolve, reject) =>
        accounts.createAccount({ name: `Own platform account ${++seq}`, email: '', password: '', features }, ownToken(), (err, res) =>
          err ? reject(err) : resolve({ id: res.account!.id, testKey: res.testKey, liveKey: res.liveKey, test: as(res.testKey, port), live: as(res.liveKey, port) }),
        ),
      ),
    pids: () => JSON.parse(fs.readFileSync(path.join(info.dataDir, 'pids.json'), 'utf8')),
    async stop() {
      accounts.close();
      await stopPlatform(info.pid, 30_000, info.dataDir);
      await dropSchemas(info.schemaPrefix).catch(() => undefined);
      fs.rmSync(info.dataDir, { recursive: true, force: true });
    },
  };
}
