/**
 * A Postgres server of a test's own (initdb into a temporary directory, on a free port), so that a test
 * can restart it while others keep using the machine's shared one. Needs the Debian server binaries and
 * root (to run them as the postgres user); `available()` says whether this machine can.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './platform';

const BASE = '/usr/lib/postgresql';

function binDir(): string | undefined {
  if (!fs.existsSync(BASE)) return undefined;
  const version = fs
    .readdirSync(BASE)
    .filter((v) => fs.existsSync(path.join(BASE, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))[0];
  return version ? path.join(BASE, version, 'bin') : undefined;
}

export function available(): boolean {
  return process.getuid?.() === 0 && !!binDir() && fs.existsSync('/usr/sbin/runuser');
}

export interface TempPostgres {
  url: string;
  /** A fast-mode restart: connections are cut, the server comes back on the same port. */
  restart(): void;
  stop(): void;
}

export async function startTempPostgres(): Promise<TempPostgres> {
  const bin = binDir();
  if (!bin || !available()) throw new Error('no Postgres server binaries, or not root');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adserver-pg-'));
  execFileSync('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  const asPostgres = (args: string[]) => execFileSync('/usr/sbin/runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe', timeout: 60_000 });
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  asPostgres([path.join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const pgCtl = (...args: string[]) => asPostgres([path.join(bin, 'pg_ctl'), '-D', data, '-l', path.join(dir, 'server.log'), '-w', ...args]);
  pgCtl('-o', options, 'start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () => pgCtl('-o', options, '-m', 'fast', 'restart'),
    stop() {
      try {
        pgCtl('-m', 'immediate', 'stop');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
