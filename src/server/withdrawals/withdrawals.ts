// Withdrawals: created by the operator (or the sandbox helper), read by merchants. The amount is
// stored as exact smallest units and becomes a JSON number of whole units only in the response.
import { randomUUID } from 'node:crypto';
import type { operations, Withdrawal } from '../../../generated/schema.js';
import type { Network } from '../addresses/derivation.js';
import { batchedOwnedReads, uuidInBatch } from '../db/batched-reads.js';
import { sqlState, type Database } from '../db/database.js';
import { equalTo, newestFirstPage, timeBound, type RowPosition } from '../db/pages.js';
import { unitsToWireNumber } from '../shared/money.js';
import { platformDateTime } from '../shared/time.js';

export type WithdrawalStatus = Withdrawal['status'];
const UNIQUE_VIOLATION = '23505';

/** A merchant's externalId names one withdrawal only. */
export class DuplicateWithdrawalError extends Error {
  constructor(readonly externalId: string) {
    super(`a withdrawal with externalId ${externalId} exists`);
  }
}

export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['PENDING', 'DONE', 'FAILED'];

interface WithdrawalRow {
  uuid: string;
  merchant_id: string;
  external_id: string;
  amount_units: bigint;
  blockchain: Network;
  currency_code: 'USDT';
  destination_address: string;
  status: WithdrawalStatus;
  created_at: Date;
}

function toWithdrawal(row: WithdrawalRow): Withdrawal {
  return {
    uuid: row.uuid,
    amount: unitsToWireNumber(row.amount_units),
    blockchain: row.blockchain,
    currencyCode: row.currency_code,
    destinationAddress: row.destination_address,
    status: row.status,
    createAt: platformDateTime(row.created_at),
    externalId: row.external_id,
  };
}

export interface NewWithdrawal {
  merchantId: string;
  externalId: string;
  amountUnits: bigint;
  blockchain: Network;
  /** The address paid to (the contract's destinationAddress; "destination" here is a callback's origin). */
  toAddress: string;
}

/** Statuses a withdrawal may move to: PENDING settles once, DONE and FAILED are final. */
export function canMoveTo(from: WithdrawalStatus, to: WithdrawalStatus): boolean {
  return from === 'PENDING' && to !== 'PENDING';
}

export type WithdrawalListFilters = Omit<NonNullable<operations['listWithdrawals']['parameters']['query']>, 'limit' | 'cursor'>;

export class Withdrawals {
  private readonly readOwned: (merchantId: string, uuid: string) => Promise<WithdrawalRow | undefined>;

  constructor(private readonly db: Database) {
    this.readOwned = batchedOwnedReads(db, `SELECT * FROM withdrawals WHERE ${uuidInBatch()}`);
  }

  /** Records a PENDING withdrawal; DuplicateWithdrawalError when the merchant already used the externalId. */
  async create(input: NewWithdrawal): Promise<Withdrawal> {
    try {
      const [row] = await this.db.query<WithdrawalRow>(
        `INSERT INTO withdrawals (uuid, merchant_id, external_id, amount_units, blockchain, currency_code, destination_address)
         VALUES ($1, $2, $3, $4, $5, 'USDT', $6) RETURNING *`,
        [randomUUID(), input.merchantId, input.externalId, input.amountUnits, input.blockchain, input.toAddress],
      );
      return toWithdrawal(row!);
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) throw new DuplicateWithdrawalError(input.externalId);
      throw error;
    }
  }

  async read(merchantId: string, uuid: string): Promise<Withdrawal | undefined> {
    const row = await this.readOwned(merchantId, uuid);
    return row && toWithdrawal(row);
  }

  /** A page of the merchant's withdrawals, newest first (db/pages.ts). */
  async list(merchantId: string, filters: WithdrawalListFilters, after: RowPosition | undefined, limit: number): Promise<{ withdrawals: Withdrawal[]; next: RowPosition | undefined }> {
    const page = await newestFirstPage<WithdrawalRow>(this.db, 'withdrawals', '*', {
      merchantId,
      filters: [
        ...equalTo('status', filters.status),
        ...equalTo('external_id', filters.externalId),
        ...timeBound('created_at', 'from', filters.createdFrom),
        ...timeBound('created_at', 'before', filters.createdBefore),
      ],
      after,
      limit,
    });
    return { withdrawals: page.rows.map(toWithdrawal), next: page.next };
  }

  /** Moves a withdrawal on; undefined when it does not exist, 'refused' when the move is not allowed. */
  async setStatus(uuid: string, status: WithdrawalStatus, merchantId?: string): Promise<Withdrawal | 'refused' | undefined> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<WithdrawalRow>(
        `SELECT * FROM withdrawals WHERE uuid = $1 ${merchantId ? 'AND merchant_id = $2' : ''} FOR UPDATE`,
        merchantId ? [uuid, merchantId] : [uuid],
      );
      if (!row) return undefined;
      if (row.status === status) return toWithdrawal(row);
      if (!canMoveTo(row.status, status)) return 'refused';
      const [updated] = await tx.query<WithdrawalRow>('UPDATE withdrawals SET status = $2 WHERE uuid = $1 RETURNING *', [uuid, status]);
      return toWithdrawal(updated!);
    });
  }
}
