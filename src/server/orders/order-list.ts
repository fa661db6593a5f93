// A merchant's deposit orders a page at a time, newest first, with the list's filters (db/pages.ts).
import type { operations } from '../../../generated/schema.js';
import { equalTo, newestFirstPage, timeBound, type RowPosition } from '../db/pages.js';
import type { Sql } from '../db/database.js';
import { ORDER_COLUMNS, toDepositOrder, type OrderRow, type ReadOrderView } from './order-rows.js';
import { toUnconfirmedDeposits, UNCONFIRMED_JSON_SQL, type UnconfirmedJson } from './unconfirmed.js';

export type OrderListFilters = Omit<NonNullable<operations['listDepositOrders']['parameters']['query']>, 'limit' | 'cursor'>;

export async function listOrders(
  sql: Sql,
  merchantId: string,
  filters: OrderListFilters,
  after: RowPosition | undefined,
  limit: number,
): Promise<{ orders: ReadOrderView[]; next: RowPosition | undefined }> {
  // Each as its read: the unconfirmed transfers in the page's one query.
  const page = await newestFirstPage<OrderRow & { unconfirmed: UnconfirmedJson[] | string | null }>(sql, 'deposit_orders o', `${ORDER_COLUMNS}, ${UNCONFIRMED_JSON_SQL} AS unconfirmed`, {
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
  return { orders: page.rows.map((row) => ({ ...toDepositOrder(row), unconfirmedDeposits: toUnconfirmedDeposits(row.unconfirmed) })), next: page.next };
}
