// Sending an event again now, under the same webhook-id: the operator's (`partner-api callbacks
// redeliver`, any merchant's event) and a merchant's (`POST …/events/{eventId}/redeliver`, its own).
import type { Database } from '../db/database.js';
import { eventDeliveries, listCallbacks, type CallbackRecord, type EventDeliveries } from './history.js';
import { platformDateTime } from '../shared/time.js';

/** A redelivery asked for while an attempt of the same event is under way. */
export class CallbackInFlightError extends Error {}

/** A redelivery of an event with nothing to deliver: its withdrawal was created without a callbackUrl. */
export class NoCallbackError extends Error {}

/**
 * Makes the event due again now, under the same webhook-id. Refused while a dispatcher holds a live
 * lease on it (an attempt is under way): the event would go out twice at once. A lease that ran out
 * (its dispatcher died) is taken over, and that dispatcher's late result no longer counts.
 */
export async function redeliverCallback(db: Database, webhookId: string): Promise<CallbackRecord | undefined> {
  const subject = await makeDueAgain(db, webhookId, undefined);
  if (subject === undefined) return undefined;
  return (await listCallbacks(db, { subject, limit: 10_000 })).find((r) => r.webhookId === webhookId);
}

/**
 * The redelivery itself, for the operator (any merchant's event) or a merchant (`merchantId`: its own
 * only): the event's subject (its order's or withdrawal's uuid), or undefined when there is no such event.
 */
async function makeDueAgain(db: Database, webhookId: string, merchantId: string | undefined): Promise<string | undefined> {
  // The database's clock, as the dispatchers' leases: one clock for every instance and command.
  const [row] = await db.query<{ subject: string }>(
    `UPDATE callback_outbox SET state = 'pending', next_attempt_at = now(), lease_token = NULL
      WHERE webhook_id = $1 AND ($2::uuid IS NULL OR merchant_id = $2) AND url IS NOT NULL AND NOT (lease_token IS NOT NULL AND next_attempt_at > now())
      RETURNING coalesce(order_uuid, withdrawal_uuid) AS subject`,
    [webhookId, merchantId ?? null],
  );
  if (row) return row.subject;
  const [inFlight] = await db.query<{ next_attempt_at: Date; url: string | null }>(
    'SELECT next_attempt_at, url FROM callback_outbox WHERE webhook_id = $1 AND ($2::uuid IS NULL OR merchant_id = $2)',
    [webhookId, merchantId ?? null],
  );
  if (inFlight?.url === null) throw new NoCallbackError(`event ${webhookId} has no callback to deliver: its withdrawal was created without a callbackUrl`);
  if (inFlight) throw new CallbackInFlightError(`callback ${webhookId} is being delivered right now (its attempt's lease ends ${platformDateTime(inFlight.next_attempt_at)} UTC): try again after`);
  return undefined;
}

/** A merchant's redelivery of its own event: its deliveries after it, or undefined when it has no such event. */
export async function redeliverEvent(db: Database, merchantId: string, webhookId: string): Promise<EventDeliveries | undefined> {
  if ((await makeDueAgain(db, webhookId, merchantId)) === undefined) return undefined;
  const deliveries = await eventDeliveries(db, merchantId, webhookId);
  return deliveries === 'no callback' ? undefined : deliveries;
}
