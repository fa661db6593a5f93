// The sandbox's stand-in for a payout: a withdrawal asked for through the API settles by itself
// SANDBOX_WITHDRAWAL_SECONDS after it was accepted (or approved), DONE with a made-up transaction id that
// no chain knows, unless the sandbox's helper moved it first or the operator claimed it to settle it
// by hand. Run by a job (jobs/jobs.ts) in sandbox mode.
import type { Database } from '../db/database.js';
import type { Network } from '../shared/network.js';
import { moveWithdrawal } from './settlement.js';
export { madeUpTxId } from './made-up-tx-id.js';
import { madeUpTxId } from './made-up-tx-id.js';

/** Withdrawals settled by one run at most; a full batch means more are due. */
export const SANDBOX_SETTLE_BATCH = 100;


/** Settles the withdrawals that are due (by the database's clock); how many it settled. */
export async function settleDueSandboxWithdrawals(db: Database): Promise<number> {
  const due = await db.query<{ uuid: string; blockchain: Network }>(
    `SELECT uuid, blockchain FROM withdrawals WHERE status = 'PENDING' AND settle_after <= now() AND claimed_at IS NULL ORDER BY settle_after LIMIT ${SANDBOX_SETTLE_BATCH}`,
  );
  for (const { uuid, blockchain } of due) {
    // Moved meanwhile (the helper failed it): the move is refused and nothing changes.
    await db.transaction((tx) => moveWithdrawal(tx, uuid, { to: 'DONE', txId: madeUpTxId(blockchain) }, { mode: 'sandbox' }));
  }
  return due.length;
}
