// A merchant's deposit orders a page at a time, newest first, with the list's filters (db/pages.ts).
import type { operations } from '../../../generated/schema.js';
import { equalTo, newestFirstPage, timeBound, type RowPosition } from '../db/pages.js';
import type { Sql } from '../db/database.js';
import { READ_ORDER_COLUMNS, type ReadOrderRow } from './order-rows.js';

export type OrderListFilters = Omit<NonNullable<operations['listDepositOrders']['parameters']['query']>, 'limit' | 'cursor'>;

/** Each order as its read takes it, unconfirmed transfers included, in the page's one query. */
export async function listOrders(
  sql: Sql,
  merchantId: string,
  filters: OrderListFilters,
  after: RowPosition | undefined,
  limit: number,
): Promise<{ orders: ReadOrderRow[]; next: RowPosition | undefined }> {
  const page = await newestFirstPage<ReadOrderRow>(sql, 'deposit_orders o', READ_ORDER_COLUMNS, {
    merchantId,
    filters: [
      ...equalTo('status', filters.status),
      ...equalTo('blockchain', filters.blockchain),
      ...equalTo('customer_id', filters.customerId),
      ...equalTo('external_id', filters.externalId),
      ...timeBound('created_at', 'from', filters.createdFrom),
      ...timeBound('created_at', 'before', filters.createdBefore),
      ...timeBound('updated_at', 'from', filters.updatedSince),
    ],
    after,
    limit,
  });
  return { orders: page.rows, next: page.next };
}
