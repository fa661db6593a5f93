// Transfers seen before they are confirmed (issue 33): what the scanner sees to watched orders in
// blocks above the confirmed head, kept in a table of its own (migration 010), replaced at each scan
// and shown on the order's read as `unconfirmedDeposits`. Never part of receivedAmount: a transfer is
// credited (deposits.ts) only once its block is confirmed, and leaves this table in that transaction.
import type { Network } from '../shared/network.js';
import type { Sql } from '../db/database.js';
import { MAX_EXACT_INTEGER } from '../shared/exact-integer.js';
import type { Transfer } from './transfer.js';

/** The contract's bound on the list (DepositOrder.unconfirmedDeposits maxItems). */
const MAX_PER_ORDER = 100;

/**
 * Replaces a network's unconfirmed transfers after a scan whose confirmed range ended at `confirmedTo`:
 * with `seen` (transfers in blocks above it, to watched addresses), or, when the scan did not look
 * above it (catching up), by dropping only the rows it has now confirmed. Run in the scan's transaction.
 */
export async function replaceUnconfirmed(
  tx: Sql,
  network: Network,
  confirmedTo: bigint,
  seen: { transfers: readonly Transfer[]; latest: bigint; requiredConfirmations: number; at: Date } | undefined,
): Promise<void> {
  if (!seen) {
    await tx.query('DELETE FROM unconfirmed_deposits WHERE network = $1 AND block_number <= $2', [network, confirmedTo]);
    return;
  }
  await tx.query('DELETE FROM unconfirmed_deposits WHERE network = $1', [network]);
  for (const transfer of seen.transfers) {
    // An amount JSON cannot carry exactly is refused when credited (deposits.ts); not shown either.
    if (transfer.amount <= 0n || transfer.amount > MAX_EXACT_INTEGER || transfer.blockNumber <= confirmedTo) continue;
    const confirmations = Number(seen.latest - transfer.blockNumber + 1n);
    await tx.query(
      `INSERT INTO unconfirmed_deposits (network, order_uuid, tx_hash, log_index, block_number, block_hash, amount, confirmations, required_confirmations, seen_at)
       SELECT $1, uuid, $3, $4, $5, $6, $7, $8, $9, $10 FROM deposit_orders WHERE blockchain = $1 AND address = $2
       ON CONFLICT DO NOTHING`,
      [network, transfer.to, transfer.txHash, transfer.logIndex, transfer.blockNumber, transfer.blockHash ?? null, transfer.amount, Math.max(0, confirmations), seen.requiredConfirmations, seen.at],
    );
  }
}

/**
 * An order's unconfirmed transfers, oldest first, as the contract's UnconfirmedDeposit list, as JSON
 * text in JSON.stringify's shape (no spaces), in one column of a query whose deposit_orders row is `o`
 * (null when it has none): the read and the list write it as it is (order-rows.ts), the payer's page
 * parses it. Amounts are JSON numbers, exact: the table's check keeps them within what one carries
 * (migration 013); the hash is escaped by to_json, as JSON.stringify escapes (order-json.test.ts). The
 * table is empty but for the few blocks a transfer waits for confirmation, so the query looks it up once
 * (EXISTS, uncorrelated, runs once a statement) before it looks for each order's rows.
 */
export const UNCONFIRMED_JSON_SQL = `CASE WHEN EXISTS (SELECT 1 FROM unconfirmed_deposits) THEN (SELECT '[' || string_agg(concat(
     '{"txId":', to_json(u.tx_hash), ',"amount":', u.amount, ',"confirmations":', u.confirmations,
     ',"requiredConfirmations":', u.required_confirmations, '}'), ',' ORDER BY u.block_number, u.log_index) || ']'
   FROM (SELECT * FROM unconfirmed_deposits WHERE order_uuid = o.uuid ORDER BY block_number, log_index LIMIT ${MAX_PER_ORDER}) u) END`;

/** One element of that column, as the contract's UnconfirmedDeposit. */
export interface UnconfirmedJson {
  txId: string;
  amount: number;
  confirmations: number;
  requiredConfirmations: number;
}

/** The column parsed (the payer's page). */
export function unconfirmedJson(value: string | null): UnconfirmedJson[] {
  return (value === null ? [] : JSON.parse(value)) as UnconfirmedJson[];
}
