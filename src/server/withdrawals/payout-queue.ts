// The withdrawals as the payers and the operator see them (issue 47): those queued to pay, those whose
// payout is out, those waiting for the hot wallet's funds, and those settled on the operator's word. The
// payout transactions themselves are the payouts' (../payouts/payout-store.ts).
import type { Sql } from '../db/database.js';
import type { Network } from '../shared/network.js';
import { WITHDRAWAL_COLUMNS, type WithdrawalRow } from './withdrawal-rows.js';

/** The network's withdrawals waiting for its payer, oldest first: those claimed for hand payment are the operator's (hand-payment.ts). */
export function queuedWithdrawals(sql: Sql, network: Network, limit: number): Promise<(WithdrawalRow & { funds_awaited_since: Date | null })[]> {
  return sql.query(
    `SELECT ${WITHDRAWAL_COLUMNS}, funds_awaited_since FROM withdrawals WHERE status = 'PENDING' AND stage = 'queued' AND blockchain = $1 AND claimed_at IS NULL
      ORDER BY created_at, uuid LIMIT ${Math.trunc(limit)}`,
    [network],
  );
}

/** The network's withdrawals whose payout is out (stage `sent`), oldest first. */
export function sentWithdrawals(sql: Sql, network: Network): Promise<WithdrawalRow[]> {
  return sql.query<WithdrawalRow>(`SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE status = 'PENDING' AND stage = 'sent' AND blockchain = $1 ORDER BY created_at, uuid`, [network]);
}

/**
 * Marks a queued withdrawal as waiting for the hot wallet's funds; for how many hours it has waited (the
 * database's clock). One claimed for hand payment meanwhile waits for no wallet: 0, so the payer never fails it.
 */
export async function awaitFunds(sql: Sql, uuid: string): Promise<number> {
  const [row] = await sql.query<{ hours: number }>(
    `UPDATE withdrawals SET funds_awaited_since = coalesce(funds_awaited_since, now()) WHERE uuid = $1 AND stage = 'queued' AND claimed_at IS NULL
     RETURNING extract(epoch FROM now() - funds_awaited_since)::float8 / 3600 AS hours`,
    [uuid],
  );
  return row?.hours ?? 0;
}

/** How many of the network's withdrawals are queued (waiting for funds among them) and in flight: the payouts' gauge. */
export async function payoutCounts(sql: Sql, network: Network): Promise<{ queued: number; waiting_for_funds: number; in_flight: number }> {
  const [row] = await sql.query<{ queued: number; waiting_for_funds: number; in_flight: number }>(
    `SELECT count(*) FILTER (WHERE stage = 'queued')::int AS queued, count(*) FILTER (WHERE funds_awaited_since IS NOT NULL)::int AS waiting_for_funds,
            count(*) FILTER (WHERE stage = 'sent')::int AS in_flight
       FROM withdrawals WHERE status = 'PENDING' AND blockchain = $1`,
    [network],
  );
  return row!;
}

/** Each network's queued withdrawals that wait for the hot wallet's funds (readiness says so). */
export async function waitingForFunds(sql: Sql): Promise<Partial<Record<Network, number>>> {
  const rows = await sql.query<{ blockchain: Network; n: number }>(
    "SELECT blockchain, count(*)::int AS n FROM withdrawals WHERE status = 'PENDING' AND funds_awaited_since IS NOT NULL GROUP BY blockchain",
  );
  return Object.fromEntries(rows.map((r) => [r.blockchain, r.n]));
}

/** The withdrawals DONE on the operator's word alone (set-status DONE --without-proof): `ledger check` shows them. */
export async function settledWithoutProof(sql: Sql): Promise<string[]> {
  return (await sql.query<{ uuid: string }>('SELECT uuid FROM withdrawals WHERE settled_without_proof ORDER BY updated_at')).map((r) => r.uuid);
}
