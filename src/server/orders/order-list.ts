// A merchant's deposit orders a page at a time, newest first, with the list's filters (db/pages.ts).
import type { operations } from '../../../generated/schema.js';
import type { Sql } from '../db/database.js';
import { equalTo, newestFirstPage, newestFirstWalk, timeBound, type ListPage, type ListRequest, type Page, type RowPosition, type WalkQuery } from '../db/pages.js';
import type { CursorCodec } from '../shared/cursors.js';
import { ORDER_JSON_BYTES, ORDER_JSON_COLUMNS, type OrderJsonRow } from './order-rows.js';

export type OrderListFilters = Omit<NonNullable<operations['listDepositOrders']['parameters']['query']>, 'limit' | 'cursor'>;

/**
 * The statement of the list's pages: each order as its read shows it, unconfirmed transfers included,
 * in the page's one query: its JSON as the database wrote it (ORDER_JSON_SQL), as bytes where the driver
 * has them, held until the page releases them (Sql.queryBytes). Only the filters given become SQL.
 */
function ordersQuery(filters: OrderListFilters): WalkQuery {
  return {
    table: 'deposit_orders o',
    columns: ORDER_JSON_COLUMNS,
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
  };
}

/** A page of the list as the API sends it, from the request's cursor (db/pages.ts newestFirstWalk). */
export function orderListPage(sql: Sql, cursors: CursorCodec, request: ListRequest<OrderListFilters>): Promise<ListPage<OrderJsonRow>> {
  return newestFirstWalk<OrderJsonRow>(sql, cursors, 'orders', request, ordersQuery(request.filters));
}

/** A page after a position, with the position of its last row (the statement alone: its tests and bench/lists.ts). */
export function listOrders(sql: Sql, merchantId: string, filters: OrderListFilters, after: RowPosition | undefined, limit: number): Promise<Page<OrderJsonRow>> {
  const { table, columns, ...query } = ordersQuery(filters);
  return newestFirstPage<OrderJsonRow>(sql, table, columns, { merchantId, ...query, after, limit });
}
