// The withdrawals as the operator lists them (issue 54, item 1): `withdrawals list`, any of them by
// stage, merchant and network; `withdrawals pending`, the PENDING ones a person must act on, each with
// what awaits. Times are the database's, one clock for every instance.
import type { Sql } from '../db/database.js';
import type { Network } from '../shared/network.js';
import type { WithdrawalStage, WithdrawalStatus } from './withdrawal-rows.js';

/** A withdrawal as the operator's lists show it. */
export interface ListedWithdrawal {
  uuid: string;
  network: Network;
  destination_address: string;
  /** Smallest units. */
  amount: bigint;
  fee: bigint;
  merchant_id: string;
  external_id: string;
  created_at: Date;
  status: WithdrawalStatus;
  stage: WithdrawalStage | null;
  tx_id: string | null;
  failure_reason: string | null;
  /** Since when the hot wallet could not cover it, if it tried. */
  funds_awaited_since: Date | null;
  /** Since when the operator holds it to pay by hand (hand-payment.ts); the merchant reads `queued`. */
  claimed_at: Date | null;
  policy_override_reason: string | null;
  settled_without_proof: boolean;
}

const LISTED_COLUMNS = `uuid, blockchain AS network, destination_address, amount_units AS amount, fee_units AS fee, merchant_id, external_id,
  created_at, status, stage, tx_id, failure_reason, funds_awaited_since, claimed_at, policy_override_reason, settled_without_proof`;

/** What `withdrawals list` filters by; each absent filter keeps every withdrawal. */
export interface ListFilters {
  stage?: WithdrawalStage | undefined;
  status?: WithdrawalStatus | undefined;
  merchantId?: string | undefined;
  network?: Network | undefined;
  limit: number;
}

/** The withdrawals the filters keep, newest first, at most `limit`. */
export function listWithdrawals(sql: Sql, filters: ListFilters): Promise<ListedWithdrawal[]> {
  return sql.query<ListedWithdrawal>(
    `SELECT ${LISTED_COLUMNS} FROM withdrawals
      WHERE ($1::text IS NULL OR stage = $1) AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR merchant_id = $3)
        AND ($4::text IS NULL OR blockchain = $4)
      ORDER BY created_at DESC, uuid DESC LIMIT ${Math.trunc(filters.limit)}`,
    [filters.stage ?? null, filters.status ?? null, filters.merchantId ?? null, filters.network ?? null],
  );
}

/**
 * What a PENDING withdrawal awaits from a person: `approval` (approve or reject it); `payment` (no hot
 * wallet pays its network: pay it by hand and record it); `funds` (the hot wallet does not cover it: top
 * it up, or claim it and pay it by hand); `hand_payment` (claimed: pay it and record it, or give it
 * back); `confirmation` (its payout has been out longer than the operator's threshold: look at the node
 * and the fees). Undefined: nothing, the platform carries it on.
 */
export type Awaits = 'approval' | 'payment' | 'funds' | 'hand_payment' | 'confirmation';

export interface PendingSettings {
  /** Whether a hot wallet pays the network (its key file is set). */
  hotWallet: Record<Network, boolean>;
  /** A payout out longer than this awaits a look. */
  inFlightSeconds: number;
}

/**
 * What the withdrawal awaits; `outSeconds`, for one that is `sent`, how long its payout has been out
 * (payouts/payout-store.ts, payoutsOutSince; undefined: no transaction of it may still be mined).
 */
export function awaits(row: ListedWithdrawal, outSeconds: number | undefined, settings: PendingSettings): Awaits | undefined {
  if (row.stage === 'awaiting_approval') return 'approval';
  if (row.stage === 'sent') return outSeconds === undefined || outSeconds > settings.inFlightSeconds ? 'confirmation' : undefined;
  if (row.claimed_at !== null) return 'hand_payment';
  if (row.funds_awaited_since !== null) return 'funds';
  return settings.hotWallet[row.network] ? undefined : 'payment';
}

/** The PENDING withdrawals (of one network, or both), oldest first: what `awaits` sorts. */
export function pendingWithdrawals(sql: Sql, network: Network | undefined): Promise<ListedWithdrawal[]> {
  return sql.query<ListedWithdrawal>(
    `SELECT ${LISTED_COLUMNS} FROM withdrawals WHERE status = 'PENDING' AND ($1::text IS NULL OR blockchain = $1) ORDER BY created_at, uuid`,
    [network ?? null],
  );
}
