// A fence: what a job's write proves inside its own database transaction before it writes, so that a
// round that outlived its lease (a node call that hung, a process stopped and resumed) writes nothing
// once another instance has taken the job over (jobs/lease.ts makes them; docs/design.md#paying-out).
import type { Database, Sql } from './database.js';

/** Throws LeaseLostError, in the caller's transaction, when the round's lease is no longer held. */
export type Fence = (tx: Sql) => Promise<void>;

/** The lease the round started under was taken over: the round's writes are refused, and it ends. */
export class LeaseLostError extends Error {
  constructor(job: string) {
    super(`the ${job} job's lease was taken over by another instance: this round writes nothing more`);
    this.name = 'LeaseLostError';
  }
}

/** No lease to prove: one process owns the database (PGlite), or a test drives a round itself. */
export const UNFENCED: Fence = async () => {};

/** Runs `work` in one transaction that first proves the fence: both commit, or neither. */
export function fencedTransaction<T>(db: Database, fence: Fence, work: (tx: Sql) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await fence(tx);
    return work(tx);
  });
}
