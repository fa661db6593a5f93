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
  reserved_at: Date | null;
  /** When its payout's oldest transaction that may still be mined was written; null unless it is out. */
  sent_at: Date | null;
  /** How long ago that was, in seconds, by the database's clock. */
  sent_seconds: number | null;
  policy_override_reason: string | null;
  settled_without_proof: boolean;
}

const LISTED_COLUMNS = `w.uuid, w.blockchain AS network, w.destination_address, w.amount_units AS amount, w.fee_units AS fee, w.merchant_id, w.external_id,
  w.created_at, w.status, w.stage, w.tx_id, w.failure_reason, w.funds_awaited_since, w.reserved_at, s.sent_at,
  extract(epoch FROM now() - s.sent_at)::float8 AS sent_seconds, w.policy_override_reason, w.settled_without_proof`;

// The payout's live transactions only: those of an earlier payout that can never be mined (requeued) say nothing of this one.
const SENT_AT = `LEFT JOIN LATERAL (SELECT min(p.created_at) AS sent_at FROM payout_transactions p
  WHERE p.withdrawal_uuid = w.uuid AND p.state IN ('pending', 'mined') AND w.stage = 'sent') s ON true`;

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
    `SELECT ${LISTED_COLUMNS} FROM withdrawals w ${SENT_AT}
      WHERE ($1::text IS NULL OR w.stage = $1) AND ($2::text IS NULL OR w.status = $2) AND ($3::uuid IS NULL OR w.merchant_id = $3)
        AND ($4::text IS NULL OR w.blockchain = $4)
      ORDER BY w.created_at DESC, w.uuid DESC LIMIT ${Math.trunc(filters.limit)}`,
    [filters.stage ?? null, filters.status ?? null, filters.merchantId ?? null, filters.network ?? null],
  );
}

/**
 * What a PENDING withdrawal awaits from a person: `approval` (approve or reject it); `payment` (no hot
 * wallet pays its network: pay it by hand and record it); `funds` (the hot wallet does not cover it: top
 * it up, or reserve it and pay it by hand); `hand_payment` (reserved: pay it and record it, or give it
 * back); `confirmation` (its payout has been out longer than the operator's threshold: look at the node
 * and the fees). Undefined: nothing, the platform carries it on.
 */
export type Awaits = 'approval' | 'payment' | 'funds' | 'hand_payment' | 'confirmation';

export interface PendingSettings {
  network: Network | undefined;
  /** Whether a hot wallet pays the network (its key file is set). */
  hotWallet: Record<Network, boolean>;
  /** A payout out longer than this awaits a look. */
  inFlightSeconds: number;
}

export function awaits(row: ListedWithdrawal, settings: PendingSettings): Awaits | undefined {
  if (row.stage === 'awaiting_approval') return 'approval';
  if (row.stage === 'sent') return row.sent_seconds === null || row.sent_seconds > settings.inFlightSeconds ? 'confirmation' : undefined;
  if (row.reserved_at !== null) return 'hand_payment';
  if (row.funds_awaited_since !== null) return 'funds';
  return settings.hotWallet[row.network] ? undefined : 'payment';
}

/** The PENDING withdrawals a person must act on, oldest first, each with what it awaits. */
export async function awaitingAPerson(sql: Sql, settings: PendingSettings): Promise<(ListedWithdrawal & { awaits: Awaits })[]> {
  const rows = await sql.query<ListedWithdrawal>(
    `SELECT ${LISTED_COLUMNS} FROM withdrawals w ${SENT_AT}
      WHERE w.status = 'PENDING' AND ($1::text IS NULL OR w.blockchain = $1) ORDER BY w.created_at, w.uuid`,
    [settings.network ?? null],
  );
  return rows.flatMap((row) => {
    const what = awaits(row, settings);
    return what ? [{ ...row, awaits: what }] : [];
  });
}
