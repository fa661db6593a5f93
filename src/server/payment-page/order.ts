// What the payment page may show of an order, read by its uuid alone once the link's token has checked:
// no merchant, customer, externalId or callback URL is even selected.
import type { Network } from '../addresses/derivation.js';
import { batchedReads } from '../db/batched-reads.js';
import type { Database } from '../db/database.js';
import { READ_PAGE_ORDERS_SQL, type OrderRow } from '../orders/order-rows.js';

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
}

/** The four things a payer can be told; a NEW order past expiredAt is already over for the payer. */
export type PageState = 'waiting' | 'partial' | 'done' | 'expired';

export function pageState(order: PageOrder, now: number): PageState {
  if (order.status === 'DONE') return 'done';
  if (order.status === 'EXPIRED' || now >= order.expiresAt) return 'expired';
  return order.receivedAmount > 0n ? 'partial' : 'waiting';
}

type Row = Pick<OrderRow, 'uuid' | 'blockchain' | 'address' | 'address_qr' | 'status' | 'min_amount' | 'received_amount' | 'return_url'> & { expired_at: string };


/** Reads for pages, coalesced like the merchants' reads (many open pages poll at once). */
export function pageOrderReader(db: Database): (uuid: string) => Promise<PageOrder | undefined> {
  const read = batchedReads<Row>(db, READ_PAGE_ORDERS_SQL);
  return async (uuid) => {
    const row = await read(uuid);
    return (
      row && {
        uuid: row.uuid,
        blockchain: row.blockchain,
        address: row.address,
        addressQr: row.address_qr,
        status: row.status,
        minAmount: row.min_amount,
        receivedAmount: row.received_amount,
        expiresAt: Date.parse(row.expired_at),
        returnUrl: row.return_url,
      }
    );
  };
}
