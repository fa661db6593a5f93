// Deposit orders: idempotent creation on (merchant, externalId), batched per turn of the event loop,
// with a fresh address from the network's pool, and the merchants' batched reads.
import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { AddressPool, type PooledAddress } from '../addresses/pool.js';
import type { CreateDepositOrderRequest } from '../../../generated/schema.js';
import { ORDER_COLUMNS, toCreatedDepositOrder, toDepositOrder, type CreatedOrderView, type OrderRow, type OrderView } from './order-rows.js';
import type { Network } from '../addresses/derivation.js';
import type { Config } from '../config.js';
import { batchedOwnedReads, ONE_TURN_BATCHES, type OwnedRow } from '../db/batched-reads.js';
import type { Database, Sql } from '../db/database.js';
import { platformDateTime, type Clock } from '../shared/time.js';

/** The merchants' reads of orders, the platform's hottest query: several uuids at once (batched-reads.ts). */
const READ_ORDERS_SQL = `SELECT merchant_id, ${ORDER_COLUMNS} FROM deposit_orders WHERE uuid = ANY($1::uuid[])`;

export type CreateResult =
  | { outcome: 'created' | 'replayed'; order: CreatedOrderView }
  | { outcome: 'conflict'; existing: OrderRow }
  | { outcome: 'too_many_open_orders'; limit: number };

function sameRequest(row: OrderRow, request: CreateDepositOrderRequest): boolean {
  return (
    row.blockchain === request.blockchain &&
    row.currency === request.currency &&
    row.customer_id === request.customerId &&
    row.callback_url === request.callbackUrl &&
    row.return_url === (request.returnUrl ?? null)
  );
}

/** One new order's row, as the batched insert takes it. */
interface NewOrder {
  uuid: string;
  merchantId: string;
  externalId: string;
  network: Network;
  currency: OrderRow['currency'];
  customerId: string;
  callbackUrl: string;
  returnUrl: string | null;
  address: PooledAddress;
  minAmount: bigint;
  expiredAt: Date;
}

/**
 * The creates of one turn in one statement. An order that exists (the same externalId) or whose address
 * index was meanwhile handed to another process is not inserted. The reservation of each index used
 * ends in the same statement (addresses/pool.ts).
 */
const INSERT_ORDERS_SQL = `
  WITH inserted AS (
    INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url,
                                address_index, address, address_qr, min_amount, expired_at, return_url)
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                         $8::bigint[], $9::text[], $10::text[], $11::bigint[], $12::timestamptz[], $13::text[])
    ON CONFLICT DO NOTHING
    RETURNING uuid, blockchain, address_index),
  used AS (
    DELETE FROM address_reservations r USING inserted i WHERE r.network = i.blockchain AND r.address_index = i.address_index)
  SELECT uuid FROM inserted`;

/** The insert's thirteen arrays, one per column, in INSERT_ORDERS_SQL's order. */
function insertColumns(orders: readonly NewOrder[]): unknown[] {
  const column = <T>(value: (order: NewOrder) => T) => orders.map(value);
  return [
    column((o) => o.uuid), column((o) => o.merchantId), column((o) => o.externalId), column((o) => o.network),
    column((o) => o.currency), column((o) => o.customerId), column((o) => o.callbackUrl), column((o) => String(o.address.index)),
    column((o) => o.address.address), column((o) => o.address.qr), column((o) => String(o.minAmount)), column((o) => o.expiredAt.toISOString()),
    column((o) => o.returnUrl),
  ];
}

/** The new order as the database holds it, from what was inserted (status and amount received are the columns' defaults). */
function insertedRow(order: NewOrder): OrderRow {
  return {
    uuid: order.uuid,
    blockchain: order.network,
    currency: order.currency,
    customer_id: order.customerId,
    callback_url: order.callbackUrl,
    return_url: order.returnUrl,
    address: order.address.address,
    address_qr: order.address.qr,
    status: 'NEW',
    min_amount: order.minAmount,
    received_amount: 0n,
    // The API's date shape, as ORDER_COLUMNS formats it in SQL.
    expired_at: platformDateTime(order.expiredAt),
  };
}

async function orderByExternalId(sql: Sql, merchantId: string, externalId: string): Promise<OrderRow | undefined> {
  const [row] = await sql.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM deposit_orders WHERE merchant_id = $1 AND external_id = $2`, [merchantId, externalId]);
  return row;
}

/** Tries with another address when the one taken was handed to another process meanwhile (a frozen process). */
const ADDRESS_ATTEMPTS = 3;

/**
 * How old a merchant's count of open orders may be: counting at every create would cost a scan of up to
 * MAX_OPEN_ORDERS_PER_MERCHANT index entries each time. Near the bound the count is taken afresh.
 */
const OPEN_COUNT_MAX_AGE_MS = 5000;

interface OpenCount {
  /** performance.now() when the count was asked for. */
  at: number;
  open: Promise<number>;
  /** Orders this process created for the merchant since. */
  createdSince: number;
}

export class Orders {
  private readonly addresses: AddressPool;
  private readonly readOwned: (merchantId: string, uuid: string) => Promise<(OrderRow & OwnedRow) | undefined>;
  private readonly inserts: DataLoader<NewOrder, OrderRow | undefined>;
  /** Each merchant's open orders as last counted (see mayOpenAnother). */
  private readonly openCounts = new Map<string, OpenCount>();

  constructor(
    private readonly db: Database,
    private readonly config: Pick<Config, 'networks' | 'orderLifetimeSeconds' | 'maxOpenOrdersPerMerchant'>,
    private readonly now: Clock,
  ) {
    // The xpubs were checked when the config was loaded (config.ts), so the thread cannot refuse them.
    this.addresses = new AddressPool(db, { Tron: config.networks.Tron.xpub, Ethereum: config.networks.Ethereum.xpub }, db.kind === 'pglite');
    this.readOwned = batchedOwnedReads(db, READ_ORDERS_SQL);
    // The creates of one turn of the event loop whose addresses are ready share one insert.
    this.inserts = new DataLoader(async (orders: readonly NewOrder[]) => {
      const inserted = new Set((await db.query<{ uuid: string }>(INSERT_ORDERS_SQL, insertColumns(orders))).map((row) => row.uuid));
      return orders.map((order) => (inserted.has(order.uuid) ? insertedRow(order) : undefined));
    }, ONE_TURN_BATCHES);
  }

  private replayOrConflict(row: OrderRow, request: CreateDepositOrderRequest): CreateResult {
    return sameRequest(row, request) ? { outcome: 'replayed', order: toCreatedDepositOrder(row) } : { outcome: 'conflict', existing: row };
  }

  async create(merchantId: string, request: CreateDepositOrderRequest): Promise<CreateResult> {
    const network = request.blockchain;
    if (!(await this.mayOpenAnother(merchantId))) {
      // At the bound a replay is still answered; only a new order is refused.
      const existing = await orderByExternalId(this.db, merchantId, request.externalId);
      return existing ? this.replayOrConflict(existing, request) : { outcome: 'too_many_open_orders', limit: this.config.maxOpenOrdersPerMerchant };
    }
    for (let attempt = 1; ; attempt++) {
      const address = await this.addresses.take(network);
      const inserted = await this.inserts.load({
        uuid: randomUUID(),
        merchantId,
        externalId: request.externalId,
        network,
        currency: request.currency,
        customerId: request.customerId,
        callbackUrl: request.callbackUrl,
        returnUrl: request.returnUrl ?? null,
        address,
        minAmount: this.config.networks[network].minAmount,
        expiredAt: new Date(this.now() + this.config.orderLifetimeSeconds * 1000),
      });
      if (inserted) {
        const counted = this.openCounts.get(merchantId);
        if (counted) counted.createdSince++;
        return { outcome: 'created', order: toCreatedDepositOrder(inserted) };
      }
      // An order with this externalId exists (a replay, or a concurrent create that won the race): the
      // address goes back to the pool unused, and the answer is the existing order's.
      const existing = await orderByExternalId(this.db, merchantId, request.externalId);
      if (existing) {
        this.addresses.giveBack(address);
        return this.replayOrConflict(existing, request);
      }
      // Else the address's index was used by another process: it is dropped, and the create takes another.
      if (attempt === ADDRESS_ATTEMPTS) throw new Error(`no free ${network} address after ${ADDRESS_ATTEMPTS} attempts`);
    }
  }

  /**
   * Whether the merchant is below MAX_OPEN_ORDERS_PER_MERCHANT: by a count at most OPEN_COUNT_MAX_AGE_MS
   * old (one query for all the creates waiting on it) plus this process's creates since, counted afresh
   * when that says the bound is reached. The creates of one turn, and other processes' within the
   * count's age, may pass the bound by that much.
   */
  private async mayOpenAnother(merchantId: string): Promise<boolean> {
    const limit = this.config.maxOpenOrdersPerMerchant;
    let counted = this.openCounts.get(merchantId);
    if (!counted || performance.now() - counted.at >= OPEN_COUNT_MAX_AGE_MS) counted = this.recount(merchantId);
    if ((await counted.open) + counted.createdSince < limit) return true;
    return (await this.recount(merchantId).open) < limit; // paid or expired orders may have freed places
  }

  private recount(merchantId: string): OpenCount {
    const counted: OpenCount = {
      at: performance.now(),
      createdSince: 0,
      open: this.db.query<{ open: bigint }>("SELECT count(*) AS open FROM deposit_orders WHERE merchant_id = $1 AND status = 'NEW'", [merchantId]).then(([row]) => Number(row!.open)),
    };
    // A failed count fails the creates waiting on it; the next create counts again.
    counted.open.catch(() => this.openCounts.get(merchantId) === counted && this.openCounts.delete(merchantId));
    this.openCounts.set(merchantId, counted);
    return counted;
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
