// The transactional outbox (DESIGN §4): an event is written in the same transaction as the change it
// reports, with its body frozen, so that it is sent if and only if the change committed.
import { randomBytes } from 'node:crypto';
import type { DepositOrderCallback } from '../../../generated/schema.js';
import type { Sql } from '../db/database.js';

export interface CallbackEvent {
  merchantId: string;
  orderUuid: string;
  url: string;
  payload: DepositOrderCallback;
}

/** A webhook-id: unique per event, the same on every retry (the merchant's deduplication key). */
export function newWebhookId(): string {
  return `msg_${randomBytes(18).toString('base64url')}`;
}

export async function enqueueCallback(tx: Sql, event: CallbackEvent, now: Date): Promise<string> {
  const webhookId = newWebhookId();
  await tx.query(
    `INSERT INTO callback_outbox (webhook_id, merchant_id, order_uuid, event, url, body, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [webhookId, event.merchantId, event.orderUuid, event.payload.event, event.url, JSON.stringify(event.payload), now],
  );
  return webhookId;
}
