import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, envStr } from './config';

/**
 * A platform secret: set by an environment variable (a Kubernetes Secret), else kept in a file under
 * DATA_DIR that `npm start` creates (0600) the first time, where every process of the platform and the
 * admin CLI find it.
 */
export class PlatformSecret {
  private cached: string | null | undefined;

  constructor(
    private readonly envName: string,
    private readonly fileName: string,
  ) {}

  file(): string {
    return path.join(dataDir(), this.fileName);
  }

  /** The secret when one is set or saved; undefined otherwise. */
  read(): string | undefined {
    const fromEnv = envStr(this.envName);
    if (fromEnv) return fromEnv;
    if (this.cached === undefined) {
      try {
        this.cached = fs.readFileSync(this.file(), 'utf8').trim() || null;
      } catch {
        this.cached = null;
      }
    }
    return this.cached ?? undefined;
  }

  /** The secret to hand to child processes: set, saved, or a new one saved now. */
  ensure(): string {
    const existing = this.read();
    if (existing) return existing;
    const secret = crypto.randomBytes(32).toString('base64url');
    fs.mkdirSync(dataDir(), { recursive: true });
    fs.writeFileSync(this.file(), `${secret}\n`, { mode: 0o600 });
    this.cached = secret;
    return secret;
  }
}
