// The payouts' rows (migration 016): each transaction of a withdrawal's payout, written with its signed
// bytes and hash before it is broadcast, in the same transaction that moves the withdrawal on; what the
// payout jobs read back (the transactions of the withdrawals whose payout is out) and mark. The
// withdrawals' own rows, queued or out, are read in ../withdrawals/payout-queue.ts.
import type { Database, Sql } from '../db/database.js';
import { NETWORKS, type Network } from '../shared/network.js';
import { moveWithdrawal } from '../withdrawals/settlement.js';
import { sentWithdrawals } from '../withdrawals/payout-queue.js';
import { claimedForHand } from '../withdrawals/hand-payment.js';
import type { WithdrawalRow } from '../withdrawals/withdrawal-rows.js';

export type PayoutTransactionState = 'pending' | 'mined' | 'dropped' | 'failed';

export interface PayoutTransaction {
  id: string;
  withdrawal_uuid: string;
  payer: 'hot_wallet' | 'operator';
  from_address: string | null;
  nonce: bigint | null;
  tx_hash: string;
  raw: string | null;
  /** Wei, as decimal text (numeric). */
  max_fee_per_gas: string | null;
  max_priority_fee_per_gas: string | null;
  expires_at: Date | null;
  state: PayoutTransactionState;
  created_at: Date;
  broadcast_at: Date | null;
  /** Seconds since it was written, by the database's clock (one clock for every instance). */
  age_seconds: number;
}

const TRANSACTION_COLUMNS =
  'id::text AS id, withdrawal_uuid, payer, from_address, nonce, tx_hash, raw, max_fee_per_gas::text AS max_fee_per_gas, max_priority_fee_per_gas::text AS max_priority_fee_per_gas, expires_at, state, created_at, broadcast_at, extract(epoch FROM now() - created_at)::float8 AS age_seconds';

/** A withdrawal whose payout is out, with every transaction of its payout (oldest first). */
export interface SentPayout {
  withdrawal: WithdrawalRow;
  transactions: PayoutTransaction[];
}

/** The network's withdrawals whose payout is out (stage `sent`), with their transactions. */
export async function sentPayouts(sql: Sql, network: Network): Promise<SentPayout[]> {
  const withdrawals = await sentWithdrawals(sql, network);
  if (withdrawals.length === 0) return [];
  const transactions = await sql.query<PayoutTransaction>(
    // By the number, not the text of `id` the columns give: as text, candidate 10 sorts before candidate 9.
    `SELECT ${TRANSACTION_COLUMNS} FROM payout_transactions WHERE withdrawal_uuid = ANY($1::uuid[]) ORDER BY payout_transactions.id`,
    [withdrawals.map((w) => w.uuid)],
  );
  return withdrawals.map((withdrawal) => ({ withdrawal, transactions: transactions.filter((t) => t.withdrawal_uuid === withdrawal.uuid) }));
}

export interface Intent {
  withdrawalUuid: string;
  network: Network;
  payer: 'hot_wallet' | 'operator';
  fromAddress: string | null;
  nonce: bigint | null;
  txHash: string;
  raw: string | null;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  expiresAt?: Date;
}

/**
 * Writes a payout's transaction before it is broadcast, and moves its withdrawal on, in the caller's
 * transaction (a payer's is fenced by its lease): `sent` for a payout's first (from `queued`), `resent`
 * for another of the same payout (from `sent`). Undefined when the withdrawal was not where the move
 * needs it (another payer took it, the operator moved it, or claimed it for hand payment: the row is
 * locked before the claim is read, so the operator's claim and this intent never both win):
 * then nothing is written, and the transaction must never be broadcast. The row written, to broadcast,
 * when it was.
 */
export async function recordIntent(tx: Sql, intent: Intent, move: 'sent' | 'resent'): Promise<PayoutTransaction | undefined> {
  if (intent.payer === 'hot_wallet' && (await claimedForHand(tx, intent.withdrawalUuid))) return undefined;
    const moved = await moveWithdrawal(tx, intent.withdrawalUuid, { to: move, txId: intent.txHash });
    if (!moved || 'refused' in moved) return undefined;
    const [written] = await tx.query<PayoutTransaction>(
      `INSERT INTO payout_transactions (withdrawal_uuid, network, payer, from_address, nonce, tx_hash, raw, max_fee_per_gas, max_priority_fee_per_gas, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${TRANSACTION_COLUMNS}`,
      [
        intent.withdrawalUuid, intent.network, intent.payer, intent.fromAddress, intent.nonce, intent.txHash, intent.raw,
        intent.maxFeePerGas?.toString() ?? null, intent.maxPriorityFeePerGas?.toString() ?? null, intent.expiresAt ?? null,
      ],
    );
    return written;
}

/**
 * The hot wallet's transactions of the network marked mined in block `from` or above: after a reorg deeper
 * than the rule of finality, the payer looks again whether each is still in the chain.
 */
export function minedSince(sql: Sql, network: Network, from: bigint): Promise<PayoutTransaction[]> {
  return sql.query<PayoutTransaction>(
    `SELECT ${TRANSACTION_COLUMNS} FROM payout_transactions WHERE network = $1 AND payer = 'hot_wallet' AND state = 'mined' AND block_number >= $2 ORDER BY nonce, payout_transactions.id`,
    [network, from],
  );
}

export async function markBroadcast(sql: Sql, id: string): Promise<void> {
  await sql.query('UPDATE payout_transactions SET broadcast_at = now() WHERE id = $1', [id]);
}

export async function markTransaction(sql: Sql, id: string, state: PayoutTransactionState, blockNumber?: bigint): Promise<void> {
  await sql.query('UPDATE payout_transactions SET state = $2, block_number = coalesce($3, block_number) WHERE id = $1', [id, state, blockNumber ?? null]);
}

/** The highest nonce the hot wallet's payouts hold (dropped ones aside), or undefined. */
export async function highestNonce(sql: Sql, fromAddress: string): Promise<bigint | undefined> {
  const [row] = await sql.query<{ nonce: bigint | null }>("SELECT max(nonce) AS nonce FROM payout_transactions WHERE from_address = $1 AND state <> 'dropped'", [fromAddress]);
  return row?.nonce ?? undefined;
}

/**
 * The operator's payment of a queued withdrawal, recorded: its transaction, which the network's payout
 * job then checks on chain as it checks its own (a confirmed transfer of the exact amount to the
 * destination, from any address). 'used' when another withdrawal's payout holds that transaction;
 * 'unclaimed' when `claimRequired` (the CLI's rule: a hot wallet pays the network) and the
 * withdrawal is not claimed for hand payment, read under the row's lock in the transaction that records it.
 */
export async function recordOperatorPayment(
  db: Database,
  withdrawal: { uuid: string; network: Network },
  txHash: string,
  { claimRequired = false }: { claimRequired?: boolean } = {},
): Promise<'recorded' | 'used' | 'refused' | 'unclaimed'> {
  const [used] = await db.query('SELECT 1 FROM payout_transactions WHERE tx_hash = $1', [txHash]);
  if (used) return 'used';
  const intent = { withdrawalUuid: withdrawal.uuid, network: withdrawal.network, payer: 'operator' as const, fromAddress: null, nonce: null, txHash, raw: null };
  return db.transaction(async (tx) => {
    if (claimRequired && !(await claimedForHand(tx, withdrawal.uuid))) return 'unclaimed';
    return (await recordIntent(tx, intent, 'sent')) ? 'recorded' : 'refused';
  });
}

/**
 * Since when each of these withdrawals' payouts is out: the oldest of its transactions that may still be
 * mined or is mined, and how many seconds ago by the database's clock (one clock for every instance).
 * Those of an earlier payout that can never be mined (requeued) say nothing of this one; a withdrawal
 * without such a transaction is absent.
 */
export async function payoutsOutSince(sql: Sql, withdrawalUuids: string[]): Promise<Map<string, { since: Date; seconds: number }>> {
  if (withdrawalUuids.length === 0) return new Map();
  const rows = await sql.query<{ withdrawal_uuid: string; since: Date; seconds: number }>(
    `SELECT withdrawal_uuid, min(created_at) AS since, extract(epoch FROM now() - min(created_at))::float8 AS seconds FROM payout_transactions
      WHERE withdrawal_uuid = ANY($1::uuid[]) AND state IN ('pending', 'mined') GROUP BY withdrawal_uuid`,
    [withdrawalUuids],
  );
  return new Map(rows.map((r) => [r.withdrawal_uuid, { since: r.since, seconds: r.seconds }]));
}

/**
 * Withdrawals whose payout is out (stage `sent`) with no transaction that may still be mined or is mined:
 * no round would follow them again, and their hold would never end. Every move that drops or fails a
 * payout's last live transaction moves its withdrawal in the same database transaction, so this list is
 * empty; `partner-api ledger check` reports any, for the operator.
 */
export async function inFlightWithoutLiveTransaction(sql: Sql): Promise<string[]> {
  const stuck: string[] = [];
  for (const network of NETWORKS) {
    const sent = await sentWithdrawals(sql, network);
    if (sent.length === 0) continue;
    const live = await sql.query<{ withdrawal_uuid: string }>(
      "SELECT DISTINCT withdrawal_uuid FROM payout_transactions WHERE withdrawal_uuid = ANY($1::uuid[]) AND state IN ('pending', 'mined')",
      [sent.map((w) => w.uuid)],
    );
    const followed = new Set(live.map((row) => row.withdrawal_uuid));
    stuck.push(...sent.filter((w) => !followed.has(w.uuid)).map((w) => w.uuid));
  }
  return stuck;
}
