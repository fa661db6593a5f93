// A withdrawal the operator pays by hand (issue 54, item 2). Reserving a queued one takes it off the
// payers' hands: they never pick it (payout-queue.ts) and their intent write refuses it under the row's
// lock (lockedForHotWallet, in the same transaction as the intent), so a reservation and a hot wallet's
// payout can never both win. The operator then pays it and records the payment (record-tx), or gives it
// back (unreserve). The merchant sees none of this: its stage stays `queued` until its payment is out.
import type { Sql } from '../db/database.js';

export type ReserveOutcome = { outcome: 'reserved'; reservedAt: Date } | { outcome: 'unreserved' } | { outcome: 'refused'; why: string } | { outcome: 'none' };

interface LockedRow {
  status: string;
  stage: string | null;
  reserved_at: Date | null;
}

function lock(tx: Sql, uuid: string): Promise<LockedRow[]> {
  return tx.query<LockedRow>('SELECT status, stage, reserved_at FROM withdrawals WHERE uuid = $1 FOR UPDATE', [uuid]);
}

/**
 * Reserves a queued withdrawal for hand payment, in the caller's transaction. Refused once a payer wrote
 * its intent (the withdrawal is `sent`: that transaction may be mined) and when it is final or awaits
 * approval. Reserving one already reserved is no change.
 */
export async function reserveForHand(tx: Sql, uuid: string): Promise<ReserveOutcome> {
  const [row] = await lock(tx, uuid);
  if (!row) return { outcome: 'none' };
  if (row.status !== 'PENDING') return { outcome: 'refused', why: `it is ${row.status}, which is final` };
  if (row.stage === 'awaiting_approval') return { outcome: 'refused', why: "it awaits the operator's approval: approve it first" };
  if (row.stage === 'sent') return { outcome: 'refused', why: 'its payout is out (sent): that transaction may still be mined, never pay it by hand' };
  const [reserved] = await tx.query<{ reserved_at: Date }>(
    'UPDATE withdrawals SET reserved_at = coalesce(reserved_at, now()), funds_awaited_since = NULL WHERE uuid = $1 RETURNING reserved_at',
    [uuid],
  );
  return { outcome: 'reserved', reservedAt: reserved!.reserved_at };
}

/**
 * Gives a reserved withdrawal back to the payer. Refused while the operator's recorded payment is out
 * (`sent`): the chain decides it first, and a payer paying it meanwhile would pay it twice.
 */
export async function unreserve(tx: Sql, uuid: string): Promise<ReserveOutcome> {
  const [row] = await lock(tx, uuid);
  if (!row) return { outcome: 'none' };
  if (row.status !== 'PENDING') return { outcome: 'refused', why: `it is ${row.status}, which is final` };
  if (row.reserved_at === null) return { outcome: 'refused', why: 'it is not reserved for hand payment' };
  if (row.stage === 'sent') return { outcome: 'refused', why: 'the payment recorded for it is out: the chain decides it first' };
  await tx.query('UPDATE withdrawals SET reserved_at = NULL WHERE uuid = $1', [uuid]);
  return { outcome: 'unreserved' };
}

/**
 * Locks the withdrawal's row and says whether the operator reserved it: the payer's intent write asks
 * this in its own transaction, before it moves the withdrawal, so a reservation committed first is seen
 * and one committed after waits for the intent's transaction and then finds the withdrawal `sent`.
 */
export async function reservedForHand(tx: Sql, uuid: string): Promise<boolean> {
  const [row] = await lock(tx, uuid);
  return row !== undefined && row.reserved_at !== null;
}
