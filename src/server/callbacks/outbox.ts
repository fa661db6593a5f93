// The transactional outbox (docs/design.md#callbacks): an event is written in the same transaction as
// the change it reports, with its body frozen, so that it is sent if and only if the change committed.
import { randomBytes } from 'node:crypto';
import type { DepositOrderCallback } from '../../../generated/schema.js';
import type { Sql } from '../db/database.js';
import { platformDateTime } from '../shared/time.js';

export interface CallbackEvent {
  merchantId: string;
  orderUuid: string;
  url: string;
  /** When the event happened: the block's time of a deposit, the order's expiredAt for an expiry. */
  occurredAt: Date;
  payload: Omit<DepositOrderCallback, 'occurredAt' | 'sequence'>;
}

/** A webhook-id: unique per event, the same on every retry (the merchant's deduplication key). */
export function newWebhookId(): string {
  return `msg_${randomBytes(18).toString('base64url')}`;
}

/**
 * Writes the event, due at once by the database's clock, with the order's next sequence number. The caller holds the order's row lock (it
 * has just updated the order in this transaction), so the events of one order are numbered one at a
 * time; the unique (order_uuid, sequence) index stands behind that.
 */
export async function enqueueCallback(tx: Sql, event: CallbackEvent): Promise<string> {
  const webhookId = newWebhookId();
  const [last] = await tx.query<{ sequence: number | null }>('SELECT max(sequence) AS sequence FROM callback_outbox WHERE order_uuid = $1', [event.orderUuid]);
  const sequence = (last?.sequence ?? 0) + 1;
  const body: DepositOrderCallback = { ...event.payload, occurredAt: platformDateTime(event.occurredAt), sequence };
  await tx.query(
    `INSERT INTO callback_outbox (webhook_id, merchant_id, order_uuid, event, url, body, next_attempt_at, sequence)
     VALUES ($1, $2, $3, $4, $5, $6, now(), $7)`,
    [webhookId, event.merchantId, event.orderUuid, body.event, event.url, JSON.stringify(body), sequence],
  );
  return webhookId;
}
