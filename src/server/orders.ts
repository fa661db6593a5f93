// Deposit orders: idempotent creation on (merchant, externalId), a fresh address from the network's
// sequence, its QR code, and the read model of the contract.
import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { AddressThread, type IssuedAddress } from './address-thread.js';
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
  address: string;
  address_qr: string;
  status: DepositOrder['status'];
  min_amount: bigint;
  received_amount: bigint;
  /** Already in the API's date shape: formatted by SQL, no Date parsed and printed per read. */
  expired_at: string;
}

export const ORDER_COLUMNS = `uuid, blockchain, currency, customer_id, callback_url, address, address_qr, status, min_amount,
  received_amount, to_char(expired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS expired_at`;

/** The read of one order by its primary key (and owner). */
export const READ_ORDER_SQL = `SELECT ${ORDER_COLUMNS} FROM deposit_orders WHERE uuid = $1 AND merchant_id = $2`;

/** The merchants' reads of orders, the platform's hottest query: several uuids at once (batched-reads.ts). */
const READ_ORDERS_SQL = `SELECT merchant_id, ${ORDER_COLUMNS} FROM deposit_orders WHERE uuid = ANY($1::uuid[])`;

const SEQUENCE: Record<Network, string> = { Tron: 'address_index_tron', Ethereum: 'address_index_ethereum' };

export function toCreatedDepositOrder(row: OrderRow): CreatedDepositOrder {
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

export function toDepositOrder(row: OrderRow): DepositOrder {
  return { ...toCreatedDepositOrder(row), receivedAmount: toJsonInteger(row.received_amount) };
}

export type CreateResult =
  | { outcome: 'created' | 'replayed'; order: CreatedDepositOrder }
  | { outcome: 'conflict'; existing: OrderRow };

function sameRequest(row: OrderRow, request: CreateDepositOrderRequest): boolean {
  return (
    row.blockchain === request.blockchain &&
    row.currency === request.currency &&
    row.customer_id === request.customerId &&
    row.callback_url === request.callbackUrl
  );
}

interface CreateKey {
  merchantId: string;
  externalId: string;
  network: Network;
}

/** The order already made with the externalId, or else (next_index) the address index taken for it. */
type LookupRow = Partial<OrderRow> & { next_index: bigint | null };

/**
 * For each (merchant, externalId, network) in order: the order made before, or the next address
 * index of its network. A CASE evaluates nextval only where the order is missing, so a replay takes
 * no index; two creates of one externalId in one batch take one each, and the insert keeps one order.
 */
const LOOKUP_OR_NEXT_INDEX_SQL = `
  SELECT ${ORDER_COLUMNS},
         CASE WHEN uuid IS NULL THEN nextval(CASE input.network WHEN 'Tron' THEN '${SEQUENCE.Tron}'::regclass ELSE '${SEQUENCE.Ethereum}'::regclass END) END AS next_index
    FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS input (merchant, external, network, position)
    LEFT JOIN deposit_orders ON merchant_id = input.merchant AND external_id = input.external
   ORDER BY input.position`;

/** uuid, merchant, externalId, network, currency, customerId, callbackUrl, index, address, QR, minAmount, expiredAt. */
type InsertValues = [string, string, string, Network, string, string, string, string, string, string, string, string];

const INSERT_ORDERS_SQL = `
  INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url,
                              address_index, address, address_qr, min_amount, expired_at)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                       $8::bigint[], $9::text[], $10::text[], $11::bigint[], $12::timestamptz[])
  ON CONFLICT (merchant_id, external_id) DO NOTHING
  RETURNING ${ORDER_COLUMNS}`;

/** Addresses per message to the address thread (see the constructor). */
const ADDRESS_CHUNK = 4;

export class Orders {
  private readonly addressThread: AddressThread;
  private readonly addresses: DataLoader<readonly [Network, number], IssuedAddress>;
  private readonly readOwned: (merchantId: string, uuid: string) => Promise<(OrderRow & OwnedRow) | undefined>;
  private readonly lookups: DataLoader<CreateKey, LookupRow>;
  private readonly inserts: DataLoader<InsertValues, OrderRow | undefined>;

  constructor(
    private readonly db: Database,
    private readonly config: Pick<Config, 'networks' | 'orderLifetimeSeconds'>,
    private readonly now: Clock,
  ) {
    // The xpubs were checked when the config was loaded (config.ts), so the thread cannot refuse them.
    this.addressThread = new AddressThread({ Tron: config.networks.Tron.xpub, Ethereum: config.networks.Ethereum.xpub });
    this.readOwned = batchedOwnedReads(db, READ_ORDERS_SQL);
    // Creates are coalesced like reads: those that arrive in one turn of the event loop share one
    // lookup statement, and those whose addresses come back together share one insert.
    this.lookups = new DataLoader(async (keys: readonly CreateKey[]) => {
      const rows = await db.query<LookupRow>(LOOKUP_OR_NEXT_INDEX_SQL, [keys.map((k) => k.merchantId), keys.map((k) => k.externalId), keys.map((k) => k.network)]);
      return keys.map((_, i) => rows[i]!);
    }, ONE_TURN_BATCHES);
    // The addresses of a turn go to the address thread in chunks: the first chunk's creates go on to
    // their insert while the thread makes the next, so the two threads work at the same time.
    this.addresses = new DataLoader((indexes) => this.addressThread.issue(indexes), { ...ONE_TURN_BATCHES, maxBatchSize: ADDRESS_CHUNK });
    this.inserts = new DataLoader(async (rows: readonly InsertValues[]) => {
      const columns = rows[0]!.map((_, column) => rows.map((row) => row[column]!));
      const inserted = new Map((await db.query<OrderRow>(INSERT_ORDERS_SQL, columns)).map((row) => [row.uuid, row]));
      return rows.map((row) => inserted.get(row[0]));
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
    const found = await this.lookups.load({ merchantId, externalId: request.externalId, network });
    if (found.next_index === null) return this.replayOrConflict(found as OrderRow, request);
    const index = found.next_index;
    const { address, qr } = await this.addresses.load([network, Number(index)]);
    const expiredAt = new Date(this.now() + this.config.orderLifetimeSeconds * 1000);
    // ON CONFLICT: a concurrent create with the same externalId won the race; answer as a replay.
    const inserted = await this.inserts.load([
      randomUUID(), merchantId, request.externalId, network, request.currency, request.customerId, request.callbackUrl,
      String(index), address, qr, String(this.config.networks[network].minAmount), expiredAt.toISOString(),
    ]);
    if (inserted) return { outcome: 'created', order: toCreatedDepositOrder(inserted) };
    return this.replayOrConflict((await this.existing(this.db, merchantId, request.externalId))!, request);
  }

  /** Stops the address thread. */
  close(): Promise<void> {
    return this.addressThread.close();
  }

  async read(merchantId: string, uuid: string): Promise<DepositOrder | undefined> {
    const row = await this.readOwned(merchantId, uuid);
    return row && toDepositOrder(row);
  }
}
