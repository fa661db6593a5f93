// A deposit order's row as the database holds it, its reads, and its representations in the contract:
// the one place that knows deposit_orders' columns (orders, deposits, the sandbox helper and the
// benchmarks read them from here).
import type { CreatedDepositOrder, DepositOrder } from '../../../generated/schema.js';
import type { Network } from '../addresses/derivation.js';
import { uuidInBatch } from '../db/batched-reads.js';
import type { Sql } from '../db/database.js';
import { toJsonInteger } from '../shared/money.js';
import { UNCONFIRMED_JSON_SQL, unconfirmedJson, type UnconfirmedJson } from './unconfirmed.js';

/** What an order's representations need, and its callback URL for idempotency checks. */
export interface OrderRow {
  uuid: string;
  blockchain: Network;
  currency: 'USDT';
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
  /** Already in the API's date shape: formatted by SQL, no Date parsed and printed per read. */
  expired_at: string;
}

/** An order's row with its merchant: what a change that writes a callback reads back. */
export type OwnedOrderRow = OrderRow & { merchant_id: string };

/** The columns the order's representations show (a list reads nothing more: each column costs a page of 100 rows). */
const SHOWN_COLUMNS = `uuid, blockchain, currency, customer_id, description, address, address_qr, status, min_amount, received_amount,
  to_char(expired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS expired_at`;

export const ORDER_COLUMNS = `${SHOWN_COLUMNS}, callback_url, return_url`;

/** The read of one order by its primary key (and owner). */
export const READ_ORDER_SQL = `SELECT ${ORDER_COLUMNS} FROM deposit_orders WHERE uuid = $1 AND merchant_id = $2`;

/** Where an order receives and since when, whoever its merchant (the operator's rescan). */
export async function orderAddress(sql: Sql, uuid: string): Promise<{ uuid: string; blockchain: Network; address: string; created_at: Date } | undefined> {
  const [row] = await sql.query<{ uuid: string; blockchain: Network; address: string; created_at: Date }>('SELECT uuid, blockchain, address, created_at FROM deposit_orders WHERE uuid = $1', [uuid]);
  return row;
}

/**
 * An order's row as its read and the list take it: what it shows (not its callback and return URLs) and
 * its unconfirmed transfers (UNCONFIRMED_JSON_SQL).
 */
export type ReadOrderRow = Omit<OrderRow, 'callback_url' | 'return_url'> & { unconfirmed: UnconfirmedJson[] | string | null };

/** The columns of a ReadOrderRow, in a query whose deposit_orders row is `o`. */
export const READ_ORDER_COLUMNS = `${SHOWN_COLUMNS}, ${UNCONFIRMED_JSON_SQL} AS unconfirmed`;

/**
 * The order as its read shows it, as JSON text, pushed in pieces onto `parts` (the read joins its own;
 * a list page pushes its 100 orders onto one array and joins it once). Written from the row's columns,
 * not as an object spread three times (the order, its transfers, its link) and then serialized: a list
 * page of 100 took about 1.5 times the CPU that way (bench/README.md). Nor concatenated: a string built
 * with `+` left one intermediate string a piece, a page's worth of garbage a page. The same keys, order
 * and values as toDepositOrder with the transfers and the link; order-json.test.ts checks byte for byte.
 * The uuid (its type), the network, currency and status (CHECKs of 001_orders.sql), the expiry (digits
 * from to_char), and the address and its QR code (the CHECK of 014_addresses_need_no_json_escape.sql)
 * hold nothing JSON escapes, so they go in quoted, not serialized or searched for a character to escape.
 */
export function writeOrderJson(parts: string[], row: ReadOrderRow, paymentUrl: string): void {
  parts.push('{"uuid":"', row.uuid, '","blockchain":"', row.blockchain, '","currency":"', row.currency, '","targetCurrency":"', row.currency, '","customerId":');
  pushJsonString(parts, row.customer_id);
  parts.push(',"address":"', row.address, '","addressQr":"', row.address_qr, '","expiredAt":"', row.expired_at, '","rate":1,"status":"', row.status, '","minAmount":', String(toJsonInteger(row.min_amount)));
  if (row.description !== null) {
    parts.push(',"description":');
    pushJsonString(parts, row.description);
  }
  parts.push(',"receivedAmount":', String(toJsonInteger(row.received_amount)), ',"unconfirmedDeposits":');
  parts.push(row.unconfirmed === null ? '[]' : JSON.stringify(unconfirmedJson(row.unconfirmed)), ',"paymentUrl":');
  pushJsonString(parts, paymentUrl);
  parts.push('}');
}

/** The order as its read shows it, as JSON text (writeOrderJson). */
export function readOrderJson(row: ReadOrderRow, paymentUrl: string): string {
  const parts: string[] = [];
  writeOrderJson(parts, row, paymentUrl);
  return parts.join('');
}

/**
 * Text JSON.stringify leaves as it is: no quote, backslash or control character, and no surrogate (it
 * escapes a lone one; text with a pair is simply given to it).
 */
const NOTHING_TO_ESCAPE = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * `text` as a JSON string: between quotes as it is when it holds nothing to escape (no copy of the text
 * is made), else JSON.stringify's.
 */
function pushJsonString(parts: string[], text: string): void {
  if (NOTHING_TO_ESCAPE.test(text)) parts.push('"', text, '"');
  else parts.push(JSON.stringify(text));
}

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

export function toCreatedDepositOrder(row: OrderRow): CreatedOrderView {
  return {
    uuid: row.uuid,
    blockchain: row.blockchain,
    currency: row.currency,
    targetCurrency: row.currency,
    customerId: row.customer_id,
    address: row.address,
    addressQr: row.address_qr,
    expiredAt: row.expired_at,
    rate: 1,
    status: row.status,
    minAmount: toJsonInteger(row.min_amount),
    ...(row.description === null ? {} : { description: row.description }),
  };
}

export function toDepositOrder(row: OrderRow): OrderView {
  return { ...toCreatedDepositOrder(row), receivedAmount: toJsonInteger(row.received_amount) };
}
