// One worker per job across instances. Each job (a network's scanner, the expiry job) runs only in the
// instance holding its PostgreSQL advisory lock; the others keep asking at every interval and take
// over when the holder's session ends, including a kill -9 (the server frees a dead socket's locks).
// Correctness never rests on the lock (the cursor row lock and SKIP LOCKED still guard the writes):
// it is what keeps N instances from making N times the RPC calls.
import type { Database, Session } from '../db/database.js';

type Log = { info?(obj: object, msg: string): void; warn(obj: object, msg: string): void };
export type LeaderGauge = { set(labels: { job: string }, value: number): void };

/** The first key of every lock of this platform, so its locks never collide with another app's. */
const LOCK_NAMESPACE = 0x50415049; // "PAPI"

export class JobLeadership {
  private session: Session | undefined;
  private leading = false;

  constructor(
    private readonly db: Database,
    readonly job: string,
    private readonly log?: Log,
    private readonly gauge?: LeaderGauge,
  ) {}

  /** Whether this instance runs the job now; takes the lead when it is free. */
  async isLeader(): Promise<boolean> {
    // PGlite: one process owns the database (the data-directory lock), so it leads every job.
    if (!this.db.openSession) {
      this.gauge?.set({ job: this.job }, 1);
      return true;
    }
    if (this.session?.lost) await this.stepDown('its database session was lost');
    if (this.leading) return true;
    this.session ??= await this.db.openSession();
    const [row] = await this.session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [LOCK_NAMESPACE, this.job]);
    this.leading = row?.locked === true;
    this.gauge?.set({ job: this.job }, this.leading ? 1 : 0);
    if (this.leading) this.log?.info?.({ job: this.job }, 'this instance now runs the job');
    return this.leading;
  }

  /** Gives the job up: closing the session frees its lock for another instance. */
  async release(): Promise<void> {
    if (this.session) await this.stepDown();
  }

  private async stepDown(why?: string): Promise<void> {
    if (why && this.leading) this.log?.warn({ job: this.job }, `this instance stopped running the job: ${why}`);
    this.leading = false;
    this.gauge?.set({ job: this.job }, 0);
    const session = this.session;
    this.session = undefined;
    await session?.close();
  }
}
