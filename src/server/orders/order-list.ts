// A merchant's deposit orders a page at a time, newest first, with the list's filters (db/pages.ts).
import type { operations } from '../../../generated/schema.js';
import { equalTo, newestFirstPage, timeBound, type RowPosition } from '../db/pages.js';
import type { Sql } from '../db/database.js';
import { ORDER_COLUMNS, toDepositOrder, type OrderRow, type OrderView } from './order-rows.js';

export type OrderListFilters = Omit<NonNullable<operations['listDepositOrders']['parameters']['query']>, 'limit' | 'cursor'>;

export async function listOrders(
  sql: Sql,
  merchantId: string,
  filters: OrderListFilters,
  after: RowPosition | undefined,
  limit: number,
): Promise<{ orders: OrderView[]; next: RowPosition | undefined }> {
  const page = await newestFirstPage<OrderRow>(sql, 'deposit_orders', ORDER_COLUMNS, {
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
  return { orders: page.rows.map(toDepositOrder), next: page.next };
}
