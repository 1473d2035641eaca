import crypto from 'node:crypto';
import os from 'node:os';
import type { Knex } from 'knex';

/** This process among the replicas: names the holder of leases, stream consumers and claimed jobs. */
export function workerId(): string {
  return `${os.hostname()}-${process.pid}-${crypto.randomBytes(3).toString('hex')}`.slice(0, 64);
}

export interface LeaseQueueSpec {
  /** The job table: `id`, `status` ('queued', 'running', …), `lease_owner`, `attempts` and the lease end column. */
  table: string;
  /** The column holding when the lease runs out. */
  leaseUntil: string;
  leaseMs: number;
  /** Extra condition a queued job must meet to be claimed (SQL over the table's columns), e.g. a not-before time. */
  readyWhen?: string;
  /** Extra assignments made when a job is claimed (SQL), e.g. its start time. */
  onClaim?: string;
}

/**
 * A Postgres job queue shared by every replica: a job is claimed under a lease (`FOR UPDATE SKIP
 * LOCKED`, so two replicas never claim one), renewed while it runs, and claimed again by whichever
 * replica polls next once the lease runs out (its replica died). A replica that lost its lease changes
 * nothing: every change goes through `whileHeld`.
 */
export class LeaseQueue<Row extends { id: number | string }> {
  readonly owner = workerId();

  constructor(
    private readonly knex: Knex,
    private readonly spec: LeaseQueueSpec,
  ) {}

  /** The oldest claimable job, now running under this replica's lease; undefined when none is due. */
  async claim(): Promise<Row | undefined> {
    const { table, leaseUntil, readyWhen, onClaim } = this.spec;
    const res = await this.knex.raw(
      `update ?? set status = 'running', attempts = attempts + 1, lease_owner = ?, ?? = now() + (? * interval '1 millisecond')${onClaim ? `, ${onClaim}` : ''}
        where id = (select id from ??
                     where (status = 'queued'${readyWhen ? ` and ${readyWhen}` : ''}) or (status = 'running' and ?? < now())
                     order by id limit 1 for update skip locked)
        returning *`,
      [table, this.owner, leaseUntil, this.spec.leaseMs, table, leaseUntil],
    );
    return (res as { rows: Row[] }).rows[0];
  }

  /** Changes the job only while this replica still holds it; false when the lease was lost. */
  async whileHeld(id: Row['id'], fields: Record<string, unknown>): Promise<boolean> {
    return (await this.knex(this.spec.table).where({ id, lease_owner: this.owner, status: 'running' }).update(fields)) > 0;
  }

  /** Renews the job's lease every third of its length until the returned function is called. */
  keepLease(id: Row['id']): () => void {
    const renew = setInterval(() => {
      void this.whileHeld(id, { [this.spec.leaseUntil]: this.knex.raw(`now() + (? * interval '1 millisecond')`, [this.spec.leaseMs]) }).catch(() => undefined);
    }, Math.max(100, Math.floor(this.spec.leaseMs / 3)));
    return () => clearInterval(renew);
  }

  /** Gives a job back to the queue (a stopping replica), for the next poll of any replica. */
  handBack(id: Row['id']): Promise<boolean> {
    return this.whileHeld(id, { status: 'queued', lease_owner: null, [this.spec.leaseUntil]: null });
  }
}
