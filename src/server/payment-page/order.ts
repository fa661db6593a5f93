// What the payment page may show of an order, read by its uuid alone once the link's token has checked:
// no customer, externalId or callback URL is even selected; of the merchant only the display name that
// the operator set for payers.
import type { Network } from '../shared/network.js';
import { batchedReads } from '../db/batched-reads.js';
import type { Database } from '../db/database.js';
import { READ_PAGE_ORDERS_SQL, type OrderRow } from '../orders/order-rows.js';
import { unconfirmedJson } from '../orders/unconfirmed.js';

/** A credited deposit as the page lists it. */
export interface PagePayment {
  /** As the network writes it (0x-hex on Ethereum, bare hex on Tron); made up for a sandbox deposit. */
  txId: string;
  amount: bigint;
  /** When the platform credited it, epoch milliseconds. */
  at: number;
  /** A sandbox deposit: no chain transaction to link to. */
  simulated: boolean;
}

/** A transfer the chain shows but has not confirmed yet (the order read's unconfirmedDeposits). */
export interface PageUnconfirmed {
  txId: string;
  amount: bigint;
  confirmations: number;
  requiredConfirmations: number;
}

export interface PageOrder {
  uuid: string;
  blockchain: Network;
  address: string;
  addressQr: string;
  status: OrderRow['status'];
  minAmount: bigint;
  receivedAmount: bigint;
  /** expiredAt as epoch milliseconds (the API's expiredAt, to the second). */
  expiresAt: number;
  returnUrl: string | null;
  /** The merchant's display name for payers, or null: the page then names no one. */
  merchantName: string | null;
  /** The order's description from the create request, or null. */
  description: string | null;
  /** The credited deposits, oldest first: the last PAGE_DEPOSITS of them. */
  payments: PagePayment[];
  /** How many deposits were credited in all (payments may hold only the last of them). */
  paymentCount: number;
  /**
   * Transfers seen on the chain, not yet confirmed. Absent until the chain watch (issue 33) records
   * them: the query that fills it goes in pageOrderReader below, at the merge.
   */
  unconfirmed?: PageUnconfirmed[];
}

/** The four things a payer can be told; a NEW order past expiredAt is already over for the payer. */
export type PageState = 'waiting' | 'partial' | 'done' | 'expired';

export function pageState(order: PageOrder, now: number): PageState {
  if (order.status === 'DONE') return 'done';
  if (order.status === 'EXPIRED' || now >= order.expiresAt) return 'expired';
  return order.receivedAmount > 0n ? 'partial' : 'waiting';
}

type Row = Pick<OrderRow, 'uuid' | 'blockchain' | 'address' | 'address_qr' | 'status' | 'min_amount' | 'received_amount' | 'return_url' | 'description'> & {
  expired_at: string;
  display_name: string | null;
  deposits: { txId: string; amount: string; simulated: boolean; at: string }[] | string | null;
  deposit_count: number;
  unconfirmed: string | null;
};

/** json comes parsed from both drivers; text is taken too, should a driver leave it as such. */
function jsonList<T>(value: T[] | string | null): T[] {
  return (typeof value === 'string' ? JSON.parse(value) : value ?? []) as T[];
}

/** Reads for pages, coalesced like the merchants' reads (many open pages poll at once). */
export function pageOrderReader(db: Database): (uuid: string) => Promise<PageOrder | undefined> {
  const read = batchedReads<Row>(db, READ_PAGE_ORDERS_SQL);
  return async (uuid) => {
    const row = await read(uuid);
    if (!row) return undefined;
    const deposits = jsonList(row.deposits);
    const unconfirmed = unconfirmedJson(row.unconfirmed);
    return {
      uuid: row.uuid,
      blockchain: row.blockchain,
      address: row.address,
      addressQr: row.address_qr,
      status: row.status,
      minAmount: row.min_amount,
      receivedAmount: row.received_amount,
      expiresAt: Date.parse(row.expired_at),
      returnUrl: row.return_url,
      merchantName: row.display_name,
      description: row.description,
      payments: deposits.map((d) => ({ txId: d.txId, amount: BigInt(d.amount), at: Date.parse(d.at), simulated: d.simulated })),
      paymentCount: Number(row.deposit_count),
      ...(unconfirmed.length > 0 ? { unconfirmed: unconfirmed.map((u) => ({ ...u, amount: BigInt(u.amount) })) } : {}),
    };
  };
}
