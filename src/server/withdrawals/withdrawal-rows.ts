// A withdrawal's row as the database holds it and its representation in the contract: the one place that
// knows the withdrawals table's columns. Amounts are exact smallest units inside and become JSON numbers
// of whole units only here.
import type { Withdrawal } from '../../../generated/schema.js';
import { rowMapper, selectedColumns, type JsonField } from '../db/json-fields.js';
import type { Network } from '../shared/network.js';
import { unitsToWireNumber } from '../shared/money.js';
import { platformDateTime } from '../shared/time.js';

export type WithdrawalStatus = Withdrawal['status'];
export type WithdrawalStage = NonNullable<Withdrawal['stage']>;
/** Who asked for it: a merchant through the API, the operator's command, or the sandbox's helper. */
export type WithdrawalSource = 'api' | 'operator' | 'sandbox';

export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['PENDING', 'DONE', 'FAILED'];

export interface WithdrawalRow {
  uuid: string;
  merchant_id: string;
  external_id: string;
  amount_units: bigint;
  fee_units: bigint;
  blockchain: Network;
  currency_code: 'USDT';
  destination_address: string;
  status: WithdrawalStatus;
  /** Where a PENDING one stands; null once it is final. */
  stage: WithdrawalStage | null;
  tx_id: string | null;
  failure_reason: string | null;
  callback_url: string | null;
  source: WithdrawalSource;
  created_at: Date;
  /** When it last moved (by the database's clock): its events' occurredAt. */
  updated_at: Date;
  /** DONE by the operator's word without a chain's proof (set-status DONE --without-proof). */
  settled_without_proof: boolean;
}

/**
 * The withdrawal's fields, in the contract's order: the columns TypeScript reads and the withdrawal as its
 * read, the lists and its callbacks show it, made from this table (db/json-fields.ts); optional fields
 * only when they have a value. A new field is its line in the contract's YAML and one row here.
 */
export const WITHDRAWAL_FIELDS: readonly JsonField<WithdrawalRow>[] = [
  { name: 'uuid', column: 'uuid' },
  { name: 'amount', column: 'amount_units', wire: unitsToWireNumber },
  { name: 'blockchain', column: 'blockchain' },
  { name: 'currencyCode', column: 'currency_code' },
  { name: 'destinationAddress', column: 'destination_address' },
  { name: 'status', column: 'status' },
  { name: 'stage', column: 'stage', optional: true },
  { name: 'createAt', column: 'created_at', wire: platformDateTime },
  { name: 'externalId', column: 'external_id' },
  { name: 'fee', column: 'fee_units', wire: unitsToWireNumber },
  { name: 'txId', column: 'tx_id', optional: true },
  { name: 'failureReason', column: 'failure_reason', optional: true },
  { name: 'callbackUrl', column: 'callback_url', optional: true },
];

/** The columns of a WithdrawalRow: the fields' and what the platform alone reads. */
export const WITHDRAWAL_COLUMNS = `${selectedColumns(WITHDRAWAL_FIELDS)}, merchant_id, source, updated_at, settled_without_proof`;

const withdrawal = rowMapper(WITHDRAWAL_FIELDS);

/** The withdrawal as its read, the lists and its callbacks show it. */
export function toWithdrawal(row: WithdrawalRow): Withdrawal {
  return withdrawal(row) as Withdrawal;
}
