// How a PENDING withdrawal moves on: approved (awaiting_approval → queued), sent (its chain transaction
// known: → sent), settled (DONE, its hold spent) or failed (FAILED, its hold released). Each move is one
// transaction with its ledger entry and its event (withdrawal.updated, .done, .failed) in the outbox, so
// a merchant hears of every change exactly as it committed. DONE and FAILED are final.
import type { Sql } from '../db/database.js';
import { enqueueCallback } from '../callbacks/outbox.js';
import { endHold } from '../ledger/ledger.js';
import { toWithdrawal, WITHDRAWAL_COLUMNS, type WithdrawalRow, type WithdrawalStage } from './withdrawal-rows.js';

export type WithdrawalMove =
  | { to: 'approved' }
  | { to: 'sent'; txId: string }
  | { to: 'DONE'; txId: string | undefined }
  | { to: 'FAILED'; reason: string };

/** Why a move is refused, for its caller to say: the withdrawal is final, or not at the stage the move needs. */
export interface MoveRefused {
  refused: string;
  row: WithdrawalRow;
}

/** The stages a move may start from (every move needs a PENDING withdrawal). */
const FROM_STAGES: Record<WithdrawalMove['to'], readonly WithdrawalStage[]> = {
  approved: ['awaiting_approval'],
  sent: ['queued', 'sent'],
  DONE: ['queued', 'sent'],
  FAILED: ['awaiting_approval', 'queued', 'sent'],
};

function refusal(row: WithdrawalRow, move: WithdrawalMove): string | undefined {
  if (row.status !== 'PENDING') return `it is ${row.status}, which is final`;
  if (FROM_STAGES[move.to].includes(row.stage!)) return undefined;
  return row.stage === 'awaiting_approval' ? 'it awaits the operator\'s approval' : `it is ${row.stage}, not awaiting approval`;
}

/**
 * Moves the withdrawal (the merchant's, when `merchantId` is given) in the caller's transaction:
 * undefined when there is none, MoveRefused when the move does not apply to it, else the row after it.
 * The sandbox's settlement job sets nothing but `settleAfter` (approval in the sandbox schedules it).
 */
export async function moveWithdrawal(
  tx: Sql,
  uuid: string,
  move: WithdrawalMove,
  options: { merchantId?: string | undefined; settleAfterSeconds?: number | undefined } = {},
): Promise<WithdrawalRow | MoveRefused | undefined> {
  const [row] = await tx.query<WithdrawalRow>(
    `SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE uuid = $1 ${options.merchantId ? 'AND merchant_id = $2' : ''} FOR UPDATE`,
    options.merchantId ? [uuid, options.merchantId] : [uuid],
  );
  if (!row) return undefined;
  const refused = refusal(row, move);
  if (refused) return { refused, row };
  const final = move.to === 'DONE' || move.to === 'FAILED';
  const [moved] = await tx.query<WithdrawalRow>(
    `UPDATE withdrawals SET status = $2, stage = $3, tx_id = coalesce($4, tx_id), failure_reason = $5, updated_at = now(),
            settle_after = CASE WHEN $6::int IS NULL THEN NULL ELSE now() + make_interval(secs => $6::int) END
      WHERE uuid = $1 RETURNING ${WITHDRAWAL_COLUMNS}`,
    [
      uuid,
      final ? move.to : 'PENDING',
      final ? null : move.to === 'approved' ? 'queued' : 'sent',
      'txId' in move ? (move.txId ?? null) : null,
      move.to === 'FAILED' ? move.reason : null,
      move.to === 'approved' ? (options.settleAfterSeconds ?? null) : null,
    ],
  );
  if (final) await endHold(tx, uuid, move.to === 'DONE' ? 'spend' : 'release');
  await enqueueCallback(tx, {
    merchantId: moved!.merchant_id,
    withdrawalUuid: uuid,
    url: moved!.callback_url,
    occurredAt: moved!.updated_at,
    event: move.to === 'DONE' ? 'withdrawal.done' : move.to === 'FAILED' ? 'withdrawal.failed' : 'withdrawal.updated',
    withdrawal: toWithdrawal(moved!),
  });
  return moved!;
}
