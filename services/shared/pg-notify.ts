/**
 * News every replica of a service must hear, over Postgres LISTEN/NOTIFY: every replica shares the
 * service's database, so a notification sent by the replica that made a change reaches all of them,
 * with or without Redis. Channels are prefixed with the service's schema, so platforms sharing a
 * database server do not hear each other.
 *
 * The listener holds one connection of its own outside the pool, and reconnects when it breaks (a
 * Postgres restart). Notifications sent while it was disconnected are lost, so every reconnection is
 * reported to `onGap`, for the caller to treat as "anything may have changed".
 */
import crypto from 'node:crypto';
import pg from 'pg';
import type { Knex } from 'knex';
import { envStr } from './config';
import { errorFields, log } from './log';

/** `<schema>_<topic>`; shortened with a hash past Postgres's 63-byte identifier limit, which LISTEN would truncate but pg_notify refuse. */
export function channelName(schema: string, topic: string): string {
  const name = `${schema}_${topic}`;
  if (name.length <= 63) return name;
  const hash = crypto.createHash('sha256').update(name).digest('hex').slice(0, 16);
  return `${schema.slice(0, 63 - topic.length - hash.length - 2)}_${hash}_${topic}`;
}

/** Sends `payload` (at most 7,900 bytes) on `channel`; inside a transaction it is delivered on commit. */
export async function notify(db: Knex | Knex.Transaction, channel: string, payload: string): Promise<void> {
  await db.raw('select pg_notify(?, ?)', [channel, payload]);
}

export class PgListener {
  private client?: pg.Client;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private readonly handlers = new Map<string, (payload: string) => void>();
  private connectedOnce = false;

  constructor(
    private readonly onGap: () => void = () => undefined,
    private readonly url = envStr('DATABASE_URL'),
  ) {}

  /** Starts listening on `channel`; resolves once the first connection listens. */
  async listen(channel: string, handler: (payload: string) => void): Promise<void> {
    this.handlers.set(channel, handler);
    if (this.client) await this.client.query(`listen ${pg.Client.prototype.escapeIdentifier(channel)}`);
    else await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // Keepalive: a connection whose server vanished without closing it is noticed, and replaced.
    const client = new pg.Client({ connectionString: this.url, keepAlive: true });
    client.on('notification', (n) => {
      const handler = this.handlers.get(n.channel);
      if (handler) handler(n.payload ?? '');
    });
    client.on('error', (err) => log.warn('notification listener connection error', errorFields(err)));
    client.on('end', () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.retry();
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`listen ${client.escapeIdentifier(channel)}`);
      this.client = client;
      if (this.connectedOnce) {
        log.info('notification listener reconnected');
        this.onGap();
      }
      this.connectedOnce = true;
    } catch (err) {
      log.warn('notification listener could not connect; retrying', errorFields(err));
      client.end().catch(() => undefined);
      if (!this.connectedOnce) {
        // The first connection is part of starting the service: keep trying in the background, but say so.
        this.connectedOnce = true;
      }
      this.retry();
    }
  }

  private retry(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), 1000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
