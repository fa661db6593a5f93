// Callbacks' delivery history: what the operator sees (partner-api callbacks list: every event with its
// delivery state and every attempt) and what a merchant sees of its own event (its deliveries). Sending
// one again is ./redelivery.ts.
import type { components } from '../../../generated/schema.js';
import type { Database, Sql } from '../db/database.js';
import { jsonObjectSql, rowMapper, selectedColumns, type JsonField } from '../db/json-fields.js';
import { platformDateTime } from '../shared/time.js';

export type DeliveryState = components['schemas']['DeliveryState'];
export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'delivered', 'gone', 'failed'];

export type EventDelivery = components['schemas']['EventDelivery'];

/** The columns of a callback_outbox row an event's delivery is made of. */
export interface DeliveryColumns {
  state: DeliveryState;
  url: string;
  attempts: number;
  /** Only for a pending event (next_attempt_at is NOT NULL in the table). */
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/** A time of the outbox's in the API's date shape. */
const API_TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;

/**
 * An event's delivery, in the contract's order, in a query whose callback_outbox row is `o`: the JSON the
 * database writes (DELIVERY_JSON_SQL: the feed writes 100 a page), the columns (DELIVERY_COLUMNS) and the
 * object of the deliveries endpoint (eventDelivery), all made from this table (db/json-fields.ts). The
 * state (one of DELIVERY_STATES) and the times (digits from to_char) are written as they are; the URL is
 * the merchant's, written by to_json. The next attempt's time is formatted only where it is shown, for an
 * event still pending (a feed page of 100 delivered events formatted 100 for nothing).
 */
export const DELIVERY_FIELDS: readonly JsonField<DeliveryColumns>[] = [
  { name: 'state', column: 'state', sql: { expression: 'o.state', json: 'as-is' } },
  { name: 'url', column: 'url', sql: { expression: 'o.url', json: 'to_json' } },
  { name: 'attempts', column: 'attempts', sql: { expression: 'o.attempts', json: 'number' } },
  { name: 'nextAttemptAt', column: 'next_attempt_at', optional: true, sql: { expression: `CASE WHEN o.state = 'pending' THEN ${API_TIME('o.next_attempt_at')} END`, json: 'as-is' } },
  { name: 'deliveredAt', column: 'delivered_at', optional: true, sql: { expression: API_TIME('o.delivered_at'), json: 'as-is' } },
];

export const DELIVERY_COLUMNS = selectedColumns(DELIVERY_FIELDS);
export const DELIVERY_JSON_SQL = jsonObjectSql(DELIVERY_FIELDS);

const delivery = rowMapper(DELIVERY_FIELDS);

export function eventDelivery(row: DeliveryColumns): EventDelivery {
  return delivery(row) as EventDelivery;
}

export interface CallbackAttempt {
  at: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export interface CallbackRecord {
  webhookId: string;
  /** The event's subject: an order's uuid, or a withdrawal's (the other null). */
  orderUuid: string | null;
  withdrawalUuid: string | null;
  event: string;
  /** Null for an event with nothing to deliver (a withdrawal without a callbackUrl; state 'none'). */
  url: string | null;
  state: DeliveryState | 'none';
  attempts: CallbackAttempt[];
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

interface Row {
  id: bigint;
  webhook_id: string;
  order_uuid: string | null;
  withdrawal_uuid: string | null;
  event: string;
  url: string | null;
  state: DeliveryState | 'none';
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
}

/** The operator's list of events (`partner-api callbacks list`), newest first; `subject` an order's or a withdrawal's uuid. */
export async function listCallbacks(db: Database, filter: { state?: DeliveryState | undefined; subject?: string | undefined; limit: number }): Promise<CallbackRecord[]> {
  const rows = await db.query<Row>(
    `SELECT id, webhook_id, order_uuid, withdrawal_uuid, event, url, state, next_attempt_at, created_at, delivered_at FROM callback_outbox
      WHERE ($1::text IS NULL OR state = $1) AND ($2::uuid IS NULL OR order_uuid = $2 OR withdrawal_uuid = $2)
      ORDER BY id DESC LIMIT $3`,
    [filter.state ?? null, filter.subject ?? null, filter.limit],
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
    withdrawalUuid: row.withdrawal_uuid,
    event: row.event,
    url: row.url,
    state: row.state,
    attempts: attempts
      .filter((a) => a.outbox_id === row.id)
      .map((a) => ({ at: platformDateTime(a.attempted_at), statusCode: a.status_code, latencyMs: a.latency_ms, error: a.error })),
    // The API's one date shape (UTC), as the merchants' deliveries show these times.
    nextAttemptAt: row.state === 'pending' ? platformDateTime(row.next_attempt_at) : null,
    createdAt: platformDateTime(row.created_at),
    deliveredAt: row.delivered_at ? platformDateTime(row.delivered_at) : null,
  }));
}

export type EventDeliveries = components['schemas']['EventDeliveries'];
export type DeliveryAttempt = components['schemas']['DeliveryAttempt'];

/** Attempts shown of one event, newest first: redeliveries are limited, but not in number over time. */
const ATTEMPTS_SHOWN = 100;

/**
 * A merchant's event's delivery state and its last attempts, newest first; undefined when the merchant has
 * no such event, 'no callback' when the event has nothing to deliver (a withdrawal without a callbackUrl).
 */
export async function eventDeliveries(sql: Sql, merchantId: string, webhookId: string): Promise<EventDeliveries | 'no callback' | undefined> {
  const [event] = await sql.query<Omit<DeliveryColumns, 'url'> & { id: bigint; url: string | null }>(
    `SELECT o.id, ${DELIVERY_COLUMNS} FROM callback_outbox o WHERE o.webhook_id = $1 AND o.merchant_id = $2`,
    [webhookId, merchantId],
  );
  if (!event) return undefined;
  if (event.url === null) return 'no callback';
  const url = event.url;
  const attempts = await sql.query<{ attempted_at: string; status_code: number | null; latency_ms: number; error: string | null; error_kind: DeliveryAttempt['error'] | null }>(
    `SELECT to_char(attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS attempted_at, status_code, latency_ms, error, error_kind
       FROM callback_attempts WHERE outbox_id = $1 ORDER BY id DESC LIMIT ${ATTEMPTS_SHOWN}`,
    [event.id],
  );
  return {
    eventId: webhookId,
    delivery: eventDelivery({ ...event, url }),
    data: attempts.map((a) => ({
      attemptedAt: a.attempted_at,
      url,
      ...(a.status_code === null ? {} : { statusCode: a.status_code }),
      durationMs: a.latency_ms,
      // Rows from before error kinds were recorded say only their message.
      ...(a.error_kind ?? a.error ? { error: a.error_kind ?? 'other' } : {}),
      ...(a.error ? { errorMessage: a.error } : {}),
    })),
  };
}

