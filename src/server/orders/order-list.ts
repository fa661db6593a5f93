// A merchant's deposit orders a page at a time, newest first, with the list's filters (db/pages.ts).
import type { operations } from '../../../generated/schema.js';
import { equalTo, newestFirstPage, timeBound, type Page, type RowPosition } from '../db/pages.js';
import type { Sql } from '../db/database.js';
import { ORDER_JSON_BYTES, ORDER_JSON_COLUMNS, type OrderJsonRow } from './order-rows.js';

export type OrderListFilters = Omit<NonNullable<operations['listDepositOrders']['parameters']['query']>, 'limit' | 'cursor'>;

/**
 * Each order as its read shows it, unconfirmed transfers included, in the page's one query: its JSON
 * as the database wrote it (ORDER_JSON_SQL), as bytes where the driver has them, held until the page
 * releases them (Sql.queryBytes).
 */
export function listOrders(sql: Sql, merchantId: string, filters: OrderListFilters, after: RowPosition | undefined, limit: number): Promise<Page<OrderJsonRow>> {
  return newestFirstPage<OrderJsonRow>(sql, 'deposit_orders o', ORDER_JSON_COLUMNS, {
    merchantId,
    bytes: ORDER_JSON_BYTES,
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
}
