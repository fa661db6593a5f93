// Order expiry (docs/design.md#order-lifecycle): NEW orders past expiredAt without enough deposits
// become EXPIRED, by chain time on a scanned network, each with its callback written to the outbox in
// the same transaction. Run by the expiry job (jobs/jobs.ts).
import type { Network } from '../shared/network.js';
import { enqueueCallback } from '../callbacks/outbox.js';
import type { Database } from '../db/database.js';
import { parsePlatformDateTime } from '../shared/time.js';
import { ORDER_COLUMNS, toDepositOrder, type OwnedOrderRow } from './order-rows.js';

/**
 * Moves orders past expiredAt without enough deposits to EXPIRED, each with its callback. An order of
 * a network that has a scan position (its row of chain_cursors) expires only once a scanner has committed a block from expiredAt or
 * later: a payment mined before expiredAt but not yet confirmed is credited first, never after an
 * expiry. That holds in every instance, one without that network's RPC URL too (it never expires
 * such orders by its clock alone). The orders of networks never scanned (the sandbox's) expire by the
 * clock: the database's (`now` undefined), one clock for every instance; tests may give their own.
 */
export async function expireOrders(db: Database, now?: Date, scannedNetworks: readonly Network[] = [], limit = 500): Promise<number> {
  return db.transaction(async (tx) => {
    const at = now ?? (await tx.query<{ now: Date }>('SELECT now() AS now'))[0]!.now;
    const rows = await tx.query<OwnedOrderRow>(
      `UPDATE deposit_orders o SET status = 'EXPIRED', updated_at = now()
        WHERE o.uuid IN (SELECT o.uuid FROM deposit_orders o
                         LEFT JOIN chain_cursors c ON c.network = o.blockchain
                        WHERE o.status = 'NEW' AND o.expired_at <= $1
                          AND ((c.network IS NULL AND NOT o.blockchain = ANY($3::text[])) OR c.scanned_block_time >= o.expired_at)
                        ORDER BY o.expired_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED)
        RETURNING o.merchant_id, ${ORDER_COLUMNS}`,
      [at, limit, scannedNetworks],
    );
    for (const row of rows) {
      const payload = { event: 'order.expired' as const, ...toDepositOrder(row) };
      await enqueueCallback(tx, { merchantId: row.merchant_id, orderUuid: row.uuid, url: row.callback_url, occurredAt: parsePlatformDateTime(payload.expiredAt), payload });
    }
    return rows.length;
  });
}
