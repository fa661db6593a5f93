// Deposit orders: idempotent creation on (merchant, externalId), a fresh address from the network's
// sequence, its QR code, and the read model of the contract.
import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { AddressPool } from './address-pool.js';
import type { CreateDepositOrderRequest, CreatedDepositOrder, DepositOrder } from '../../generated/schema.js';
import type { Network } from './addresses.js';
import type { Config } from './config.js';
import { batchedOwnedReads, ONE_TURN_BATCHES, type OwnedRow } from './db/batched-reads.js';
import type { Database, Sql } from './db/database.js';
import { toJsonInteger } from './money.js';
import type { Clock } from './time.js';

/** What an order's representations need, and its callback URL for idempotency checks. */
export interface OrderRow {
  uuid: string;
  blockchain: Network;
  currency: 'USDT';
  customer_id: string;
  callback_url: string;
  /** The payment page's "Back to the shop" link, or null. */
  return_url: string | null;
  address: string;
  address_qr: string;
  status: DepositOrder['status'];
  min_amount: bigint;
  received_amount: bigint;
  /** Already in the API's date shape: formatted by SQL, no Date parsed and printed per read. */
  expired_at: string;
}

export const ORDER_COLUMNS = `uuid, blockchain, currency, customer_id, callback_url, return_url, address, address_qr, status, min_amount,
  received_amount, to_char(expired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS expired_at`;

/** The read of one order by its primary key (and owner). */
export const READ_ORDER_SQL = `SELECT ${ORDER_COLUMNS} FROM deposit_orders WHERE uuid = $1 AND merchant_id = $2`;

/** The merchants' reads of orders, the platform's hottest query: several uuids at once (batched-reads.ts). */
const READ_ORDERS_SQL = `SELECT merchant_id, ${ORDER_COLUMNS} FROM deposit_orders WHERE uuid = ANY($1::uuid[])`;

/**
 * An order as the API shows it, less its `paymentUrl`: the HTTP layer adds the link, which needs the
 * address payers reach; callbacks carry the order without it.
 */
export type CreatedOrderView = Omit<CreatedDepositOrder, 'paymentUrl'>;
export type OrderView = Omit<DepositOrder, 'paymentUrl'>;

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
  };
}

export function toDepositOrder(row: OrderRow): OrderView {
  return { ...toCreatedDepositOrder(row), receivedAmount: toJsonInteger(row.received_amount) };
}

export type CreateResult =
  | { outcome: 'created' | 'replayed'; order: CreatedOrderView }
  | { outcome: 'conflict'; existing: OrderRow };

function sameRequest(row: OrderRow, request: CreateDepositOrderRequest): boolean {
  return (
    row.blockchain === request.blockchain &&
    row.currency === request.currency &&
    row.customer_id === request.customerId &&
    row.callback_url === request.callbackUrl &&
    row.return_url === (request.returnUrl ?? null)
  );
}

/** uuid, merchant, externalId, network, currency, customerId, callbackUrl, index, address, QR, minAmount, expiredAt, returnUrl. */
type InsertValues = [string, string, string, Network, string, string, string, string, string, string, string, string, string | null];

const INSERT_ORDERS_SQL = `
  INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url,
                              address_index, address, address_qr, min_amount, expired_at, return_url)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                       $8::bigint[], $9::text[], $10::text[], $11::bigint[], $12::timestamptz[], $13::text[])
  ON CONFLICT (merchant_id, external_id) DO NOTHING
  RETURNING uuid`;

/** The new order as the database holds it, from what was inserted (status and amount received are the columns' defaults). */
function insertedRow([uuid, , , blockchain, currency, customerId, callbackUrl, , address, qr, minAmount, expiredAt, returnUrl]: InsertValues): OrderRow {
  return {
    uuid,
    blockchain,
    currency: currency as OrderRow['currency'],
    customer_id: customerId,
    callback_url: callbackUrl,
    return_url: returnUrl,
    address,
    address_qr: qr,
    status: 'NEW',
    min_amount: BigInt(minAmount),
    received_amount: 0n,
    // The API's date shape, as ORDER_COLUMNS formats it: UTC to the second.
    expired_at: expiredAt.slice(0, 19).replace('T', ' '),
  };
}

export class Orders {
  private readonly addresses: AddressPool;
  private readonly readOwned: (merchantId: string, uuid: string) => Promise<(OrderRow & OwnedRow) | undefined>;
  private readonly inserts: DataLoader<InsertValues, OrderRow | undefined>;

  constructor(
    private readonly db: Database,
    private readonly config: Pick<Config, 'networks' | 'orderLifetimeSeconds'>,
    private readonly now: Clock,
  ) {
    // The xpubs were checked when the config was loaded (config.ts), so the thread cannot refuse them.
    this.addresses = new AddressPool(db, { Tron: config.networks.Tron.xpub, Ethereum: config.networks.Ethereum.xpub });
    this.readOwned = batchedOwnedReads(db, READ_ORDERS_SQL);
    // The creates of one turn of the event loop whose addresses are ready share one insert.
    this.inserts = new DataLoader(async (rows: readonly InsertValues[]) => {
      const columns = rows[0]!.map((_, column) => rows.map((row) => row[column]!));
      const inserted = new Set((await db.query<{ uuid: string }>(INSERT_ORDERS_SQL, columns)).map((row) => row.uuid));
      return rows.map((row) => (inserted.has(row[0]) ? insertedRow(row) : undefined));
    }, ONE_TURN_BATCHES);
  }

  private async existing(sql: Sql, merchantId: string, externalId: string): Promise<OrderRow | undefined> {
    const [row] = await sql.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM deposit_orders WHERE merchant_id = $1 AND external_id = $2`, [merchantId, externalId]);
    return row;
  }

  private replayOrConflict(row: OrderRow, request: CreateDepositOrderRequest): CreateResult {
    return sameRequest(row, request) ? { outcome: 'replayed', order: toCreatedDepositOrder(row) } : { outcome: 'conflict', existing: row };
  }

  async create(merchantId: string, request: CreateDepositOrderRequest): Promise<CreateResult> {
    const network = request.blockchain;
    const taken = await this.addresses.take(network);
    const expiredAt = new Date(this.now() + this.config.orderLifetimeSeconds * 1000);
    // ON CONFLICT: an order with this externalId exists (a replay, or a concurrent create that won the
    // race). The address goes back to the pool unused, and the answer is the existing order's.
    const inserted = await this.inserts.load([
      randomUUID(), merchantId, request.externalId, network, request.currency, request.customerId, request.callbackUrl,
      String(taken.index), taken.address, taken.qr, String(this.config.networks[network].minAmount), expiredAt.toISOString(),
      request.returnUrl ?? null,
    ]);
    if (inserted) return { outcome: 'created', order: toCreatedDepositOrder(inserted) };
    this.addresses.giveBack(taken);
    return this.replayOrConflict((await this.existing(this.db, merchantId, request.externalId))!, request);
  }

  /** Stops the address thread. */
  close(): Promise<void> {
    return this.addresses.close();
  }

  async read(merchantId: string, uuid: string): Promise<OrderView | undefined> {
    const row = await this.readOwned(merchantId, uuid);
    return row && toDepositOrder(row);
  }
}
