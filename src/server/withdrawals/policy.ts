// The operator's policy for a merchant's withdrawals through the API (`partner-api merchants
// set-withdrawals`): off until turned on in live mode, with optional limits, allowed destinations and an
// amount above which a withdrawal waits for the operator's approval. The sandbox lets every merchant
// withdraw; the limits the operator set apply there too.
import type { Sql } from '../db/database.js';

export interface WithdrawalPolicy {
  enabled: boolean;
  /** Smallest units; undefined: no limit. */
  maxAmount: bigint | undefined;
  /** The most a merchant's withdrawals (PENDING and DONE) may add up to in any 24 hours, in smallest units. */
  dailyLimit: bigint | undefined;
  /** A withdrawal of more than this waits for approval; undefined: none waits. */
  approveAbove: bigint | undefined;
  /** The only destinations allowed (as the platform writes addresses); empty: any. */
  allowedAddresses: string[];
}

/** What a merchant without a row has: nothing allowed through the API in live mode, no limit. */
export const NO_POLICY: WithdrawalPolicy = { enabled: false, maxAmount: undefined, dailyLimit: undefined, approveAbove: undefined, allowedAddresses: [] };

interface PolicyRow {
  enabled: boolean;
  max_amount: bigint | null;
  daily_limit: bigint | null;
  approve_above: bigint | null;
  allowed_addresses: string[];
}

const fromRow = (row: PolicyRow): WithdrawalPolicy => ({
  enabled: row.enabled,
  maxAmount: row.max_amount ?? undefined,
  dailyLimit: row.daily_limit ?? undefined,
  approveAbove: row.approve_above ?? undefined,
  allowedAddresses: row.allowed_addresses,
});

export async function readPolicy(sql: Sql, merchantId: string): Promise<WithdrawalPolicy> {
  const [row] = await sql.query<PolicyRow>('SELECT enabled, max_amount, daily_limit, approve_above, allowed_addresses FROM withdrawal_policies WHERE merchant_id = $1', [merchantId]);
  return row ? fromRow(row) : NO_POLICY;
}

/** A change: each given field replaces the policy's; `null` removes a limit. */
export type PolicyChange = Partial<{ enabled: boolean; maxAmount: bigint | null; dailyLimit: bigint | null; approveAbove: bigint | null; allowedAddresses: string[] }>;

/** Applies the change to the merchant's policy (made from NO_POLICY when it has none) and returns the result. */
export async function changePolicy(sql: Sql, merchantId: string, change: PolicyChange): Promise<WithdrawalPolicy> {
  const given = (value: unknown) => value !== undefined;
  const [row] = await sql.query<PolicyRow>(
    `INSERT INTO withdrawal_policies AS p (merchant_id, enabled, max_amount, daily_limit, approve_above, allowed_addresses)
     VALUES ($1, coalesce($2::boolean, false), $3::bigint, $4::bigint, $5::bigint, coalesce($6::text[], '{}'))
     ON CONFLICT (merchant_id) DO UPDATE SET
       enabled = CASE WHEN $7 THEN excluded.enabled ELSE p.enabled END,
       max_amount = CASE WHEN $8 THEN excluded.max_amount ELSE p.max_amount END,
       daily_limit = CASE WHEN $9 THEN excluded.daily_limit ELSE p.daily_limit END,
       approve_above = CASE WHEN $10 THEN excluded.approve_above ELSE p.approve_above END,
       allowed_addresses = CASE WHEN $11 THEN excluded.allowed_addresses ELSE p.allowed_addresses END,
       updated_at = now()
     RETURNING enabled, max_amount, daily_limit, approve_above, allowed_addresses`,
    [
      merchantId, change.enabled ?? null, change.maxAmount ?? null, change.dailyLimit ?? null, change.approveAbove ?? null, change.allowedAddresses ?? null,
      given(change.enabled), given(change.maxAmount), given(change.dailyLimit), given(change.approveAbove), given(change.allowedAddresses),
    ],
  );
  return fromRow(row!);
}
