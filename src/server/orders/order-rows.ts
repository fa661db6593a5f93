// A deposit order's row as the database holds it, its reads, and its representations in the contract:
// the one place that knows deposit_orders' columns (orders, deposits, the sandbox helper and the
// benchmarks read them from here).
import type { CreatedDepositOrder, DepositOrder } from '../../../generated/schema.js';
import { uuidInBatch } from '../db/batched-reads.js';
import type { Sql, Utf8Text } from '../db/database.js';
import { jsonObjectSql, rowMapper, selectedColumns, type JsonField } from '../db/json-fields.js';
import { toJsonInteger } from '../shared/money.js';
import type { Network } from '../shared/network.js';
import { UNCONFIRMED_JSON_SQL } from './unconfirmed.js';

/** What an order's representations need, and its callback URL for idempotency checks. */
export interface OrderRow {
  uuid: string;
  blockchain: Network;
  currency: 'USDT';
  external_id: string;
  customer_id: string;
  callback_url: string;
  /** The payment page's "Back to the shop" link, or null. */
  return_url: string | null;
  /** The order's description for the payer (the payment page), or null. */
  description: string | null;
  address: string;
  address_qr: string;
  status: DepositOrder['status'];
  min_amount: bigint;
  received_amount: bigint;
  /** Already in the API's date shape (ORDER_FIELDS). */
  expired_at: string;
}

/** An order's row with its merchant: what a change that writes a callback reads back. */
export type OwnedOrderRow = OrderRow & { merchant_id: string };

/** The API's date shape, as SQL writes a timestamp of the order's. */
const API_TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;

/**
 * The order's fields, in the order of its JSON (the contract's, but for paymentUrl, which the platform
 * writes after the database's text): its read and list items as the database writes them
 * (ORDER_JSON_SQL), the columns TypeScript reads (ORDER_COLUMNS) and the order as callbacks and the
 * create's answer carry it (toDepositOrder), all made from this table (db/json-fields.ts). A new field of
 * the order is its line in the contract's YAML and one row here (docs/design.md#adding-a-field-to-the-order).
 * Written as they are (`as-is`): the uuid (its type), the network, currency and status (CHECKs of
 * 001_orders.sql), the expiry (digits from to_char), and the address and its QR code (migration 014);
 * the merchant's texts by to_json; the amounts as numbers (bigint, migration 013).
 */
export const ORDER_FIELDS: readonly JsonField<OrderRow>[] = [
  { name: 'uuid', column: 'uuid', sql: { expression: 'o.uuid', json: 'as-is' } },
  { name: 'blockchain', column: 'blockchain', sql: { expression: 'o.blockchain', json: 'as-is' } },
  { name: 'currency', column: 'currency', sql: { expression: 'o.currency', json: 'as-is' } },
  { name: 'targetCurrency', column: 'currency', sql: { expression: 'o.currency', json: 'as-is' } },
  { name: 'externalId', column: 'external_id', sql: { expression: 'o.external_id', json: 'to_json' } },
  { name: 'customerId', column: 'customer_id', sql: { expression: 'o.customer_id', json: 'to_json' } },
  { name: 'address', column: 'address', sql: { expression: 'o.address', json: 'as-is' } },
  { name: 'addressQr', column: 'address_qr', sql: { expression: 'o.address_qr', json: 'as-is' } },
  // Already in the API's date shape in the row: formatted by SQL, no Date parsed and printed per read.
  { name: 'expiredAt', column: 'expired_at', sql: { expression: API_TIME('o.expired_at'), json: 'as-is' } },
  { name: 'rate', constant: 1 },
  { name: 'status', column: 'status', sql: { expression: 'o.status', json: 'as-is' } },
  { name: 'minAmount', column: 'min_amount', wire: toJsonInteger, sql: { expression: 'o.min_amount', json: 'number' } },
  { name: 'description', column: 'description', optional: true, sql: { expression: 'o.description', json: 'to_json' } },
  { name: 'receivedAmount', column: 'received_amount', wire: toJsonInteger, sql: { expression: 'o.received_amount', json: 'number' } },
  // The read's alone (callbacks leave it out: it changes with every block): the database writes it.
  { name: 'unconfirmedDeposits', sql: { expression: `coalesce(${UNCONFIRMED_JSON_SQL}, '[]')`, json: 'json' } },
  { name: 'paymentUrl', appended: true },
];

/** The columns of an OrderRow, in a query whose deposit_orders row is `o`: the fields' and the callback and return URLs. */
export const ORDER_COLUMNS = `${selectedColumns(ORDER_FIELDS)}, o.callback_url, o.return_url`;

/** The read of one order by its primary key (and owner). */
export const READ_ORDER_SQL = `SELECT ${ORDER_COLUMNS} FROM deposit_orders o WHERE o.uuid = $1 AND o.merchant_id = $2`;

/** Where an order receives and since when, whoever its merchant (the operator's rescan). */
export async function orderAddress(sql: Sql, uuid: string): Promise<{ uuid: string; blockchain: Network; address: string; created_at: Date } | undefined> {
  const [row] = await sql.query<{ uuid: string; blockchain: Network; address: string; created_at: Date }>('SELECT uuid, blockchain, address, created_at FROM deposit_orders WHERE uuid = $1', [uuid]);
  return row;
}

/**
 * The order as its read and the list show it, as JSON text written by the database, up to its
 * paymentUrl: `{"uuid":…,"unconfirmedDeposits":[…],"paymentUrl":`. The platform writes the link after it
 * (its key never reaches the database) and the closing brace (http/json-text.ts orderWriter), and the
 * text goes out as the database wrote it: a list page of 100 took each order's 12 columns as strings and
 * wrote them into JSON again (bench/README.md). Made from ORDER_FIELDS, as toDepositOrder is;
 * order-json.test.ts checks the two byte for byte.
 */
const ORDER_JSON_SQL = jsonObjectSql(ORDER_FIELDS);

/** The columns of an OrderJsonRow, in a query whose deposit_orders row is `o`. */
export const ORDER_JSON_COLUMNS = `o.uuid, ${ORDER_JSON_SQL} AS order_json`;

/** An order as its read and the list take it: its uuid (for its link) and its JSON up to the link. */
export interface OrderJsonRow {
  uuid: string;
  order_json: Utf8Text;
}

/** The column a list reads as bytes (Sql.queryBytes). */
export const ORDER_JSON_BYTES = ['order_json'] as const;

/**
 * What a payment page shows of orders, by uuid (payment-page/order.ts reads it in batches): the order,
 * its merchant's display name (the one reach into merchants' table of the page, on purpose: one query a
 * read), and its credited deposits as JSON, oldest first (the last PAGE_DEPOSITS of them, and their count).
 */
export const PAGE_DEPOSITS = 50;
export const READ_PAGE_ORDERS_SQL = `
  SELECT o.uuid, o.blockchain, o.address, o.address_qr, o.status, o.min_amount, o.received_amount, o.return_url, o.description,
         to_char(o.expired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS expired_at,
         m.display_name,
         (SELECT json_agg(json_build_object(
                    'txId', d.tx_hash, 'amount', d.amount::text, 'simulated', d.source = 'sandbox',
                    'at', to_char(d.credited_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) ORDER BY d.id)
            FROM (SELECT * FROM deposits WHERE order_uuid = o.uuid ORDER BY id DESC LIMIT ${PAGE_DEPOSITS}) d) AS deposits,
         (SELECT count(*)::int FROM deposits WHERE order_uuid = o.uuid) AS deposit_count,
         ${UNCONFIRMED_JSON_SQL} AS unconfirmed
    FROM deposit_orders o JOIN merchants m ON m.id = o.merchant_id
   WHERE ${uuidInBatch('o.uuid')}`;

/** One order of a merchant, as the database holds it. */
export async function readOrderRow(sql: Sql, merchantId: string, uuid: string): Promise<OrderRow | undefined> {
  const [row] = await sql.query<OrderRow>(READ_ORDER_SQL, [uuid, merchantId]);
  return row;
}

/**
 * An order as the API shows it, less its `paymentUrl`: the HTTP layer adds the link, which needs the
 * address payers reach; callbacks carry the order without it.
 */
export type CreatedOrderView = Omit<CreatedDepositOrder, 'paymentUrl'>;
/** The order as callbacks carry it: its read less the link and the transfers not yet confirmed. */
export type OrderView = Omit<DepositOrder, 'paymentUrl' | 'unconfirmedDeposits'>;

/** The order as the create answers it: no amount received yet. */
const createdOrder = rowMapper(ORDER_FIELDS.filter((field) => field.name !== 'receivedAmount'));
const order = rowMapper(ORDER_FIELDS);

export function toCreatedDepositOrder(row: OrderRow): CreatedOrderView {
  return createdOrder(row) as CreatedOrderView;
}

export function toDepositOrder(row: OrderRow): OrderView {
  return order(row) as OrderView;
}
