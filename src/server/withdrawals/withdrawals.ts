// Withdrawals: asked for by merchants through the API, by the operator, or by the sandbox's helper
// (./requests.ts), moved on to DONE or FAILED (./settlement.ts), read and listed by merchants. Amounts
// are exact smallest units inside; the contract's JSON numbers of whole units are made at the edges.
import type { operations, Withdrawal } from '../../../generated/schema.js';
import { batchedOwnedReads, uuidInBatch } from '../db/batched-reads.js';
import type { Database } from '../db/database.js';
import { equalTo, newestFirstWalk, timeBound, type ListPage, type ListRequest } from '../db/pages.js';
import type { CursorCodec } from '../shared/cursors.js';
import { readTerms, requestWithdrawal, type RequestOutcome, type RequestSettings, type WithdrawalRequest, type WithdrawalTerms } from './requests.js';
import { moveWithdrawal, type MoveRefused, type WithdrawalMove } from './settlement.js';
import { toWithdrawal, WITHDRAWAL_COLUMNS, type WithdrawalRow } from './withdrawal-rows.js';

export type WithdrawalListFilters = Omit<NonNullable<operations['listWithdrawals']['parameters']['query']>, 'limit' | 'cursor'>;

export class Withdrawals {
  private readonly readOwned: (merchantId: string, uuid: string) => Promise<WithdrawalRow | undefined>;

  constructor(
    private readonly db: Database,
    private readonly settings: RequestSettings,
  ) {
    this.readOwned = batchedOwnedReads(db, `SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE ${uuidInBatch()}`);
  }

  /** Decides a request (requests.ts): created with its hold, the same one replayed, a conflict, or refused with nothing changed. */
  request(request: WithdrawalRequest): Promise<RequestOutcome> {
    return this.db.transaction((tx) => requestWithdrawal(tx, request, this.settings));
  }

  /** The terms a merchant's request meets now, per network (requests.ts readTerms). */
  terms(merchantId: string): Promise<WithdrawalTerms[]> {
    return readTerms(this.db, merchantId, this.settings);
  }

  /** Any merchant's withdrawal, as the database holds it (the operator's commands). */
  async row(uuid: string): Promise<WithdrawalRow | undefined> {
    const [row] = await this.db.query<WithdrawalRow>(`SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE uuid = $1`, [uuid]);
    return row;
  }

  async read(merchantId: string, uuid: string): Promise<Withdrawal | undefined> {
    const row = await this.readOwned(merchantId, uuid);
    return row && toWithdrawal(row);
  }

  /** A page of the merchant's withdrawals, newest first, as the API sends it, from the request's cursor (db/pages.ts). */
  async list(cursors: CursorCodec, request: ListRequest<WithdrawalListFilters>): Promise<ListPage<Withdrawal>> {
    const { filters } = request;
    const page = await newestFirstWalk<WithdrawalRow>(this.db, cursors, 'withdrawals', request, {
      table: 'withdrawals',
      columns: WITHDRAWAL_COLUMNS,
      filters: [
        ...equalTo('status', filters.status),
        ...equalTo('external_id', filters.externalId),
        ...timeBound('created_at', 'from', filters.createdFrom),
        ...timeBound('created_at', 'before', filters.createdBefore),
      ],
    });
    return { ...page, items: page.items.map(toWithdrawal) };
  }

  /**
   * Moves a withdrawal on (settlement.ts): the withdrawal after it, undefined when there is none (or it is
   * another merchant's, with `merchantId`), or why the move does not apply. An approval in the sandbox
   * schedules the settlement of a withdrawal asked for through the API.
   */
  async move(uuid: string, move: WithdrawalMove, merchantId?: string): Promise<Withdrawal | MoveRefused | undefined> {
    const settleAfterSeconds = this.settings.mode === 'sandbox' ? this.settings.sandboxWithdrawalSeconds : undefined;
    const row = await this.db.transaction((tx) => moveWithdrawal(tx, uuid, move, { merchantId, settleAfterSeconds, mode: this.settings.mode }));
    return row && 'refused' in row ? row : row && toWithdrawal(row);
  }
}
