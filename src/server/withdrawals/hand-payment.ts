// A withdrawal the operator pays by hand (issue 54, item 2). Claiming a queued one takes it off the
// payers' hands: they never pick it (payout-queue.ts) and their intent write refuses it under the row's
// lock (lockedForHotWallet, in the same transaction as the intent), so a claim and a hot wallet's
// payout can never both win. The operator then pays it and records the payment (record-tx), or gives it
// back (unclaim). The merchant sees none of this: its stage stays `queued` until its payment is out.
import type { Sql } from '../db/database.js';

export type ClaimOutcome = { outcome: 'claimed'; claimedAt: Date } | { outcome: 'unclaimed' } | { outcome: 'refused'; why: string } | { outcome: 'none' };

interface LockedRow {
  status: string;
  stage: string | null;
  claimed_at: Date | null;
}

function lock(tx: Sql, uuid: string): Promise<LockedRow[]> {
  return tx.query<LockedRow>('SELECT status, stage, claimed_at FROM withdrawals WHERE uuid = $1 FOR UPDATE', [uuid]);
}

/**
 * Claims a queued withdrawal for hand payment, in the caller's transaction. Refused once a payer wrote
 * its intent (the withdrawal is `sent`: that transaction may be mined) and when it is final or awaits
 * approval. Claiming one already claimed is no change.
 */
export async function claimForHand(tx: Sql, uuid: string): Promise<ClaimOutcome> {
  const [row] = await lock(tx, uuid);
  if (!row) return { outcome: 'none' };
  if (row.status !== 'PENDING') return { outcome: 'refused', why: `it is ${row.status}, which is final` };
  if (row.stage === 'awaiting_approval') return { outcome: 'refused', why: "it awaits the operator's approval: approve it first" };
  if (row.stage === 'sent') return { outcome: 'refused', why: 'its payout is out (sent): that transaction may still be mined, never pay it by hand' };
  const [claimed] = await tx.query<{ claimed_at: Date }>(
    'UPDATE withdrawals SET claimed_at = coalesce(claimed_at, now()), funds_awaited_since = NULL WHERE uuid = $1 RETURNING claimed_at',
    [uuid],
  );
  return { outcome: 'claimed', claimedAt: claimed!.claimed_at };
}

/**
 * Gives a claimed withdrawal back to the payer. Refused while the operator's recorded payment is out
 * (`sent`): the chain decides it first, and a payer paying it meanwhile would pay it twice.
 */
export async function unclaim(tx: Sql, uuid: string): Promise<ClaimOutcome> {
  const [row] = await lock(tx, uuid);
  if (!row) return { outcome: 'none' };
  if (row.status !== 'PENDING') return { outcome: 'refused', why: `it is ${row.status}, which is final` };
  if (row.claimed_at === null) return { outcome: 'refused', why: 'it is not claimed for hand payment' };
  if (row.stage === 'sent') return { outcome: 'refused', why: 'the payment recorded for it is out: the chain decides it first' };
  await tx.query('UPDATE withdrawals SET claimed_at = NULL WHERE uuid = $1', [uuid]);
  return { outcome: 'unclaimed' };
}

/**
 * Locks the withdrawal's row and says whether the operator claimed it: the payer's intent write asks
 * this in its own transaction, before it moves the withdrawal, so a claim committed first is seen
 * and one committed after waits for the intent's transaction and then finds the withdrawal `sent`.
 */
export async function claimedForHand(tx: Sql, uuid: string): Promise<boolean> {
  const [row] = await lock(tx, uuid);
  return row !== undefined && row.claimed_at !== null;
}
