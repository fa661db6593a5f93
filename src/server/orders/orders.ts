// Deposit orders: idempotent creation on (merchant, externalId), batched per turn of the event loop,
// with a fresh address from the network's pool, and the merchants' batched reads.
import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { AddressPool } from '../addresses/pool.js';
import type { CreateDepositOrderRequest } from '../../../generated/schema.js';
import { ORDER_COLUMNS, ORDER_JSON_COLUMNS, toCreatedDepositOrder, type CreatedOrderView, type OrderJsonRow, type OrderRow } from './order-rows.js';
import type { Config } from '../config.js';
import { batchedOwnedReads, ONE_TURN_BATCHES, uuidInBatch, type OwnedRow } from '../db/batched-reads.js';
import type { Database, Sql } from '../db/database.js';
import type { Network } from '../shared/network.js';
import { platformDateTime, type Clock } from '../shared/time.js';

/** The merchants' reads of orders, the platform's hottest query: several uuids at once (batched-reads.ts). */
export const READ_ORDERS_SQL = `SELECT merchant_id, ${ORDER_JSON_COLUMNS} FROM deposit_orders o WHERE ${uuidInBatch()}`;

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
    row.return_url === (request.returnUrl ?? null) &&
    row.description === (request.description ?? null)
  );
}

/** One new order's row, as the batched insert takes it: its address comes from the pool in the insert. */
interface NewOrder {
  uuid: string;
  merchantId: string;
  externalId: string;
  blockchain: Network;
  currency: OrderRow['currency'];
  customerId: string;
  callbackUrl: string;
  returnUrl: string | null;
  description: string | null;
  minAmount: bigint;
  expiredAt: Date;
}

/** What the insert did with one new order. */
type Inserted = { address: string; qr: string } | 'no address' | 'exists';

/**
 * The creates of one turn in one statement. Each new order takes the lowest ready address of its
 * network from the shared pool (rows that another statement has taken are skipped, not waited for)
 * and its row is removed in the same statement (addresses/pool.ts); an order that exists (the same
 * externalId) is not inserted and leaves its address in the pool. The answer names the inserted
 * orders with their addresses, and the orders for which the pool had no ready address.
 */
const INSERT_ORDERS_SQL = `
  WITH new_orders AS (
    SELECT o.*, row_number() OVER (PARTITION BY o.blockchain ORDER BY o.ordinal) AS slot
      FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                  $8::bigint[], $9::timestamptz[], $10::text[], $11::text[])
           WITH ORDINALITY AS o(uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url,
                                min_amount, expired_at, return_url, description, ordinal)),
  tron AS MATERIALIZED (
    SELECT network, address_index, address, address_qr FROM address_pool
     WHERE network = 'Tron' AND wallet = $12 ORDER BY address_index LIMIT $13 FOR UPDATE SKIP LOCKED),
  ethereum AS MATERIALIZED (
    SELECT network, address_index, address, address_qr FROM address_pool
     WHERE network = 'Ethereum' AND wallet = $14 ORDER BY address_index LIMIT $15 FOR UPDATE SKIP LOCKED),
  picked AS (
    SELECT p.*, row_number() OVER (PARTITION BY p.network ORDER BY p.address_index) AS slot
      FROM (SELECT * FROM tron UNION ALL SELECT * FROM ethereum) p),
  inserted AS (
    INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url,
                                address_index, address, address_qr, min_amount, expired_at, return_url, description)
    SELECT o.uuid, o.merchant_id, o.external_id, o.blockchain, o.currency, o.customer_id, o.callback_url,
           p.address_index, p.address, p.address_qr, o.min_amount, o.expired_at, o.return_url, o.description
      FROM new_orders o JOIN picked p ON p.network = o.blockchain AND p.slot = o.slot
    ON CONFLICT (merchant_id, external_id) DO NOTHING
    RETURNING uuid, blockchain, address_index, address, address_qr),
  used AS (
    DELETE FROM address_pool a USING inserted i WHERE a.network = i.blockchain AND a.address_index = i.address_index),
  -- Each network's ready addresses as this statement found them, its own takes included: every process
  -- then sees the shared pool's level, whoever took from it.
  levels AS (
    SELECT (SELECT count(*)::int FROM address_pool WHERE network = 'Tron' AND wallet = $12) AS tron_ready,
           (SELECT count(*)::int FROM address_pool WHERE network = 'Ethereum' AND wallet = $14) AS ethereum_ready)
  SELECT i.uuid, i.address, i.address_qr, l.tron_ready, l.ethereum_ready FROM inserted i, levels l
  UNION ALL
  SELECT o.uuid, NULL, NULL, l.tron_ready, l.ethereum_ready FROM new_orders o, levels l
   WHERE NOT EXISTS (SELECT 1 FROM picked p WHERE p.network = o.blockchain AND p.slot = o.slot)`;

/** A row of the insert: an order given an address (or none, when the pool had none), and the pool's level. */
interface InsertedRow {
  uuid: string;
  address: string | null;
  address_qr: string | null;
  tron_ready: number;
  ethereum_ready: number;
}

/** The insert's parameters: eleven arrays, one per column, then each network's wallet and count of new orders. */
function insertParameters(orders: readonly NewOrder[], wallets: Record<Network, string>): unknown[] {
  const column = <T>(value: (order: NewOrder) => T) => orders.map(value);
  const count = (network: Network) => orders.filter((o) => o.blockchain === network).length;
  return [
    column((o) => o.uuid), column((o) => o.merchantId), column((o) => o.externalId), column((o) => o.blockchain),
    column((o) => o.currency), column((o) => o.customerId), column((o) => o.callbackUrl), column((o) => String(o.minAmount)),
    column((o) => o.expiredAt.toISOString()), column((o) => o.returnUrl), column((o) => o.description),
    wallets.Tron, count('Tron'), wallets.Ethereum, count('Ethereum'),
  ];
}

/** The new order as the database holds it, from what was inserted (status and amount received are the columns' defaults). */
function insertedRow(order: NewOrder, address: { address: string; qr: string }): OrderRow {
  return {
    uuid: order.uuid,
    blockchain: order.blockchain,
    currency: order.currency,
    external_id: order.externalId,
    customer_id: order.customerId,
    callback_url: order.callbackUrl,
    return_url: order.returnUrl,
    description: order.description,
    address: address.address,
    address_qr: address.qr,
    status: 'NEW',
    min_amount: order.minAmount,
    received_amount: 0n,
    // The API's date shape, as ORDER_FIELDS formats it in SQL.
    expired_at: platformDateTime(order.expiredAt),
  };
}

async function orderByExternalId(sql: Sql, merchantId: string, externalId: string): Promise<OrderRow | undefined> {
  const [row] = await sql.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM deposit_orders o WHERE o.merchant_id = $1 AND o.external_id = $2`, [merchantId, externalId]);
  return row;
}

/**
 * Tries of a create that found no ready address: after each, the pool is filled for it (other
 * processes' creates may take what was filled before this one's next try).
 */
const ADDRESS_ATTEMPTS = 5;

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
  private readonly readOwned: (merchantId: string, uuid: string) => Promise<(OrderJsonRow & OwnedRow) | undefined>;
  private readonly inserts: DataLoader<NewOrder, Inserted>;
  /** Each merchant's open orders as last counted (see mayOpenAnother). */
  private readonly openCounts = new Map<string, OpenCount>();
  /** Each merchant's creates under way in this process, admitted below the bound. */
  private readonly admitted = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly config: Pick<Config, 'networks' | 'orderLifetimeSeconds' | 'maxOpenOrdersPerMerchant'>,
    private readonly now: Clock,
  ) {
    // The xpubs were checked when the config was loaded (config.ts), so the thread cannot refuse them.
    this.addresses = new AddressPool(db, { Tron: config.networks.Tron.xpub, Ethereum: config.networks.Ethereum.xpub });
    this.readOwned = batchedOwnedReads(db, READ_ORDERS_SQL);
    // The creates of one turn of the event loop share one insert.
    this.inserts = new DataLoader(async (orders: readonly NewOrder[]) => {
      const rows = await db.query<InsertedRow>(INSERT_ORDERS_SQL, insertParameters(orders, this.addresses.wallets));
      const answers = new Map(rows.map((row) => [row.uuid, row.address === null ? ('no address' as const) : { address: row.address, qr: row.address_qr! }]));
      for (const network of ['Tron', 'Ethereum'] as const) {
        const used = orders.filter((order) => order.blockchain === network && typeof answers.get(order.uuid) === 'object').length;
        const ready = rows[0]?.[network === 'Tron' ? 'tron_ready' : 'ethereum_ready'];
        if (used > 0) this.addresses.taken(network, used, ready! - used);
      }
      return orders.map((order) => answers.get(order.uuid) ?? 'exists');
    }, ONE_TURN_BATCHES);
  }

  private replayOrConflict(row: OrderRow, request: CreateDepositOrderRequest): CreateResult {
    return sameRequest(row, request) ? { outcome: 'replayed', order: toCreatedDepositOrder(row) } : { outcome: 'conflict', existing: row };
  }

  async create(merchantId: string, request: CreateDepositOrderRequest): Promise<CreateResult> {
    if (!(await this.mayOpenAnother(merchantId))) {
      // At the bound a replay is still answered; only a new order is refused.
      const existing = await orderByExternalId(this.db, merchantId, request.externalId);
      return existing ? this.replayOrConflict(existing, request) : { outcome: 'too_many_open_orders', limit: this.config.maxOpenOrdersPerMerchant };
    }
    // Admitted: one place of the merchant's held until the insert answers, then counted as created or given back.
    let created = false;
    try {
      const result = await this.insertNew(merchantId, request);
      created = result.outcome === 'created';
      return result;
    } finally {
      const underWay = this.admitted.get(merchantId)! - 1;
      if (underWay === 0) this.admitted.delete(merchantId);
      else this.admitted.set(merchantId, underWay);
      const counted = this.openCounts.get(merchantId);
      if (created && counted) counted.createdSince++;
    }
  }

  private async insertNew(merchantId: string, request: CreateDepositOrderRequest): Promise<CreateResult> {
    const network = request.blockchain;
    for (let attempt = 1; ; attempt++) {
      const order: NewOrder = {
        uuid: randomUUID(),
        merchantId,
        externalId: request.externalId,
        blockchain: network,
        currency: request.currency,
        customerId: request.customerId,
        callbackUrl: request.callbackUrl,
        returnUrl: request.returnUrl ?? null,
        description: request.description ?? null,
        minAmount: this.config.networks[network].minAmount,
        expiredAt: new Date(this.now() + this.config.orderLifetimeSeconds * 1000),
      };
      const inserted = await this.inserts.load(order);
      if (typeof inserted === 'object') return { outcome: 'created', order: toCreatedDepositOrder(insertedRow(order, inserted)) };
      if (inserted === 'exists') {
        // An order with this externalId exists (a replay, or a concurrent create that won the race):
        // the answer is the existing order's.
        const existing = await orderByExternalId(this.db, merchantId, request.externalId);
        if (existing) return this.replayOrConflict(existing, request);
      }
      // The pool had no ready address for it (the first create, or more creates than it held).
      if (attempt === ADDRESS_ATTEMPTS) throw new Error(`no ready ${network} address after ${ADDRESS_ATTEMPTS} attempts`);
      await this.addresses.fill(network, 1);
    }
  }

  /**
   * Whether the merchant may open another order below MAX_OPEN_ORDERS_PER_MERCHANT, and if so its place
   * is held (`admitted`) until the create ends. The test is on an upper bound of its open orders: a
   * count at most OPEN_COUNT_MAX_AGE_MS old (one query for all the creates waiting on it), plus this
   * process's creates since, plus its creates under way; counted afresh when that reaches the bound.
   * On one instance the bound is exact, however many creates arrive at once. Several instances each
   * see the others' orders as of their count: together they may pass it by what the others created
   * within its age (5 s).
   */
  private async mayOpenAnother(merchantId: string): Promise<boolean> {
    const current = this.openCounts.get(merchantId);
    if (!current || performance.now() - current.at >= OPEN_COUNT_MAX_AGE_MS) this.recount(merchantId);
    if (await this.admitWithin(merchantId)) return true;
    this.recount(merchantId); // paid or expired orders may have freed places
    return this.admitWithin(merchantId);
  }

  /** Holds a place if the merchant's latest count, its creates since and those under way leave one. */
  private async admitWithin(merchantId: string): Promise<boolean> {
    for (;;) {
      const counted = this.openCounts.get(merchantId)!;
      const open = await counted.open;
      // A newer count replaced this one meanwhile: creates since were counted on it.
      if (this.openCounts.get(merchantId) !== counted) continue;
      const underWay = this.admitted.get(merchantId) ?? 0;
      if (open + counted.createdSince + underWay >= this.config.maxOpenOrdersPerMerchant) return false;
      this.admitted.set(merchantId, underWay + 1);
      return true;
    }
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

  /** An order as its read shows it (its JSON, ORDER_JSON_SQL), with the transfers seen and not yet confirmed: one batched query. */
  read(merchantId: string, uuid: string): Promise<OrderJsonRow | undefined> {
    return this.readOwned(merchantId, uuid);
  }
}
