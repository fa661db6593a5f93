// The books (docs/design.md#balances-and-withdrawals): each merchant's balance per network and currency as append-only
// entries (migration 015). A credited deposit is booked in its crediting transaction, once per deposit;
// a withdrawal holds its amount plus fee when it is accepted, and the hold ends once, spent when the
// withdrawal is DONE or released when it FAILED; a deposit that a deep reorg removed is reversed once
// (migration 017: what the available balance does not cover is owed, paid by the next money in). The
// database applies each entry to the balance row in the same statement and refuses one that would take
// a balance below zero; `checkLedger` recomputes every balance from the entries.
import type { Balance } from '../../../generated/schema.js';
import type { Sql } from '../db/database.js';
import { toJsonInteger } from '../shared/money.js';
import { NETWORKS, type Network } from '../shared/network.js';

export type Currency = Balance['currency'];

/** One merchant's balance on one network, in smallest units. */
export interface BalanceAmounts {
  available: bigint;
  held: bigint;
  received: bigint;
  withdrawn: bigint;
  /** What reversals took beyond the available balance; deposits pay it first (0 unless a deposit was reversed). */
  owed: bigint;
}

/** Books a credited deposit: in the transaction that credits it (its deposit row's id makes it once). */
export async function bookDeposit(tx: Sql, deposit: { merchantId: string; network: Network; depositId: bigint | string; amount: bigint }): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, deposit_id) VALUES ($1, $2, 'USDT', 'deposit', $3, $4)`,
    [deposit.merchantId, deposit.network, deposit.amount, deposit.depositId],
  );
}

/**
 * Books a deposit's reversal (a deep reorg removed it): in the transaction that marks it reversed (its
 * id makes it once). The database takes it from the available balance and records the rest as owed.
 */
export async function bookReversal(tx: Sql, reversal: { merchantId: string; network: Network; depositId: bigint | string; amount: bigint }): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, reversed_deposit_id) VALUES ($1, $2, 'USDT', 'reversal', $3, $4)`,
    [reversal.merchantId, reversal.network, reversal.amount, reversal.depositId],
  );
}

/**
 * The merchant's balance on a network, its row locked until the transaction ends: the check of a hold
 * against it and the hold itself see the same balance (the CHECKs stand behind it).
 */
export async function lockBalance(tx: Sql, merchantId: string, network: Network): Promise<BalanceAmounts> {
  const [row] = await tx.query<BalanceAmounts>(
    `SELECT available, held, received, withdrawn, owed FROM balances WHERE merchant_id = $1 AND blockchain = $2 AND currency = 'USDT' FOR UPDATE`,
    [merchantId, network],
  );
  return row ?? { available: 0n, held: 0n, received: 0n, withdrawn: 0n, owed: 0n };
}

/** Holds a withdrawal's amount plus fee; the database refuses it (23514) when the balance is short. */
export async function holdForWithdrawal(tx: Sql, hold: { merchantId: string; network: Network; withdrawalUuid: string; amount: bigint }): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, withdrawal_uuid) VALUES ($1, $2, 'USDT', 'hold', $3, $4)`,
    [hold.merchantId, hold.network, hold.amount, hold.withdrawalUuid],
  );
}

/**
 * Ends a withdrawal's hold, for the hold's amount: `spend` (it is DONE) or `release` (it FAILED). A
 * withdrawal recorded before the books that they did not cover has no hold, and nothing to end.
 */
export async function endHold(tx: Sql, withdrawalUuid: string, kind: 'spend' | 'release'): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, withdrawal_uuid)
     SELECT merchant_id, blockchain, currency, $2, amount, withdrawal_uuid FROM ledger_entries WHERE withdrawal_uuid = $1 AND kind = 'hold'`,
    [withdrawalUuid, kind],
  );
}

/** A merchant's balance that reversals took below zero: what it owes on the network. */
export interface Owed {
  merchantId: string;
  owed: bigint;
}

/** The merchants who owe on a network (the operator's report after reversals). */
export async function owedBalances(sql: Sql, network: Network): Promise<Owed[]> {
  return sql.query<Owed>(`SELECT merchant_id AS "merchantId", owed FROM balances WHERE blockchain = $1 AND owed > 0 ORDER BY merchant_id`, [network]);
}

/** The merchant's balances as the contract shows them: one per network the platform serves, zeros included. */
export async function readBalances(sql: Sql, merchantId: string): Promise<Balance[]> {
  const rows = await sql.query<BalanceAmounts & { blockchain: Network }>(
    `SELECT blockchain, available, held, received, withdrawn, owed FROM balances WHERE merchant_id = $1 AND currency = 'USDT'`,
    [merchantId],
  );
  return NETWORKS.map((network) => {
    const row = rows.find((r) => r.blockchain === network);
    return {
      blockchain: network,
      currency: 'USDT',
      available: toJsonInteger(row?.available ?? 0n),
      held: toJsonInteger(row?.held ?? 0n),
      received: toJsonInteger(row?.received ?? 0n),
      withdrawn: toJsonInteger(row?.withdrawn ?? 0n),
      owed: toJsonInteger(row?.owed ?? 0n),
    };
  });
}

/** What the books say against what they should, each line an inconsistency; empty when they agree. */
export interface LedgerCheck {
  /** Balances checked (rows of `balances`, and entries' sums without one). */
  balances: number;
  /** Entries read. */
  entries: number;
  problems: string[];
  /** Withdrawals recorded before the books that the balance did not cover: outside the books, by design. */
  unbooked: string[];
}

/**
 * Recomputes every balance from the entries and compares it with its row (money in less money out is
 * what is available when it is positive, owed when it is negative); checks that every credited deposit is
 * booked once for its amount, reversed once for it if it was reversed and never otherwise, that every withdrawal accepted since the books holds its amount
 * plus fee, and that a hold ends as its withdrawal did (spent when DONE, released when FAILED, open while
 * PENDING). One pass over each table: the operator's `partner-api ledger check`, and the test suite's.
 */
export async function checkLedger(sql: Sql): Promise<LedgerCheck> {
  const mismatches = await sql.query<{ merchant_id: string; blockchain: string; currency: string; expected: string; actual: string }>(
    `WITH sums AS (
       SELECT merchant_id, blockchain, currency,
              coalesce(sum(amount) FILTER (WHERE kind = 'deposit'), 0) - coalesce(sum(amount) FILTER (WHERE kind = 'reversal'), 0) AS received,
              coalesce(sum(amount) FILTER (WHERE kind IN ('deposit', 'release')), 0) - coalesce(sum(amount) FILTER (WHERE kind IN ('hold', 'reversal')), 0) AS net,
              coalesce(sum(amount) FILTER (WHERE kind = 'hold'), 0) - coalesce(sum(amount) FILTER (WHERE kind IN ('spend', 'release')), 0) AS held,
              coalesce(sum(amount) FILTER (WHERE kind = 'spend'), 0) AS withdrawn
         FROM ledger_entries GROUP BY 1, 2, 3),
     expected AS (SELECT merchant_id, blockchain, currency, received, greatest(net, 0) AS available, held, withdrawn, greatest(-net, 0) AS owed FROM sums)
     SELECT coalesce(s.merchant_id, b.merchant_id) AS merchant_id, coalesce(s.blockchain, b.blockchain) AS blockchain, coalesce(s.currency, b.currency) AS currency,
            concat_ws(' ', coalesce(s.received, 0), s.available, s.held, s.withdrawn, s.owed) AS expected,
            concat_ws(' ', b.received, b.available, b.held, b.withdrawn, b.owed) AS actual
       FROM expected s FULL JOIN balances b USING (merchant_id, blockchain, currency)
      WHERE (coalesce(s.received, 0), coalesce(s.available, 0), coalesce(s.held, 0), coalesce(s.withdrawn, 0), coalesce(s.owed, 0))
            IS DISTINCT FROM (b.received, b.available, b.held, b.withdrawn, b.owed)`,
  );
  const problems = mismatches.map(
    (m) => `merchant ${m.merchant_id} ${m.blockchain} ${m.currency}: the entries sum to received/available/held/withdrawn/owed ${m.expected || '0 0 0 0 0'}, the balance says ${m.actual || 'nothing'}`,
  );
  const deposits = await sql.query<{ id: string; problem: string }>(
    `SELECT d.id::text AS id,
            CASE WHEN count(e.id) = 0 THEN 'not booked' WHEN count(e.id) > 1 THEN 'booked ' || count(e.id) || ' times'
                 WHEN min(e.amount) <> d.amount THEN 'booked for ' || min(e.amount) || ', credited ' || d.amount
                 WHEN (d.reversed_at IS NULL) <> (count(r.id) = 0) THEN CASE WHEN d.reversed_at IS NULL THEN 'reversed in the books, not on the deposit' ELSE 'reversed, not in the books' END
                 WHEN min(r.amount) <> d.amount THEN 'reversed for ' || min(r.amount) || ', credited ' || d.amount
                 ELSE 'booked for another merchant or network' END AS problem
       FROM deposits d JOIN deposit_orders o ON o.uuid = d.order_uuid LEFT JOIN ledger_entries e ON e.deposit_id = d.id
       LEFT JOIN ledger_entries r ON r.reversed_deposit_id = d.id
      GROUP BY d.id, d.amount, d.reversed_at, o.merchant_id, d.network
     HAVING count(e.id) <> 1 OR min(e.amount) <> d.amount OR bool_or(e.merchant_id <> o.merchant_id OR e.blockchain <> d.network)
         OR (d.reversed_at IS NULL) <> (count(r.id) = 0) OR min(r.amount) <> d.amount OR bool_or(r.merchant_id <> o.merchant_id OR r.blockchain <> d.network)`,
  );
  problems.push(...deposits.map((d) => `deposit ${d.id}: ${d.problem}`));
  const withdrawals = await sql.query<{ uuid: string; status: string; hold: bigint | null; settled: string | null; booked_since: boolean; expected: bigint }>(
    `SELECT w.uuid, w.status, h.amount AS hold, s.kind AS settled, w.created_at > m.applied_at AS booked_since,
            w.amount_units + w.fee_units AS expected
       FROM withdrawals w
       LEFT JOIN ledger_entries h ON h.withdrawal_uuid = w.uuid AND h.kind = 'hold'
       LEFT JOIN ledger_entries s ON s.withdrawal_uuid = w.uuid AND s.kind IN ('spend', 'release')
       CROSS JOIN (SELECT applied_at FROM schema_migrations WHERE version = '015_balances_and_withdrawal_requests') m
      WHERE h.id IS NULL AND w.status <> 'FAILED'
         OR h.id IS NOT NULL AND (h.amount <> w.amount_units + w.fee_units
                                  OR (w.status = 'PENDING') <> (s.kind IS NULL)
                                  OR (w.status = 'DONE') <> (s.kind IS NOT DISTINCT FROM 'spend')
                                  OR (w.status = 'FAILED') <> (s.kind IS NOT DISTINCT FROM 'release'))`,
  );
  const unbooked: string[] = [];
  for (const w of withdrawals) {
    if (w.hold === null && !w.booked_since) unbooked.push(w.uuid);
    else if (w.hold === null) problems.push(`withdrawal ${w.uuid} (${w.status}): accepted without a hold`);
    else if (w.hold !== w.expected) problems.push(`withdrawal ${w.uuid}: holds ${w.hold}, its amount and fee are ${w.expected}`);
    else problems.push(`withdrawal ${w.uuid} (${w.status}): its hold is ${w.settled ?? 'open'}`);
  }
  const [counts] = await sql.query<{ balances: number; entries: number }>(
    'SELECT (SELECT count(*)::int FROM balances) AS balances, (SELECT count(*)::int FROM ledger_entries) AS entries',
  );
  return { balances: counts!.balances, entries: counts!.entries, problems, unbooked };
}
