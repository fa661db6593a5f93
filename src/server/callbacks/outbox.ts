// The transactional outbox (docs/design.md#callbacks) and the statements that move its rows: an event (an
// order's or a withdrawal's) is written in the same transaction as the change it reports, with its body
// frozen, so that it is sent if and only if the change committed; the dispatcher (dispatcher.ts) claims
// due rows with FOR UPDATE SKIP LOCKED (so that several instances share the work) under a lease token
// that alone may record the outcome, one event of a subject at a time in its sequence order, each
// merchant and destination within its share of the slots (fairness.ts), and records every attempt,
// scheduling retries with jitter.
// Every due time and lease is the database's clock (now()), one clock for all instances.
import { randomBytes } from 'node:crypto';
import type { DepositOrderCallback, Withdrawal, WithdrawalCallback } from '../../../generated/schema.js';
import type { Database, Sql } from '../db/database.js';
import type { Logger } from '../shared/logger.js';
import { platformDateTime } from '../shared/time.js';
import type { DeliveryResult } from './delivery.js';
import type { ClaimCapacity, FairnessLimits } from './fairness.js';

/** An order's event: its body is the order's callback, `occurredAt` and `sequence` added last. */
export interface OrderCallbackEvent {
  merchantId: string;
  orderUuid: string;
  url: string;
  /** When the event happened: the block's time of a deposit, the order's expiredAt for an expiry. */
  occurredAt: Date;
  payload: Omit<DepositOrderCallback, 'occurredAt' | 'sequence'>;
}

/** A withdrawal's event: its body is `{event, occurredAt, sequence, withdrawal}` (WithdrawalCallback). */
export interface WithdrawalCallbackEvent {
  merchantId: string;
  withdrawalUuid: string;
  /** The withdrawal's callbackUrl; null when it has none: the event is in the feed, with nothing to deliver. */
  url: string | null;
  occurredAt: Date;
  event: WithdrawalCallback['event'];
  withdrawal: Withdrawal;
}

export type CallbackEvent = OrderCallbackEvent | WithdrawalCallbackEvent;

/** A webhook-id: unique per event, the same on every retry (the merchant's deduplication key). */
export function newWebhookId(): string {
  return `msg_${randomBytes(18).toString('base64url')}`;
}

/**
 * Writes the event, due at once by the database's clock, with its subject's next sequence number (an
 * order's or a withdrawal's). The caller holds the subject's row lock (it has just updated the order or
 * the withdrawal in this transaction), so the events of one subject are numbered one at a time; the
 * unique (order_uuid, sequence) and (withdrawal_uuid, sequence) indexes stand behind that.
 */
export async function enqueueCallback(tx: Sql, event: CallbackEvent): Promise<string> {
  const webhookId = newWebhookId();
  const [column, subject] = 'orderUuid' in event ? ['order_uuid', event.orderUuid] : ['withdrawal_uuid', event.withdrawalUuid];
  const [last] = await tx.query<{ sequence: number | null }>(`SELECT max(sequence) AS sequence FROM callback_outbox WHERE ${column} = $1`, [subject]);
  const stamp = { occurredAt: platformDateTime(event.occurredAt), sequence: (last?.sequence ?? 0) + 1 };
  const body: DepositOrderCallback | WithdrawalCallback =
    'orderUuid' in event ? { ...event.payload, ...stamp } : { event: event.event, ...stamp, withdrawal: event.withdrawal };
  await tx.query(
    `INSERT INTO callback_outbox (webhook_id, merchant_id, ${column}, event, url, body, next_attempt_at, sequence, state)
     VALUES ($1, $2, $3, $4, $5, $6, now(), $7, $8)`,
    [webhookId, event.merchantId, subject, body.event, event.url, JSON.stringify(body), stamp.sequence, event.url === null ? 'none' : 'pending'],
  );
  return webhookId;
}

export interface OutboxRow {
  id: bigint;
  webhook_id: string;
  merchant_id: string;
  url: string;
  body: string;
  attempts: number;
  secret_version: number;
  /** The merchant's secret version before its last rotation while the grace period runs (the database's clock at the claim), else null: the callback carries its signature too. */
  previous_secret_version: number | null;
  /** The claim: only the dispatcher holding the row's current token records the attempt's outcome. */
  lease_token: string;
  /** The URL's scheme, host and port, lower case: the key of the destination's slots and breaker. */
  destination: string;
}

/** The destination of an outbox row in SQL: the URL's scheme, host and port, lower case (OutboxRow.destination). */
const DESTINATION_SQL = "lower(substring(o.url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+'))";

/** When the attempt after `attempts` failed ones is due: the schedule's delay ±10 % jitter; undefined when it is over. */
export function nextAttemptDelayMs(attempts: number, schedule: readonly number[], random = Math.random): number | undefined {
  const seconds = schedule[attempts - 1];
  if (seconds === undefined) return undefined;
  return Math.round(seconds * 1000 * (0.9 + 0.2 * random()));
}

/**
 * Claims due rows under a fresh lease token: their next attempt moves past twice the delivery
 * timeout (a delivery and its record take at most one), so no other instance takes them meanwhile,
 * and a row whose dispatcher died is due again soon after. An event waits while an earlier one of
 * the same order (or withdrawal) is still pending: a merchant receives their events in sequence order.
 * Fair: each merchant and each destination gets at most its free slots (ranked by due time within
 * it), and the merchants' first rows come before anyone's second.
 */
export function claimDue(
  db: Database,
  limit: number,
  timeoutSeconds: number,
  { merchants, destinations }: ClaimCapacity,
  { perMerchant, perDestination }: Pick<FairnessLimits, 'perMerchant' | 'perDestination'>,
): Promise<OutboxRow[]> {
  const full = (keys: string[], free: number[]) => keys.filter((_, i) => free[i] === 0);
  // One statement, atomic on its own, so not in a transaction of its own: a transaction's statements go
  // unprepared on PGlite, which planned this one afresh at every claim (2 ms of the event loop every
  // dispatch interval, 0.3 ms prepared), and the pages a merchant read meanwhile waited for it.
  return db.query<OutboxRow>(
    // The earliest due rows of merchants and destinations with a free slot, read through the due
    // index and bounded ($9); then ranked. An open breaker's events were moved past its cooldown
    // (backOff), so the rows skipped here are only the few that fell due since.
    `WITH candidates AS (
       SELECT o.id, o.merchant_id, o.next_attempt_at, d.destination
         FROM callback_outbox o
         CROSS JOIN LATERAL (SELECT ${DESTINATION_SQL} AS destination) d
        WHERE o.state = 'pending' AND o.next_attempt_at <= now()
          AND NOT o.merchant_id = ANY($10::uuid[]) AND NOT d.destination = ANY($11::text[])
          AND NOT EXISTS (SELECT 1 FROM callback_outbox earlier
                           WHERE earlier.order_uuid = o.order_uuid AND earlier.sequence < o.sequence AND earlier.state = 'pending')
          AND NOT EXISTS (SELECT 1 FROM callback_outbox earlier
                           WHERE earlier.withdrawal_uuid = o.withdrawal_uuid AND earlier.sequence < o.sequence AND earlier.state = 'pending')
        ORDER BY o.next_attempt_at LIMIT $9),
     ranked AS (
       SELECT c.id, c.next_attempt_at, c.destination,
              row_number() OVER (PARTITION BY c.merchant_id ORDER BY c.next_attempt_at, c.id) AS merchant_rank,
              row_number() OVER (PARTITION BY c.destination ORDER BY c.next_attempt_at, c.id) AS destination_rank,
              coalesce(bm.free, $3) AS merchant_free, coalesce(bd.free, $4) AS destination_free,
              bm.merchant_id IS NOT NULL AS busy
         FROM candidates c
         LEFT JOIN unnest($5::uuid[], $6::int[]) AS bm (merchant_id, free) ON bm.merchant_id = c.merchant_id
         LEFT JOIN unnest($7::text[], $8::int[]) AS bd (destination, free) ON bd.destination = c.destination),
     due AS (
       SELECT o.id, r.destination FROM callback_outbox o JOIN ranked r ON r.id = o.id
        WHERE r.merchant_rank <= r.merchant_free AND r.destination_rank <= r.destination_free
          -- Checked again on the locked row: one another instance claimed since the ranking is skipped.
          AND o.state = 'pending' AND o.next_attempt_at <= now()
        -- A merchant with nothing in flight first, then each merchant's first event before anyone's second.
        ORDER BY r.busy, r.merchant_rank, r.next_attempt_at LIMIT $1 FOR UPDATE OF o SKIP LOCKED)
     UPDATE callback_outbox o SET next_attempt_at = now() + make_interval(secs => $2), lease_token = gen_random_uuid()
       FROM due, merchants m
      WHERE o.id = due.id AND m.id = o.merchant_id
    RETURNING o.id, o.webhook_id, o.merchant_id, o.url, o.body, o.attempts, o.lease_token, m.secret_version,
              CASE WHEN m.previous_secret_until > now() THEN m.previous_secret_version END AS previous_secret_version, due.destination`,
    [
      limit, 2 * timeoutSeconds + 1, perMerchant, perDestination,
      merchants.ids, merchants.free, destinations.keys, destinations.free,
      Math.max(256, 16 * limit), full(merchants.ids, merchants.free), full(destinations.keys, destinations.free),
    ],
  );
}

/**
 * A destination's breaker opened: its events not under way wait out the cooldown in the database
 * (the database's clock), so they leave the due index and no claim reads them meanwhile.
 */
export async function backOff(db: Database, destination: string, cooldownMs: number): Promise<void> {
  await db.query(
    `UPDATE callback_outbox o SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
      WHERE o.state = 'pending' AND o.lease_token IS NULL AND o.next_attempt_at < now() + make_interval(secs => $2::double precision / 1000)
        AND ${DESTINATION_SQL} = $1`,
    [destination, cooldownMs],
  );
}

/**
 * Records an attempt's outcome: 2xx delivers, 410 stops, anything else is due again after the
 * schedule's next delay, or failed when it is over.
 */
export async function recordAttempt(db: Database, row: OutboxRow, result: DeliveryResult, retrySchedule: readonly number[], log?: Logger): Promise<void> {
  const attempts = row.attempts + 1;
  const status = result.statusCode;
  let state: 'pending' | 'delivered' | 'gone' | 'failed' = 'pending';
  let delayMs = 0;
  if (status !== undefined && status >= 200 && status < 300) state = 'delivered';
  else if (status === 410) state = 'gone';
  else {
    const delay = nextAttemptDelayMs(attempts, retrySchedule);
    if (delay === undefined) state = 'failed';
    else delayMs = delay;
  }
  const error = result.error ?? (state === 'pending' || state === 'failed' ? `answered ${status}` : undefined);
  const current = await db.transaction(async (tx) => {
    const errorKind = result.errorKind ?? (state === 'delivered' ? null : 'http_status');
    await tx.query('INSERT INTO callback_attempts (outbox_id, attempted_at, status_code, latency_ms, error, error_kind) VALUES ($1, now(), $2, $3, $4, $5)', [
      row.id, status ?? null, result.latencyMs, error ?? null, errorKind,
    ]);
    // Guarded by the claim: after a lease ran out and another dispatcher (or a redelivery) took the
    // row, this late result is history only; it must not overwrite the newer state.
    const updated = await tx.query(
      `UPDATE callback_outbox SET attempts = attempts + 1, state = $2, next_attempt_at = now() + make_interval(secs => $3::double precision / 1000), lease_token = NULL,
              delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE delivered_at END
        WHERE id = $1 AND lease_token = $4 RETURNING id`,
      [row.id, state, delayMs, row.lease_token],
    );
    return updated.length === 1;
  });
  if (!current) log?.warn({ webhookId: row.webhook_id, status, state }, 'callback attempt outlived its lease: recorded as history, the state left to the newer claim');
  else if (state !== 'delivered') log?.warn({ webhookId: row.webhook_id, status, error: result.error, state }, 'callback not delivered');
}
