// A deposit order's row as the database holds it, its reads, and its representations in the contract:
// the one place that knows deposit_orders' columns (orders, deposits, the sandbox helper and the
// benchmarks read them from here).
import type { CreatedDepositOrder, DepositOrder } from '../../../generated/schema.js';
import type { Network } from '../addresses/derivation.js';
import { uuidInBatch } from '../db/batched-reads.js';
import type { Sql, Utf8Text } from '../db/database.js';
import { toJsonInteger } from '../shared/money.js';
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
  /** Already in the API's date shape: formatted by SQL, no Date parsed and printed per read. */
  expired_at: string;
}

/** An order's row with its merchant: what a change that writes a callback reads back. */
export type OwnedOrderRow = OrderRow & { merchant_id: string };

/** The columns the order's representations show (a list reads nothing more: each column costs a page of 100 rows). */
const SHOWN_COLUMNS = `uuid, blockchain, currency, external_id, customer_id, description, address, address_qr, status, min_amount, received_amount,
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
 * The order as its read and the list show it, as JSON text written by the database, up to its
 * paymentUrl: `{"uuid":…,"unconfirmedDeposits":[…],"paymentUrl":`. The platform writes the link after it
 * (its key never reaches the database) and the closing brace (http/json-text.ts orderWriter), and the
 * text goes out as the database wrote it: a list page of 100 took each order's 12 columns as strings and
 * wrote them into JSON again (bench/README.md). The same keys, order and values as toDepositOrder with
 * the transfers and the link, serialized; order-json.test.ts checks byte for byte. The uuid (its type),
 * the network, currency and status (CHECKs of 001_orders.sql), the expiry (digits from to_char), the
 * amounts (bigint, within what a JSON number carries exactly: migration 013), and the address and its QR
 * code (migration 014) hold nothing JSON escapes; the external id, the customer id and the description
 * are written by to_json, which escapes what JSON.stringify escapes (text holds no lone surrogate), and
 * the description is left out when it is null, as toDepositOrder leaves it out.
 */
const ORDER_JSON_SQL = `concat('{"uuid":"', o.uuid, '","blockchain":"', o.blockchain, '","currency":"', o.currency,
  '","targetCurrency":"', o.currency, '","externalId":', to_json(o.external_id), ',"customerId":', to_json(o.customer_id), ',"address":"', o.address, '","addressQr":"', o.address_qr,
  '","expiredAt":"', to_char(o.expired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), '","rate":1,"status":"', o.status,
  '","minAmount":', o.min_amount, ',"description":' || to_json(o.description), ',"receivedAmount":', o.received_amount,
  ',"unconfirmedDeposits":', coalesce(${UNCONFIRMED_JSON_SQL}, '[]'), ',"paymentUrl":')`;

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

export function toCreatedDepositOrder(row: OrderRow): CreatedOrderView {
  return {
    uuid: row.uuid,
    blockchain: row.blockchain,
    currency: row.currency,
    targetCurrency: row.currency,
    externalId: row.external_id,
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
