// The sandbox's deposit helper: a made-up transfer to one of the merchant's orders, credited through
// the same path as a transfer read from the chain (deposits.ts), idempotent on the request's key.
import { createHash } from 'node:crypto';
import type { Database } from '../db/database.js';
import { creditTransfers } from './deposits.js';
import { readOrderRow, toDepositOrder, type OrderView } from './order-rows.js';

export type SandboxDepositResult =
  | { outcome: 'credited' | 'replayed'; order: OrderView }
  | { outcome: 'not_found' | 'not_watched' | 'total_too_large' }
  | { outcome: 'key_reused'; previousAmount: bigint };

export interface SandboxDeposit {
  merchantId: string;
  orderUuid: string;
  amount: bigint;
  /** What names the made-up transaction: the Idempotency-Key, or without one the signed request itself. */
  seed: string;
  now: Date;
  watchWindowSeconds: number;
}

export async function sandboxDeposit(db: Database, deposit: SandboxDeposit): Promise<SandboxDepositResult> {
  const { merchantId, orderUuid, amount, now } = deposit;
  const order = await readOrderRow(db, merchantId, orderUuid);
  if (!order) return { outcome: 'not_found' };
  // A retry or a replay names the same transaction, so the crediting path's identity credits it once.
  const hash = createHash('sha256').update(`sandbox-deposit\0${merchantId}\0${order.uuid}\0${deposit.seed}`).digest('hex');
  const txHash = order.blockchain === 'Tron' ? hash : `0x${hash}`;
  const { credits, refusals } = await db.transaction((tx) =>
    creditTransfers(tx, [{ network: order.blockchain, txHash, logIndex: 0, blockNumber: 0n, to: order.address, amount, source: 'sandbox' }], {
      now,
      at: now,
      watchWindowSeconds: deposit.watchWindowSeconds,
    }),
  );
  // A refusal is decided under the order's row lock: two concurrent deposits cannot both pass the bound.
  if (refusals[0]?.kind === 'total_too_large') return { outcome: 'total_too_large' };
  if (credits.length === 0) {
    const [previous] = await db.query<{ amount: bigint }>('SELECT amount FROM deposits WHERE network = $1 AND tx_hash = $2 AND order_uuid = $3', [order.blockchain, txHash, order.uuid]);
    if (!previous) return { outcome: 'not_watched' };
    if (previous.amount !== amount) return { outcome: 'key_reused', previousAmount: previous.amount };
  }
  const current = (await readOrderRow(db, merchantId, orderUuid))!;
  return { outcome: credits.length > 0 ? 'credited' : 'replayed', order: toDepositOrder(current) };
}
