// A job lease's fence (src/server/jobs/lease.ts, src/server/db/fence.ts; issue 53): a write of a round
// proves, in its own transaction, that no other instance took the job over since the round began. Two
// JobLease objects of one job on one PostgreSQL database are two instances. A lease is made to run out by
// moving its end into the past (what the clock would do after leaseSeconds), so that nothing here waits.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { fencedTransaction, LeaseLostError, UNFENCED, type Fence } from '../../../src/server/db/fence.js';
import { JobLease } from '../../../src/server/jobs/lease.js';
import { useDatabase } from '../../support/test-database.js';
import { TEST_DATABASE_URL } from '../../support/platform.js';
import { until } from '../../support/processes.js';

const JOB = 'payout:Tron';

/** What a round writes under its fence: one row, committed only with the proof. */
async function write(db: Database, fence: Fence, marker: string): Promise<void> {
  await fencedTransaction(db, fence, (tx) => tx.query('INSERT INTO fence_writes (marker) VALUES ($1)', [marker]));
}

const lease = async (db: Database) => (await db.query<{ holder: string; fence: bigint; expired: boolean }>('SELECT holder, fence, expires_at <= now() AS expired FROM job_leases WHERE job = $1', [JOB]))[0];
/** The lease runs out, as after its seconds without a renewal. */
const runOut = (db: Database) => db.query("UPDATE job_leases SET expires_at = now() - interval '1 second' WHERE job = $1", [JOB]);

describe.skipIf(!TEST_DATABASE_URL)("a job lease's fence on PostgreSQL", () => {
  let db: Database;
  useDatabase('postgres', 'all', async (opened) => {
    db = opened;
    await db.exec('CREATE TABLE fence_writes (marker text NOT NULL)');
  });
  const written = async () => (await db.query<{ marker: string }>('SELECT marker FROM fence_writes ORDER BY marker')).map((r) => r.marker);

  it("passes while the round's holder keeps the lease, renewed or run out unclaimed; refuses once another took it over, the write rolled back", async () => {
    const a = new JobLease(db, JOB, undefined, undefined, 2);
    const b = new JobLease(db, JOB, undefined, undefined, 2);
    expect(await a.holds()).toBe(true);
    const round = a.fence();
    const taken = (await lease(db))!;
    await write(db, round, 'a1');
    expect(await b.holds()).toBe(false);

    // A renewal keeps the token: the round that began before it still writes.
    expect(await a.holds()).toBe(true);
    expect((await lease(db))!.fence).toBe(taken.fence);
    await write(db, round, 'a2');

    // Run out, and nobody took it: still this holder's, and the proof renews it.
    await runOut(db);
    expect((await lease(db))!.expired).toBe(true);
    await write(db, round, 'a3');
    expect(await lease(db)).toMatchObject({ holder: taken.holder, fence: taken.fence, expired: false });
    expect(await b.holds()).toBe(false);

    // Run out, and taken over: a new token; the old round's write is refused and leaves nothing.
    await runOut(db);
    expect(await b.holds()).toBe(true);
    expect((await lease(db))!.fence).toBe(taken.fence + 1n);
    await expect(write(db, round, 'a4')).rejects.toBeInstanceOf(LeaseLostError);
    await write(db, b.fence(), 'b1');
    // The old holder's next round is not its own: no lease, and a fence that refuses.
    expect(await a.holds()).toBe(false);
    await expect(write(db, a.fence(), 'a5')).rejects.toBeInstanceOf(LeaseLostError);
    // Taken back later: yet another token, the first round still refused.
    await runOut(db);
    expect(await a.holds()).toBe(true);
    expect((await lease(db))!.fence).toBe(taken.fence + 2n);
    await expect(write(db, round, 'a6')).rejects.toBeInstanceOf(LeaseLostError);
    await write(db, a.fence(), 'a7');
    expect(await written()).toEqual(['a1', 'a2', 'a3', 'a7', 'b1']);

    // Released at a clean stop: the row is gone and the released holder's fence refuses.
    const last = a.fence();
    await a.release();
    await expect(write(db, last, 'a8')).rejects.toBeInstanceOf(LeaseLostError);
    expect(await lease(db)).toBeUndefined();
  });

  it("holds the lease's row from the proof to the commit: a take-over waits for the write, then finds the lease renewed", async () => {
    await db.query('DELETE FROM job_leases WHERE job = $1', [JOB]);
    const a = new JobLease(db, JOB, undefined, undefined, 2);
    const b = new JobLease(db, JOB, undefined, undefined, 2);
    expect(await a.holds()).toBe(true);
    await runOut(db);
    const fence = a.fence();
    let takeOver: Promise<boolean> | undefined;
    await fencedTransaction(db, fence, async (tx) => {
      // Proven (and renewed) in this transaction: B's take-over, on another connection, waits on the row.
      takeOver = b.holds();
      const waiting = "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO job_leases%'";
      await until("the take-over waiting on the lease's row", async () => ((await db.query(waiting)).length === 1 ? true : undefined));
      await tx.query('INSERT INTO fence_writes (marker) VALUES ($1)', ['under the lock']);
    });
    expect(await takeOver).toBe(false);
    expect(await written()).toContain('under the lock');
  });
});

describe("a job lease's fence on PGlite", () => {
  let db: Database;
  useDatabase('pglite', 'all', (opened) => {
    db = opened;
  });

  // No overlap to fence: PGlite is one process's database (db/data-directory.ts locks DATA_DIR for the
  // process that opened it, and a second is refused), so that process runs every job and no other
  // instance can take a job over mid-round. Its leases are always held and its fences prove nothing.
  it('is always held and never refuses: one process owns the database', async () => {
    const a = new JobLease(db, JOB, undefined, undefined, 2);
    const b = new JobLease(db, JOB, undefined, undefined, 2);
    expect([await a.holds(), await b.holds()]).toEqual([true, true]);
    expect([a.fence(), b.fence()]).toEqual([UNFENCED, UNFENCED]);
    expect(await db.query('SELECT job FROM job_leases')).toEqual([]);
  });
});
