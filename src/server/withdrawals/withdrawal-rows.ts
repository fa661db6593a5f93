// A withdrawal's row as the database holds it and its representation in the contract: the one place that
// knows the withdrawals table's columns. Amounts are exact smallest units inside and become JSON numbers
// of whole units only here.
import type { Withdrawal } from '../../../generated/schema.js';
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

export const WITHDRAWAL_COLUMNS =
  'uuid, merchant_id, external_id, amount_units, fee_units, blockchain, currency_code, destination_address, status, stage, tx_id, failure_reason, callback_url, source, created_at, updated_at, settled_without_proof';

/** The withdrawal as its read, the lists and its callbacks show it (optional fields only when they have a value). */
export function toWithdrawal(row: WithdrawalRow): Withdrawal {
  return {
    uuid: row.uuid,
    amount: unitsToWireNumber(row.amount_units),
    blockchain: row.blockchain,
    currencyCode: row.currency_code,
    destinationAddress: row.destination_address,
    status: row.status,
    ...(row.stage === null ? {} : { stage: row.stage }),
    createAt: platformDateTime(row.created_at),
    externalId: row.external_id,
    fee: unitsToWireNumber(row.fee_units),
    ...(row.tx_id === null ? {} : { txId: row.tx_id }),
    ...(row.failure_reason === null ? {} : { failureReason: row.failure_reason }),
    ...(row.callback_url === null ? {} : { callbackUrl: row.callback_url }),
  };
}
