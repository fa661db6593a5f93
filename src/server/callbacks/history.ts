// What the operator sees of callbacks (partner-api callbacks list|redeliver): every event with its
// delivery state and every attempt (status, latency, error), and a way to send one again.
import type { Database } from '../db/database.js';

export const CALLBACK_STATES = ['pending', 'delivered', 'gone', 'failed'] as const;
export type CallbackState = (typeof CALLBACK_STATES)[number];

export interface CallbackAttempt {
  at: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export interface CallbackRecord {
  webhookId: string;
  orderUuid: string;
  event: string;
  url: string;
  state: CallbackState;
  attempts: CallbackAttempt[];
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

interface Row {
  id: bigint;
  webhook_id: string;
  order_uuid: string;
  event: string;
  url: string;
  state: CallbackState;
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
}

export async function listCallbacks(db: Database, filter: { state?: CallbackState | undefined; order?: string | undefined; limit: number }): Promise<CallbackRecord[]> {
  const rows = await db.query<Row>(
    `SELECT id, webhook_id, order_uuid, event, url, state, next_attempt_at, created_at, delivered_at FROM callback_outbox
      WHERE ($1::text IS NULL OR state = $1) AND ($2::uuid IS NULL OR order_uuid = $2)
      ORDER BY id DESC LIMIT $3`,
    [filter.state ?? null, filter.order ?? null, filter.limit],
  );
  const attempts = rows.length
    ? await db.query<{ outbox_id: bigint; attempted_at: Date; status_code: number | null; latency_ms: number; error: string | null }>(
        'SELECT outbox_id, attempted_at, status_code, latency_ms, error FROM callback_attempts WHERE outbox_id = ANY($1::bigint[]) ORDER BY id',
        [rows.map((r) => r.id.toString())],
      )
    : [];
  return rows.map((row) => ({
    webhookId: row.webhook_id,
    orderUuid: row.order_uuid,
    event: row.event,
    url: row.url,
    state: row.state,
    attempts: attempts
      .filter((a) => a.outbox_id === row.id)
      .map((a) => ({ at: a.attempted_at.toISOString(), statusCode: a.status_code, latencyMs: a.latency_ms, error: a.error })),
    nextAttemptAt: row.state === 'pending' ? row.next_attempt_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    deliveredAt: row.delivered_at?.toISOString() ?? null,
  }));
}

/** A redelivery asked for while an attempt of the same event is under way. */
export class CallbackInFlightError extends Error {}

/**
 * Makes the event due again now, under the same webhook-id. Refused while a dispatcher holds a live
 * lease on it (an attempt is under way): the event would go out twice at once. A lease that ran out
 * (its dispatcher died) is taken over, and that dispatcher's late result no longer counts.
 */
export async function redeliverCallback(db: Database, webhookId: string): Promise<CallbackRecord | undefined> {
  // The database's clock, as the dispatchers' leases: one clock for every instance and command.
  const [row] = await db.query<{ order_uuid: string }>(
    `UPDATE callback_outbox SET state = 'pending', next_attempt_at = now(), lease_token = NULL
      WHERE webhook_id = $1 AND NOT (lease_token IS NOT NULL AND next_attempt_at > now()) RETURNING order_uuid`,
    [webhookId],
  );
  if (!row) {
    const [inFlight] = await db.query<{ next_attempt_at: Date }>('SELECT next_attempt_at FROM callback_outbox WHERE webhook_id = $1', [webhookId]);
    if (inFlight) throw new CallbackInFlightError(`callback ${webhookId} is being delivered right now (its attempt's lease ends ${inFlight.next_attempt_at.toISOString()}): see callbacks list, try again after`);
    return undefined;
  }
  return (await listCallbacks(db, { order: row.order_uuid, limit: 10_000 })).find((r) => r.webhookId === webhookId);
}

export function formatCallback(record: CallbackRecord): string {
  const last = record.attempts.at(-1);
  const outcome = last ? `${last.statusCode ?? 'no answer'} in ${last.latencyMs} ms${last.error ? ` (${last.error})` : ''}` : 'not attempted';
  return `${record.webhookId}  ${record.event.padEnd(13)}  ${record.state.padEnd(9)}  ${record.attempts.length} attempt(s), last ${outcome}  order ${record.orderUuid}  → ${record.url}`;
}
