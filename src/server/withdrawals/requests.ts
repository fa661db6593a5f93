// A withdrawal asked for: by a merchant through the API, by the operator's command, or by the sandbox's
// helper. One path for all three: idempotent on (merchant, externalId), refused on a network halted after
// a deep reorg, checked against the address rules, the operator's policy (API and operator requests; the
// operator may override it with a reason) and the balance, and accepted with its amount plus
// fee held in the same transaction as its row (ledger/ledger.ts). A refusal changes nothing.
import { randomUUID } from 'node:crypto';
import { canonicalAddress, isAddress, payableAddressProblem } from '../addresses/derivation.js';
import type { NetworkConfig } from '../config.js';
import type { Sql } from '../db/database.js';
import { networkHalt } from '../chain/halt.js';
import { holdForWithdrawal, lockBalance } from '../ledger/ledger.js';
import { isDepositAddress } from '../orders/issued-addresses.js';
import { formatDecimalUnits } from '../shared/money.js';
import { NETWORKS, type Network } from '../shared/network.js';
import { readPolicy, type WithdrawalPolicy } from './policy.js';
import { WITHDRAWAL_COLUMNS, type WithdrawalRow, type WithdrawalSource, type WithdrawalStage } from './withdrawal-rows.js';

export interface WithdrawalRequest {
  merchantId: string;
  externalId: string;
  network: Network;
  currency: 'USDT';
  /** What the destination receives, smallest units. */
  amountUnits: bigint;
  /** The address paid to, as the caller wrote it (the contract's destinationAddress). */
  destinationAddress: string;
  callbackUrl: string | undefined;
  source: WithdrawalSource;
  /**
   * The operator's reason to create it past the merchant's policy (`withdrawals create --override-policy
   * --reason`), kept on the withdrawal; the operator's requests only.
   */
  policyOverrideReason?: string | undefined;
}

/** Why a withdrawal was refused: the contract's WithdrawalProblemCode, with what the merchant needs to act on it. */
export type Refusal =
  | { code: 'validation_failed'; errors: { pointer: string; detail: string }[] }
  | { code: 'insufficient_balance'; needed: bigint; available: bigint; fee: bigint }
  | { code: 'daily_limit_exceeded'; limit: bigint; left: bigint }
  | { code: 'withdrawals_disabled' }
  | { code: 'network_halted'; haltedAt: Date };

export type RequestOutcome =
  | { outcome: 'created' | 'replayed'; row: WithdrawalRow }
  | { outcome: 'conflict' }
  | { outcome: 'refused'; refusal: Refusal; byPolicy?: true };

export interface RequestSettings {
  mode: 'sandbox' | 'live';
  networks: Record<Network, Pick<NetworkConfig, 'withdrawalFee' | 'minWithdrawal'>>;
  sandboxWithdrawalSeconds: number;
}

/** The amount of the contract's largest withdrawal, 10^9 USDT, in smallest units. */
export const MAX_WITHDRAWAL_UNITS = 1_000_000_000n * 1_000_000n;

/** One merchant's withdrawal requests are decided one at a time (the daily limit spans its networks). */
const MERCHANT_LOCK = 'SELECT pg_advisory_xact_lock(7412046, hashtext($1::text))';

function sameRequest(row: WithdrawalRow, request: WithdrawalRequest): boolean {
  return (
    row.blockchain === request.network &&
    row.currency_code === request.currency &&
    row.amount_units === request.amountUnits &&
    row.destination_address === request.destinationAddress &&
    row.callback_url === (request.callbackUrl ?? null)
  );
}

/** The checks that need no database: the address and the amount against the network's minimum. */
function fieldErrors(request: WithdrawalRequest, settings: RequestSettings): { pointer: string; detail: string }[] {
  const errors: { pointer: string; detail: string }[] = [];
  const addressProblem = payableAddressProblem(request.network, request.destinationAddress);
  if (addressProblem) errors.push({ pointer: '/destinationAddress', detail: addressProblem });
  const minimum = settings.networks[request.network].minWithdrawal;
  if (request.amountUnits < minimum) errors.push({ pointer: '/amount', detail: `is under the ${request.network} minimum withdrawal of ${formatDecimalUnits(minimum)} USDT` });
  if (request.amountUnits > MAX_WITHDRAWAL_UNITS) errors.push({ pointer: '/amount', detail: `is over the largest withdrawal, ${formatDecimalUnits(MAX_WITHDRAWAL_UNITS)} USDT` });
  return errors;
}

/**
 * What is left of a daily limit: the limit less the amounts (fees not counted) of the merchant's PENDING
 * and DONE withdrawals created in the last 24 hours by the database's clock, on every network and from
 * every source (the limit spans networks); never below 0.
 */
async function dailyLeft(sql: Sql, merchantId: string, limit: bigint): Promise<bigint> {
  const [recent] = await sql.query<{ total: bigint }>(
    `SELECT coalesce(sum(amount_units), 0)::bigint AS total FROM withdrawals
      WHERE merchant_id = $1 AND status <> 'FAILED' AND created_at > now() - interval '24 hours'`,
    [merchantId],
  );
  return limit > recent!.total ? limit - recent!.total : 0n;
}

/**
 * The operator's policy for the merchant: what it refuses, else the stage the withdrawal starts in. Its
 * switch (live mode) and its approval are for requests through the API: the operator's own request is
 * its own approval. The largest amount and the destinations hold for each withdrawal on either network;
 * the daily limit counts the merchant's withdrawals on both networks together.
 */
async function policyVerdict(tx: Sql, request: WithdrawalRequest, policy: WithdrawalPolicy, settings: RequestSettings): Promise<Refusal | WithdrawalStage> {
  const api = request.source === 'api';
  if (api && settings.mode === 'live' && !policy.enabled) return { code: 'withdrawals_disabled' };
  const errors: { pointer: string; detail: string }[] = [];
  if (policy.maxAmount !== undefined && request.amountUnits > policy.maxAmount) {
    errors.push({ pointer: '/amount', detail: `is over your largest withdrawal, ${formatDecimalUnits(policy.maxAmount)} USDT` });
  }
  if (policy.allowedAddresses.length > 0 && !policy.allowedAddresses.includes(canonicalAddress(request.network, request.destinationAddress))) {
    errors.push({ pointer: '/destinationAddress', detail: 'is not one of the destinations the operator allowed for your withdrawals' });
  }
  if (errors.length > 0) return { code: 'validation_failed', errors };
  if (policy.dailyLimit !== undefined) {
    const left = await dailyLeft(tx, request.merchantId, policy.dailyLimit);
    if (request.amountUnits > left) return { code: 'daily_limit_exceeded', limit: policy.dailyLimit, left };
  }
  return api && policy.approveAbove !== undefined && request.amountUnits > policy.approveAbove ? 'awaiting_approval' : 'queued';
}

/**
 * Decides a withdrawal request in the caller's transaction. The same externalId again is answered
 * before any other check (a replay of an accepted request is the same withdrawal, whatever the balance
 * says now); then the network's halt, the addresses, the policy (not the sandbox helper's), the balance; then the row
 * and its hold.
 */
export async function requestWithdrawal(tx: Sql, request: WithdrawalRequest, settings: RequestSettings): Promise<RequestOutcome> {
  const errors = fieldErrors(request, settings);
  if (errors.length > 0) return { outcome: 'refused', refusal: { code: 'validation_failed', errors } };
  await tx.query(MERCHANT_LOCK, [request.merchantId]);
  const [existing] = await tx.query<WithdrawalRow>(`SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE merchant_id = $1 AND external_id = $2`, [request.merchantId, request.externalId]);
  if (existing) return sameRequest(existing, request) ? { outcome: 'replayed', row: existing } : { outcome: 'conflict' };
  // A halted network's balances may hold deposits the reorg removed: nothing is taken out until it is resumed.
  const halted = await networkHalt(tx, request.network);
  if (halted) return { outcome: 'refused', refusal: { code: 'network_halted', haltedAt: halted.haltedAt } };
  if (await isDepositAddress(tx, request.network, canonicalAddress(request.network, request.destinationAddress))) {
    return { outcome: 'refused', refusal: { code: 'validation_failed', errors: [{ pointer: '/destinationAddress', detail: "is one of the platform's own deposit addresses" }] } };
  }
  let stage: WithdrawalStage = 'queued';
  // The sandbox's helper is held to no policy; the operator's request is, unless it overrides it with a reason.
  if (request.source === 'api' || (request.source === 'operator' && request.policyOverrideReason === undefined)) {
    const verdict = await policyVerdict(tx, request, await readPolicy(tx, request.merchantId), settings);
    if (typeof verdict === 'object') return { outcome: 'refused', refusal: verdict, byPolicy: true };
    stage = verdict;
  }
  const fee = settings.networks[request.network].withdrawalFee;
  const needed = request.amountUnits + fee;
  const balance = await lockBalance(tx, request.merchantId, request.network);
  if (balance.available < needed) return { outcome: 'refused', refusal: { code: 'insufficient_balance', needed, available: balance.available, fee } };
  // A sandbox API withdrawal settles by itself once it is queued (sandbox-settlement.ts): no hot wallet pays in a sandbox (config.ts).
  const settles = settings.mode === 'sandbox' && request.source === 'api' && stage === 'queued';
  const [row] = await tx.query<WithdrawalRow>(
    `INSERT INTO withdrawals (uuid, merchant_id, external_id, amount_units, fee_units, blockchain, currency_code, destination_address, callback_url, stage, source, settle_after, policy_override_reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $12 THEN now() + make_interval(secs => $13) END, $14)
     RETURNING ${WITHDRAWAL_COLUMNS}`,
    [
      randomUUID(), request.merchantId, request.externalId, request.amountUnits, fee, request.network, request.currency, request.destinationAddress,
      request.callbackUrl ?? null, stage, request.source, settles, settings.sandboxWithdrawalSeconds,
      request.source === 'operator' ? (request.policyOverrideReason ?? null) : null,
    ],
  );
  await holdForWithdrawal(tx, { merchantId: request.merchantId, network: request.network, withdrawalUuid: row!.uuid, amount: needed });
  return { outcome: 'created', row: row! };
}

/** What a merchant's withdrawal on one network must meet now (the contract's WithdrawalTerms), in smallest units; undefined: no limit. */
export interface WithdrawalTerms {
  network: Network;
  currency: 'USDT';
  enabled: boolean;
  fee: bigint;
  minimum: bigint;
  maximum: bigint | undefined;
  dailyLimit: bigint | undefined;
  dailyLeft: bigint | undefined;
  approveAbove: bigint | undefined;
  /** The allowed destinations of this network; empty: any. */
  allowedAddresses: string[];
}

/**
 * The terms the checks above apply to a merchant's API request, per network, read without deciding
 * anything: fieldErrors' minimum, policyVerdict's policy and daily limit, the fee the hold takes. A
 * network whose addresses the allowed destinations name none of takes no withdrawal (policyVerdict
 * refuses every destination there), so it is not enabled, rather than shown with an empty list that
 * reads as "any".
 */
export async function readTerms(sql: Sql, merchantId: string, settings: RequestSettings): Promise<WithdrawalTerms[]> {
  const policy = await readPolicy(sql, merchantId);
  const left = policy.dailyLimit === undefined ? undefined : await dailyLeft(sql, merchantId, policy.dailyLimit);
  const allowed = settings.mode === 'sandbox' || policy.enabled;
  return NETWORKS.map((network) => {
    const allowedAddresses = policy.allowedAddresses.filter((address) => isAddress(network, address));
    const restricted = policy.allowedAddresses.length > 0;
    return {
      network,
      currency: 'USDT',
      enabled: allowed && (!restricted || allowedAddresses.length > 0),
      fee: settings.networks[network].withdrawalFee,
      minimum: settings.networks[network].minWithdrawal,
      maximum: policy.maxAmount,
      dailyLimit: policy.dailyLimit,
      dailyLeft: left,
      approveAbove: policy.approveAbove,
      allowedAddresses,
    };
  });
}
