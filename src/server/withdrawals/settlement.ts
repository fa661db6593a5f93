// How a PENDING withdrawal moves on: approved (awaiting_approval → queued), sent (its payout's chain
// transaction known: → sent), resent or requeued by the payout job, settled (DONE, its hold spent) or
// failed (FAILED, its hold released). Each move is one transaction with its ledger entry and its event
// (withdrawal.updated, .done, .failed) in the outbox, so a merchant hears of every change exactly as it
// committed. DONE and FAILED are final.
import type { Sql } from '../db/database.js';
import { enqueueCallback } from '../callbacks/outbox.js';
import { endHold, lockBalance } from '../ledger/ledger.js';
import type { Network } from '../shared/network.js';
import { madeUpTxId } from './made-up-tx-id.js';
import { toWithdrawal, WITHDRAWAL_COLUMNS, type WithdrawalRow, type WithdrawalStage } from './withdrawal-rows.js';

export type WithdrawalMove =
  /** awaiting_approval → queued: the operator approved it. */
  | { to: 'approved' }
  /** queued → sent: its payout's first transaction is signed (and about to be broadcast). */
  | { to: 'sent'; txId: string }
  /** sent → sent: another transaction of the same payout (a fee bump under the same nonce, a Tron rebuild). */
  | { to: 'resent'; txId: string }
  /** sent → queued: its transactions can never be mined (their nonce taken, or expired): to be paid anew. */
  | { to: 'requeued'; reason: string }
  /** sent → DONE: the chain confirmed its transfer, of its exact amount to its destination. */
  | { to: 'confirmed'; txId: string }
  /**
   * queued → DONE without a chain: the sandbox's settlement and helper, or the operator's word
   * (`withoutProof`, the only DONE of live mode, recorded on the withdrawal). Always with the
   * transaction that paid it: the merchant's guide says a DONE withdrawal carries its txId. Undefined:
   * the sandbox makes one up (madeUpTxId, as its own settlement does); anywhere else the move is refused.
   */
  | { to: 'DONE'; txId: string | undefined; withoutProof?: boolean }
  /** → FAILED before anything was sent: rejected by the operator, failed by the sandbox's helper. */
  | { to: 'FAILED'; reason: string }
  /** sent → FAILED: its transfer was mined and reverted, or can never be made; nothing left the platform. */
  | { to: 'reverted'; reason: string };

/** Why a move is refused, for its caller to say: the withdrawal is final, or not at the stage the move needs. */
export interface MoveRefused {
  refused: string;
  row: WithdrawalRow;
}

/**
 * The stages a move may start from (every move needs a PENDING withdrawal). Nothing fails a withdrawal
 * whose transaction is out but the chain itself: a rejection then could pay it and give its hold back.
 */
const FROM_STAGES: Record<WithdrawalMove['to'], readonly WithdrawalStage[]> = {
  approved: ['awaiting_approval'],
  sent: ['queued'],
  resent: ['sent'],
  requeued: ['sent'],
  confirmed: ['sent'],
  DONE: ['queued'],
  FAILED: ['awaiting_approval', 'queued'],
  reverted: ['sent'],
};

/** The stage after a move (null: final). */
const STAGE_AFTER: Record<WithdrawalMove['to'], WithdrawalStage | null> = {
  approved: 'queued',
  sent: 'sent',
  resent: 'sent',
  requeued: 'queued',
  confirmed: null,
  DONE: null,
  FAILED: null,
  reverted: null,
};

/** A withdrawal's row as a move reads it, under its lock: with its claim for hand payment. */
type LockedRow = WithdrawalRow & { claimed_at: Date | null };

/** A transaction that paid (or pays) another withdrawal cannot make this one DONE too: one transfer, one hold spent. */
async function usedTxRefusal(tx: Sql, uuid: string, txId: string): Promise<string | undefined> {
  const [used] = await tx.query(
    'SELECT 1 FROM withdrawals WHERE tx_id = $1 AND uuid <> $2 LIMIT 1',
    [txId, uuid],
  );
  return used ? `transaction ${txId} pays another withdrawal already` : undefined;
}

/** What is wrong with a transaction id on the network (the form its nodes write: lower-case hex, `0x` on Ethereum only), or undefined. */
export function txIdProblem(network: Network, txId: string): string | undefined {
  const shape = network === 'Ethereum' ? /^0x[0-9a-f]{64}$/ : /^[0-9a-f]{64}$/;
  return shape.test(txId) ? undefined : `${JSON.stringify(txId)} is no ${network} transaction id (${network === 'Ethereum' ? '0x + 64 hex' : '64 hex, no 0x'})`;
}

/**
 * Why a DONE move without the chain is refused: it names no transaction of the network, or, in live mode
 * (or when the caller does not say: the strict rule), it is not the operator's declared word: there DONE
 * is the chain's to say, by `confirmed` after the payout job checked the transaction.
 */
function doneRefusal(row: WithdrawalRow, move: Extract<WithdrawalMove, { to: 'DONE' }>, mode: 'sandbox' | 'live' | undefined): string | undefined {
  if (move.txId === undefined) return mode === 'sandbox' ? undefined : 'DONE carries the transaction that paid it, and none was named';
  const problem = txIdProblem(row.blockchain, move.txId);
  if (problem) return `DONE carries the transaction that paid it, and ${problem}`;
  if (mode !== 'sandbox' && move.withoutProof !== true) return 'in live mode it is DONE once the chain confirms its payment (record-tx), or on the operator\'s declared word (without proof)';
  return undefined;
}

/**
 * A withdrawal claimed for hand payment is the operator's to settle by its payment: its hold is never
 * released while claimed (the operator may have paid it already: FAILED would pay the merchant twice;
 * unclaim it first), and in live mode the operator's word alone makes DONE only a claimed one (else a
 * hot wallet may pay it meanwhile: record-tx's rule, here for every caller).
 */
function claimRefusal(row: LockedRow, move: WithdrawalMove, mode: 'sandbox' | 'live' | undefined): string | undefined {
  if (move.to === 'FAILED' && row.claimed_at !== null) return 'it is claimed for hand payment, and may be paid by hand already: unclaim it first (partner-api withdrawals unclaim)';
  if (move.to === 'DONE' && mode !== 'sandbox' && row.claimed_at === null) return 'a hot wallet may pay it meanwhile: claim it for hand payment first (partner-api withdrawals claim)';
  return undefined;
}

function refusal(row: LockedRow, move: WithdrawalMove, mode: 'sandbox' | 'live' | undefined): string | undefined {
  if (row.status !== 'PENDING') return `it is ${row.status}, which is final`;
  if (FROM_STAGES[move.to].includes(row.stage!)) return (move.to === 'DONE' ? doneRefusal(row, move, mode) : undefined) ?? claimRefusal(row, move, mode);
  if (row.stage === 'awaiting_approval') return "it awaits the operator's approval";
  if (row.stage === 'sent') return 'its transaction is out: the chain decides, wait for it';
  return `it is ${row.stage}, not ${move.to === 'approved' ? 'awaiting approval' : FROM_STAGES[move.to].join(' or ')}`;
}

/**
 * Moves the withdrawal (the merchant's, when `merchantId` is given) in the caller's transaction:
 * undefined when there is none, MoveRefused when the move does not apply to it, else the row after it.
 * The sandbox's settlement job sets nothing but `settleAfter` (approval in the sandbox schedules it).
 * `mode` says whether a DONE without the chain is the sandbox's; unsaid, it is held to live mode's rule.
 */
export async function moveWithdrawal(
  tx: Sql,
  uuid: string,
  move: WithdrawalMove,
  options: { merchantId?: string | undefined; settleAfterSeconds?: number | undefined; mode?: 'sandbox' | 'live' | undefined } = {},
): Promise<WithdrawalRow | MoveRefused | undefined> {
  const [row] = await tx.query<LockedRow>(
    `SELECT ${WITHDRAWAL_COLUMNS}, claimed_at FROM withdrawals WHERE uuid = $1 ${options.merchantId ? 'AND merchant_id = $2' : ''} FOR UPDATE`,
    options.merchantId ? [uuid, options.merchantId] : [uuid],
  );
  if (!row) return undefined;
  const refused = refusal(row, move, options.mode) ?? (move.to === 'DONE' && move.txId !== undefined ? await usedTxRefusal(tx, uuid, move.txId) : undefined);
  if (refused) return { refused, row };
  const stage = STAGE_AFTER[move.to];
  const status = stage !== null ? 'PENDING' : move.to === 'DONE' || move.to === 'confirmed' ? 'DONE' : 'FAILED';
  const txId = 'txId' in move ? (move.txId ?? madeUpTxId(row.blockchain)) : null;
  const [moved] = await tx.query<WithdrawalRow>(
    `UPDATE withdrawals SET status = $2, stage = $3, tx_id = CASE WHEN $7 THEN NULL ELSE coalesce($4, tx_id) END, failure_reason = $5, updated_at = now(),
            settle_after = CASE WHEN $6::int IS NULL THEN NULL ELSE now() + make_interval(secs => $6::int) END,
            settled_without_proof = $8, funds_awaited_since = NULL
      WHERE uuid = $1 RETURNING ${WITHDRAWAL_COLUMNS}`,
    [
      uuid, status, stage, txId,
      move.to === 'FAILED' || move.to === 'reverted' ? move.reason : null,
      move.to === 'approved' ? (options.settleAfterSeconds ?? null) : null,
      move.to === 'requeued',
      move.to === 'DONE' && move.withoutProof === true,
    ],
  );
  if (status !== 'PENDING') await endHold(tx, uuid, status === 'DONE' ? 'spend' : 'release');
  await enqueueCallback(tx, {
    merchantId: moved!.merchant_id,
    withdrawalUuid: uuid,
    url: moved!.callback_url,
    occurredAt: moved!.updated_at,
    event: status === 'DONE' ? 'withdrawal.done' : status === 'FAILED' ? 'withdrawal.failed' : 'withdrawal.updated',
    withdrawal: toWithdrawal(moved!),
  });
  return moved!;
}

/**
 * Fails a merchant's withdrawals on a network that are not sent yet, newest first, while its balance owes
 * (a reversal took more than was available, ledger/ledger.ts): their released holds pay what is owed, so
 * nothing is paid out of deposits the chain no longer holds. A sent one is the chain's to decide, and one
 * claimed for hand payment the operator's (paid by hand, not recorded yet, its hold released here would pay
 * the merchant twice). The rows failed.
 */
export async function failWhileOwed(tx: Sql, merchantId: string, network: Network, reason: string): Promise<WithdrawalRow[]> {
  const waiting = await tx.query<{ uuid: string }>(
    `SELECT uuid FROM withdrawals WHERE merchant_id = $1 AND blockchain = $2 AND status = 'PENDING' AND stage IN ('awaiting_approval', 'queued') AND claimed_at IS NULL ORDER BY created_at DESC, uuid DESC`,
    [merchantId, network],
  );
  const failed: WithdrawalRow[] = [];
  for (const { uuid } of waiting) {
    if ((await lockBalance(tx, merchantId, network)).owed === 0n) break;
    const moved = await moveWithdrawal(tx, uuid, { to: 'FAILED', reason });
    if (moved && !('refused' in moved)) failed.push(moved);
  }
  return failed;
}
