/**
 * A Redis server of a test's own (Debian's redis-server on a free loopback port, nothing kept on
 * disk), for tests that freeze it or cut its connections without touching the Redis others share.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from './platform';

export interface OwnRedis {
  port: number;
  url: string;
  proc: ChildProcess;
  /** One redis-cli command against it; its output, trimmed. */
  cli(...args: string[]): string;
  stop(): void;
}

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout.trim();
  for (let i = 0; i < 100 && cli('ping') !== 'PONG'; i++) await new Promise((r) => setTimeout(r, 50));
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    proc,
    cli,
    stop() {
      proc.kill('SIGCONT');
      proc.kill('SIGKILL');
    },
  };
}
