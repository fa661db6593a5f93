// One instance per job. Each job (a network's scanner, the expiry, the pruning, the sandbox's
// settlement, a network's payer: jobs.ts) runs only in the instance holding its lease: a row of job_leases that the holder renews at every round of the job and
// that any other instance takes over once it has expired. Every time is the database's now(), so the
// instances' clocks do not matter, and no connection is held for it: a holder whose host vanishes
// (killed, frozen, cut off without its TCP connections closing) loses the job when its lease runs out,
// within LEASE_SECONDS + the others' interval, not when PostgreSQL's keepalive notices (2 h by default).
// The lease alone never makes a write safe: the scan position's row lock and the outbox's SKIP LOCKED guard
// theirs, and a payout job proves its lease in each of its writes' own transactions (`fence()`): every
// take-over raises the lease's fencing token, and a write under an older token is refused, so a round that
// stalled past its lease (a node call that waited 30 s) and resumes after another instance took over writes
// nothing. What the lease itself saves is N instances making N times the RPC calls.
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.js';
import { LeaseLostError, UNFENCED, type Fence } from '../db/fence.js';
import type { Logger } from '../shared/logger.js';

export type LeaseGauge = { set(labels: { job: string }, value: number): void };

/** How long a lease lasts without renewal: longer than a round of any job, well under the 60 s bound. */
export const LEASE_SECONDS = 30;

/**
 * Takes the lease when it is free or expired, renews it when this holder has it; no row when another
 * holder's lease is still running. A take-over raises the fencing token; a renewal keeps it.
 */
const TAKE_OR_RENEW_SQL = `
  INSERT INTO job_leases (job, holder, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
  ON CONFLICT (job) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
         fence = CASE WHEN job_leases.holder = EXCLUDED.holder THEN job_leases.fence ELSE job_leases.fence + 1 END
   WHERE job_leases.holder = EXCLUDED.holder OR job_leases.expires_at <= now()
  RETURNING fence`;

/**
 * The fence's proof, in the writer's transaction: the lease still carries the round's token (so nobody
 * took it over since), renewed as it is proven, its row locked until the write commits so that no
 * take-over lands between the proof and the write. A lease that ran out but that nobody took keeps its
 * token: still this holder's, and safe to write under.
 */
const PROVE_SQL = `
  UPDATE job_leases SET expires_at = greatest(expires_at, now() + make_interval(secs => $4))
   WHERE job = $1 AND holder = $2 AND fence = $3
  RETURNING 1`;

export class JobLease {
  /** The lease's holder: this instance for this job, unique per process and job. */
  private readonly holder = randomUUID();
  private held = false;
  /** The fencing token of the lease as last taken or renewed (undefined: not held). */
  private token: bigint | undefined;
  /** When the lease last renewed runs out (performance.now() time), and the timer that reports it. */
  private leaseEnds = 0;
  private endTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    readonly job: string,
    private readonly log?: Logger,
    private readonly gauge?: LeaseGauge,
    private readonly leaseSeconds = LEASE_SECONDS,
  ) {}

  /** Whether this instance runs the job now: renews its lease, or takes it when it is free or expired. */
  async holds(): Promise<boolean> {
    // PGlite: one process owns the database (the data-directory lock), so it holds every job's lease.
    if (this.db.kind === 'pglite') {
      this.gauge?.set({ job: this.job }, 1);
      return true;
    }
    let holds = false;
    // The lease runs from the database's now(), which comes after this: counting from here ends it early, never late.
    const asked = performance.now();
    try {
      const [row] = await this.db.query<{ fence: bigint }>(TAKE_OR_RENEW_SQL, [this.job, this.holder, this.leaseSeconds]);
      this.token = row?.fence;
      holds = row !== undefined;
    } finally {
      this.report(holds);
    }
    if (holds) this.reportEndOfLease(asked + this.leaseSeconds * 1000);
    return holds;
  }

  /**
   * The gauge says 0 once the lease has run out unrenewed, whatever the instance was doing meanwhile (a
   * renewal that hangs on a frozen connection, a process stopped and resumed): it never says it holds a lease
   * another instance may hold by now.
   */
  private reportEndOfLease(until: number): void {
    this.leaseEnds = until;
    clearTimeout(this.endTimer);
    this.endTimer = setTimeout(() => {
      if (performance.now() >= this.leaseEnds) this.report(false);
    }, until - performance.now());
    this.endTimer.unref();
  }

  /**
   * The fence of the round that starts now, under the lease `holds()` just took or renewed: each of the
   * round's writes proves with it, in its own transaction, that no other instance took the job over since.
   */
  fence(): Fence {
    if (this.db.kind === 'pglite') return UNFENCED;
    const { job, holder, token, leaseSeconds } = this;
    return async (tx) => {
      if (token === undefined || (await tx.query(PROVE_SQL, [job, holder, token, leaseSeconds])).length === 0) throw new LeaseLostError(job);
    };
  }

  /** Gives the job up at a clean stop: another instance takes it at its next round, not at the lease's end. */
  async release(): Promise<void> {
    if (this.db.kind === 'pglite') return;
    clearTimeout(this.endTimer);
    await this.db.query('DELETE FROM job_leases WHERE job = $1 AND holder = $2', [this.job, this.holder]).catch(() => {});
    this.report(false);
  }

  private report(holds: boolean): void {
    if (holds && !this.held) this.log?.info?.({ job: this.job }, 'this instance now runs the job');
    if (!holds && this.held) this.log?.warn({ job: this.job }, 'this instance stopped running the job: its lease was taken over or could not be renewed');
    this.held = holds;
    this.gauge?.set({ job: this.job }, holds ? 1 : 0);
  }
}
