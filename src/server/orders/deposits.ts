// Crediting deposits (docs/design.md#order-lifecycle; expiry is ./expiry.ts). One path for chain
// transfers and the sandbox helper: each transfer is credited exactly once (its identity: network + tx
// hash + order + log index in its block, see alreadyCredited), receivedAmount is the exact integer sum,
// and every credit books the merchant's balance (ledger/ledger.ts) and writes its callback to the outbox
// in the same transaction.
import type { Network } from '../shared/network.js';
import { enqueueCallback } from '../callbacks/outbox.js';
import { bookDeposit, bookReversal } from '../ledger/ledger.js';
import type { Sql } from '../db/database.js';
import { toJsonInteger } from '../shared/money.js';
import { ORDER_COLUMNS, toDepositOrder, type OrderRow, type OwnedOrderRow } from './order-rows.js';
import { MAX_EXACT_INTEGER } from '../shared/exact-integer.js';
import type { Transfer } from './transfer.js';

export interface Credit {
  orderUuid: string;
  amount: bigint;
  status: OrderRow['status'];
  receivedAmount: bigint;
}

/** A transfer to a watched order that is not credited, and why (the operator must look at it). */
export interface Refusal {
  transfer: Transfer;
  /** Its log credited before with another amount, or the order's total would pass what JSON carries. */
  kind: 'another_amount' | 'total_too_large';
  reason: string;
}

export interface CreditTimes {
  /** Wall-clock time: when the callbacks are due. */
  now: Date;
  /** The time the transfers happened (their block's), against which the watch window is judged. */
  at: Date;
  watchWindowSeconds: number;
  /** Credits an order whatever its watch window (an operator's rescan of one order). */
  anyTime?: boolean;
}

/** The largest amount or total that a JSON number carries exactly. */

/**
 * Credits the transfers to the orders whose addresses they paid (orders inside their watch window at
 * the transfers' time); a transfer credited before, or paying no watched order, is skipped. Run inside
 * the caller's transaction so that the credits commit together with whatever else it writes (the scan
 * position). A transfer that would take an order's total past what a JSON number carries exactly is
 * refused, not thrown: one such transfer must not stop a network's scanner.
 */
export async function creditTransfers(tx: Sql, transfers: readonly Transfer[], times: CreditTimes): Promise<{ credits: Credit[]; refusals: Refusal[] }> {
  const credits: Credit[] = [];
  const refusals: Refusal[] = [];
  const { now } = times;
  for (const transfer of transfers) {
    if (transfer.amount <= 0n) continue;
    // The order row is locked: concurrent credits to one order (two sandbox requests, a rescan beside
    // the scanner) take turns, so the total checked below is the total written, and the identity
    // check sees every deposit committed before.
    const [order] = await tx.query<{ uuid: string; received_amount: bigint }>(
      'SELECT uuid, received_amount FROM deposit_orders WHERE blockchain = $1 AND address = $2 AND expired_at > $3 FOR UPDATE',
      [transfer.network, transfer.to, times.anyTime ? new Date(0) : watchedSince(times.at, times.watchWindowSeconds)],
    );
    if (!order) continue;
    const credited = await alreadyCredited(tx, transfer, order.uuid);
    if (credited === 'another amount') {
      refusals.push({ transfer, kind: 'another_amount', reason: `log ${transfer.logIndex} of this transaction was credited before with another amount: the node's answers disagree` });
      continue;
    }
    if (credited) continue;
    if (order.received_amount + transfer.amount > MAX_EXACT_INTEGER) {
      refusals.push({ transfer, kind: 'total_too_large', reason: `the order's total would pass ${MAX_EXACT_INTEGER} smallest units` });
      continue;
    }
    const [inserted] = await tx.query<{ id: bigint }>(
      `INSERT INTO deposits (network, tx_hash, log_index, transfer_ordinal, block_number, block_hash, order_uuid, amount, source)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT DO NOTHING RETURNING id`,
      [transfer.network, transfer.txHash, transfer.logIndex, transfer.ordinal ?? 0, transfer.blockNumber, transfer.blockHash ?? null, order.uuid, transfer.amount, transfer.source],
    );
    if (!inserted) continue;
    // NEW or EXPIRED becomes DONE once the confirmed total reaches minAmount: a late payment is honoured.
    const [row] = await tx.query<OwnedOrderRow>(
      `UPDATE deposit_orders o
          SET received_amount = received_amount + $2,
              status = CASE WHEN received_amount + $2 >= min_amount THEN 'DONE' ELSE status END,
              updated_at = now()
        WHERE o.uuid = $1
        RETURNING o.merchant_id, ${ORDER_COLUMNS}`,
      [order.uuid, transfer.amount],
    );
    // The merchant's balance, in the same transaction: every credit is booked once (its deposit's id).
    await bookDeposit(tx, { merchantId: row!.merchant_id, network: transfer.network, depositId: inserted.id, amount: transfer.amount });
    await enqueueCallback(
      tx,
      {
        merchantId: row!.merchant_id,
        orderUuid: row!.uuid,
        url: row!.callback_url,
        occurredAt: transfer.blockTime ?? now,
        payload: { event: 'order.deposit', amount: toJsonInteger(transfer.amount), txId: transfer.txHash, ...toDepositOrder(row!) },
      },
    );
    credits.push({ orderUuid: row!.uuid, amount: transfer.amount, status: row!.status, receivedAmount: row!.received_amount });
  }
  return { credits, refusals };
}

/**
 * Whether this transfer to this order was credited before: the deposit of the same log (same log
 * index, from the same block, or one whose block is not recorded). A transaction re-mined in another
 * block after a reorg keeps its hash but its logs get new indexes: there a deposit of the replaced
 * block is the same transfer when it is the same n-th transfer of the transaction to the order, with
 * the same amount. A log index alone never stands in for another: a node that once omitted one of a
 * transaction's two transfers and later returns both gets the missing one credited, the other not again.
 * A reversed deposit (a deep reorg removed it) is no longer credited: found on the chain again, it is credited anew.
 */
async function alreadyCredited(tx: Sql, transfer: Transfer, orderUuid: string): Promise<boolean | 'another amount'> {
  const rows = await tx.query<{ log_index: number; block_hash: string | null; amount: bigint }>(
    'SELECT log_index, block_hash, amount FROM deposits WHERE network = $1 AND tx_hash = $2 AND order_uuid = $3 AND reversed_at IS NULL ORDER BY log_index',
    [transfer.network, transfer.txHash, orderUuid],
  );
  const hash = transfer.blockHash ?? null;
  const sameLog = rows.find((row) => row.log_index === transfer.logIndex && (row.block_hash === hash || row.block_hash === null || hash === null));
  if (sameLog) return sameLog.amount === transfer.amount ? true : 'another amount';
  const replaced = rows.filter((row) => row.block_hash !== null && hash !== null && row.block_hash !== hash);
  return replaced[transfer.ordinal ?? 0]?.amount === transfer.amount;
}

/** A block that deposits standing on the books were credited from. */
export interface CreditedBlock {
  number: bigint;
  hash: string;
}

/** The blocks that standing chain deposits were credited from, newest first (by number, then hash), after `after` in that order; `limit` of them. */
export async function creditedBlocks(sql: Sql, network: Network, after: CreditedBlock | undefined, limit: number): Promise<CreditedBlock[]> {
  return sql.query<CreditedBlock>(
    `SELECT DISTINCT block_number AS number, block_hash AS hash FROM deposits
      WHERE network = $1 AND block_hash IS NOT NULL AND source = 'chain' AND reversed_at IS NULL
        AND ($2::bigint IS NULL OR (block_number, block_hash) < ($2::bigint, $3::text))
      ORDER BY block_number DESC, block_hash DESC LIMIT $4`,
    [network, after?.number ?? null, after?.hash ?? null, limit],
  );
}

/** A standing deposit as the search for it on a new chain needs it: its transfer's identity and its order's address. */
export interface CreditedDeposit {
  id: bigint;
  orderUuid: string;
  address: string;
  txHash: string;
  ordinal: number;
  blockNumber: bigint;
  amount: bigint;
}

/** The standing chain deposits credited from these blocks (by hash). */
export async function depositsOfBlocks(sql: Sql, network: Network, blockHashes: readonly string[]): Promise<CreditedDeposit[]> {
  if (blockHashes.length === 0) return [];
  return sql.query<CreditedDeposit>(
    `SELECT d.id, d.order_uuid AS "orderUuid", o.address, d.tx_hash AS "txHash", d.transfer_ordinal AS ordinal, d.block_number AS "blockNumber", d.amount
       FROM deposits d JOIN deposit_orders o ON o.uuid = d.order_uuid
      WHERE d.network = $1 AND d.block_hash = ANY($2::text[]) AND d.source = 'chain' AND d.reversed_at IS NULL
      ORDER BY d.id`,
    [network, blockHashes],
  );
}

/** A deposit reversed: its order's received amount after the reversal. */
export interface Reversal {
  depositId: bigint;
  orderUuid: string;
  amount: bigint;
  receivedAmount: bigint;
}

/**
 * Reverses deposits that a deep reorg removed from the chain, in the caller's transaction, each once (a
 * deposit reversed before is skipped): the deposit is marked reversed (its row stays), its order's
 * receivedAmount no longer counts it, and the books take it back (ledger/ledger.ts: from the available
 * balance, the rest owed). The order's status stays as it was: DONE and EXPIRED are final.
 */
export async function reverseDeposits(tx: Sql, network: Network, depositIds: readonly bigint[], at: Date): Promise<Reversal[]> {
  const reversals: Reversal[] = [];
  for (const id of depositIds) {
    const [deposit] = await tx.query<{ order_uuid: string; amount: bigint }>(
      'UPDATE deposits SET reversed_at = $3 WHERE id = $1 AND network = $2 AND reversed_at IS NULL RETURNING order_uuid, amount',
      [id, network, at],
    );
    if (!deposit) continue;
    const [order] = await tx.query<{ merchant_id: string; received_amount: bigint }>(
      'UPDATE deposit_orders SET received_amount = received_amount - $2, updated_at = now() WHERE uuid = $1 RETURNING merchant_id, received_amount',
      [deposit.order_uuid, deposit.amount],
    );
    await bookReversal(tx, { merchantId: order!.merchant_id, network, depositId: id, amount: deposit.amount });
    reversals.push({ depositId: id, orderUuid: deposit.order_uuid, amount: deposit.amount, receivedAmount: order!.received_amount });
  }
  return reversals;
}

/** Addresses of a network's orders that are still watched (until expiredAt + the watch window). */
export async function watchedAddresses(sql: Sql, network: Network, now: Date, watchWindowSeconds: number): Promise<string[]> {
  const rows = await sql.query<{ address: string }>(
    'SELECT address FROM deposit_orders WHERE blockchain = $1 AND expired_at > $2',
    [network, watchedSince(now, watchWindowSeconds)],
  );
  return rows.map((r) => r.address);
}

/**
 * How many of a network's orders are watched at `now`, counted up to `limit` (the scanner only needs
 * to know whether they fit in one address-filtered query).
 */
export async function countWatched(sql: Sql, network: Network, now: Date, watchWindowSeconds: number, limit: number): Promise<number> {
  const [row] = await sql.query<{ n: bigint }>(
    'SELECT count(*)::bigint AS n FROM (SELECT 1 FROM deposit_orders WHERE blockchain = $1 AND expired_at > $2 LIMIT $3) w',
    [network, watchedSince(now, watchWindowSeconds), limit],
  );
  return Number(row!.n);
}

/** Which of these addresses are watched at `now` (a lookup by the recipients a scan found, on the (blockchain, address) index). */
export async function watchedAmong(sql: Sql, network: Network, addresses: readonly string[], now: Date, watchWindowSeconds: number): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await sql.query<{ address: string }>(
    'SELECT address FROM deposit_orders WHERE blockchain = $1 AND address = ANY($2::text[]) AND expired_at > $3',
    [network, addresses, watchedSince(now, watchWindowSeconds)],
  );
  return new Set(rows.map((r) => r.address));
}

/** Orders that expired after this moment are still watched. */
function watchedSince(now: Date, watchWindowSeconds: number): Date {
  return new Date(now.getTime() - watchWindowSeconds * 1000);
}
