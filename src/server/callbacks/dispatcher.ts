// Delivers the outbox (docs/design.md#callbacks): claims due rows with FOR UPDATE SKIP LOCKED (so that
// several instances share the work) under a lease token that alone may record the outcome, one event of
// an order at a time in its sequence order, each merchant and destination within its share of the slots
// (fairness.ts), signs each delivery per Standard Webhooks with the merchant's callback secret, POSTs
// it without following redirects within the timeout, records every attempt, and schedules retries with
// jitter. 2xx delivers, 410 stops, anything else retries until the schedule ends. Every due time and
// lease is the database's clock (now()), one clock for all instances whatever their own say.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Config } from '../config.js';
import { callbackLookup, callbackPolicy, callbackUrlProblem, type CallbackPolicy } from './destinations.js';
import type { Database } from '../db/database.js';
import type { Mode, SecretKeeper } from '../merchants/secrets.js';
import { createCallbackSigner } from '../../signing/index.js';
import type { Clock } from '../shared/time.js';
import { DeliveryFairness, fairnessFor, type FairnessLimits } from './fairness.js';
import { deliveryErrorKind, DeliveryTimeoutError, DestinationRefusedError, type DeliveryErrorKind } from './delivery-errors.js';
import type { Logger } from '../shared/logger.js';

export interface OutboxRow {
  id: bigint;
  webhook_id: string;
  merchant_id: string;
  url: string;
  body: string;
  attempts: number;
  secret_version: number;
  /** The claim: only the dispatcher holding the row's current token records the attempt's outcome. */
  lease_token: string;
  /** The URL's scheme, host and port, lower case: the key of the destination's slots and breaker. */
  destination: string;
}

/** The destination of an outbox row in SQL: the URL's scheme, host and port, lower case (OutboxRow.destination). */
const DESTINATION_SQL = "lower(substring(o.url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+'))";

export interface DeliveryResult {
  statusCode: number | undefined;
  latencyMs: number;
  error: string | undefined;
  /** Why there was no answer (a 2xx or not): undefined when the endpoint answered. */
  errorKind?: DeliveryErrorKind | undefined;
}

export interface DispatcherOptions {
  db: Database;
  secrets: SecretKeeper;
  config: Config['callbacks'];
  mode: Mode;
  /** The clock of the webhook-timestamp header only; due times and leases are the database's. */
  now: Clock;
  /** Deliveries under way at once. */
  concurrency?: number;
  /** Each merchant's and destination's share of them, and the breaker (fairnessFor(concurrency)). */
  fairness?: Partial<FairnessLimits>;
  log?: Logger;
}

/** When the attempt after `attempts` failed ones is due: the schedule's delay ±10 % jitter; undefined when it is over. */
export function nextAttemptDelayMs(attempts: number, schedule: readonly number[], random = Math.random): number | undefined {
  const seconds = schedule[attempts - 1];
  if (seconds === undefined) return undefined;
  return Math.round(seconds * 1000 * (0.9 + 0.2 * random()));
}

export class CallbackDispatcher {
  private running: { stop(): void; settled(): Promise<void> } | undefined;
  private stopped = true;
  private readonly concurrency: number;
  private readonly policy: CallbackPolicy;
  private readonly lookup: ReturnType<typeof callbackLookup>;
  private readonly fairness: DeliveryFairness;

  constructor(private readonly options: DispatcherOptions) {
    this.concurrency = options.concurrency ?? 16;
    this.policy = callbackPolicy(options.mode, options.config.allowPrivate);
    this.lookup = callbackLookup(this.policy);
    this.fairness = new DeliveryFairness({ ...fairnessFor(this.concurrency), ...options.fairness });
  }

  /**
   * Claims due rows under a fresh lease token: their next attempt moves past twice the delivery
   * timeout (a delivery and its record take at most one), so no other instance takes them meanwhile,
   * and a row whose dispatcher died is due again soon after. An event waits while an earlier one of
   * the same order is still pending: a merchant receives an order's events in their sequence order.
   * Fair: each merchant and each destination gets at most its free slots (ranked by due time within
   * it), and the merchants' first rows come before anyone's second.
   */
  private claim(limit: number): Promise<OutboxRow[]> {
    const { merchants, destinations } = this.fairness.capacity();
    const { perMerchant, perDestination } = this.fairness.limits;
    const full = (keys: string[], free: number[]) => keys.filter((_, i) => free[i] === 0);
    return this.options.db.transaction((tx) =>
      tx.query<OutboxRow>(
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
            ORDER BY o.next_attempt_at LIMIT $9),
         ranked AS (
           SELECT c.id, c.next_attempt_at, c.destination,
                  row_number() OVER (PARTITION BY c.merchant_id ORDER BY c.next_attempt_at, c.id) AS merchant_rank,
                  row_number() OVER (PARTITION BY c.destination ORDER BY c.next_attempt_at, c.id) AS destination_rank,
                  coalesce(bm.free, $3) AS merchant_free, coalesce(bd.free, $4) AS destination_free
             FROM candidates c
             LEFT JOIN unnest($5::uuid[], $6::int[]) AS bm (merchant_id, free) ON bm.merchant_id = c.merchant_id
             LEFT JOIN unnest($7::text[], $8::int[]) AS bd (destination, free) ON bd.destination = c.destination),
         due AS (
           SELECT o.id, r.destination FROM callback_outbox o JOIN ranked r ON r.id = o.id
            WHERE r.merchant_rank <= r.merchant_free AND r.destination_rank <= r.destination_free
              -- Checked again on the locked row: one another instance claimed since the ranking is skipped.
              AND o.state = 'pending' AND o.next_attempt_at <= now()
            ORDER BY r.merchant_rank, r.next_attempt_at LIMIT $1 FOR UPDATE OF o SKIP LOCKED)
         UPDATE callback_outbox o SET next_attempt_at = now() + make_interval(secs => $2), lease_token = gen_random_uuid()
           FROM due, merchants m
          WHERE o.id = due.id AND m.id = o.merchant_id
        RETURNING o.id, o.webhook_id, o.merchant_id, o.url, o.body, o.attempts, o.lease_token, m.secret_version, due.destination`,
        [
          limit, 2 * this.options.config.timeoutSeconds + 1, perMerchant, perDestination,
          merchants.ids, merchants.free, destinations.keys, destinations.free,
          Math.max(256, 16 * limit), full(merchants.ids, merchants.free), full(destinations.keys, destinations.free),
        ],
      ),
    );
  }

  /**
   * A destination's breaker opened: its events not under way wait out the cooldown in the database
   * (the database's clock), so they leave the due index and no claim reads them meanwhile.
   */
  private async backOff(destination: string, cooldownMs: number): Promise<void> {
    await this.options.db.query(
      `UPDATE callback_outbox o SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
        WHERE o.state = 'pending' AND o.lease_token IS NULL AND o.next_attempt_at < now() + make_interval(secs => $2::double precision / 1000)
          AND ${DESTINATION_SQL} = $1`,
      [destination, cooldownMs],
    );
  }

  private async deliver(row: OutboxRow): Promise<DeliveryResult> {
    const secret = this.options.secrets.callbackSecret(row.merchant_id, row.secret_version);
    const timestamp = Math.floor(this.options.now() / 1000);
    const signature = await createCallbackSigner(secret).sign({ id: row.webhook_id, timestamp, body: row.body });
    const started = performance.now();
    const url = new URL(row.url);
    // Checked again at every delivery: the policy may have changed since the order was created, and
    // names are judged by what they resolve to now (callbackLookup), IP literals here.
    const refused = callbackUrlProblem(row.url, this.policy);
    if (refused) return { statusCode: undefined, latencyMs: 0, error: `callback URL ${refused}`, errorKind: deliveryErrorKind(new DestinationRefusedError(refused)) };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const finish = (statusCode: number | undefined, error: Error | undefined) =>
        resolve({ statusCode, latencyMs: Math.round(performance.now() - started), error: error?.message.slice(0, 500), errorKind: error && deliveryErrorKind(error) });
      const request = send(
        url,
        {
          method: 'POST',
          lookup: this.lookup,
          timeout: this.options.config.timeoutSeconds * 1000,
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(row.body),
            'User-Agent': 'partner-api-callbacks/1',
            'webhook-id': row.webhook_id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signature,
          },
        },
        (response) => {
          response.resume(); // the body is not read: only the status counts
          response.on('end', () => finish(response.statusCode, undefined));
          response.on('error', (error) => finish(response.statusCode, error));
        },
      );
      // The whole delivery, not only socket idleness, must end within the timeout.
      const timedOut = () => request.destroy(new DeliveryTimeoutError(`no answer within ${this.options.config.timeoutSeconds} s`));
      const deadline = setTimeout(timedOut, this.options.config.timeoutSeconds * 1000);
      request.on('close', () => clearTimeout(deadline));
      request.on('timeout', timedOut);
      request.on('error', (error) => finish(undefined, error));
      request.end(row.body);
    });
  }

  private async record(row: OutboxRow, result: DeliveryResult): Promise<void> {
    const attempts = row.attempts + 1;
    const status = result.statusCode;
    let state: 'pending' | 'delivered' | 'gone' | 'failed' = 'pending';
    let delayMs = 0;
    if (status !== undefined && status >= 200 && status < 300) state = 'delivered';
    else if (status === 410) state = 'gone';
    else {
      const delay = nextAttemptDelayMs(attempts, this.options.config.retrySchedule);
      if (delay === undefined) state = 'failed';
      else delayMs = delay;
    }
    const error = result.error ?? (state === 'pending' || state === 'failed' ? `answered ${status}` : undefined);
    const current = await this.options.db.transaction(async (tx) => {
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
    if (!current) this.options.log?.warn({ webhookId: row.webhook_id, status, state }, 'callback attempt outlived its lease: recorded as history, the state left to the newer claim');
    else if (state !== 'delivered') this.options.log?.warn({ webhookId: row.webhook_id, status, error: result.error, state }, 'callback not delivered');
  }

  /** Delivers a claimed row and records the attempt, within the merchant's and the destination's share. */
  private async attempt(row: OutboxRow): Promise<void> {
    this.fairness.started(row.merchant_id, row.destination);
    let answered = false;
    try {
      const result = await this.deliver(row);
      answered = result.statusCode !== undefined;
      await this.record(row, result);
    } finally {
      const cooldownMs = this.fairness.finished(row.merchant_id, row.destination, answered);
      if (cooldownMs !== undefined) await this.backOff(row.destination, cooldownMs);
    }
  }

  /** One round: claim what is due and deliver it; the number of deliveries attempted. */
  async runOnce(): Promise<number> {
    const rows = await this.claim(this.concurrency);
    await Promise.all(rows.map((row) => this.attempt(row)));
    return rows.length;
  }

  /**
   * Runs continuously with up to `concurrency` deliveries in flight: a slot freed by one delivery is
   * refilled at once, so a receiver that hangs until the timeout holds one slot, not everyone's callbacks.
   */
  start(): void {
    this.stopped = false;
    const inFlight = new Set<Promise<void>>();
    let idle: NodeJS.Timeout | undefined;
    let claiming: Promise<OutboxRow[]> | undefined;
    // One claim at a time: a claim gives each merchant and destination the free share it sees, and a
    // second claim beside it would hand out the same share again (a silent destination got 7 attempts
    // before its breaker opened, where 6 are the most).
    // A refill asked for meanwhile (a delivery's end, the idle timer) runs as soon as the claim ends.
    let refillAfterClaim = false;
    const fill = async (): Promise<void> => {
      if (this.stopped) return;
      if (claiming) {
        refillAfterClaim = true;
        return;
      }
      const free = this.concurrency - inFlight.size;
      if (free <= 0) return;
      refillAfterClaim = false;
      let rows: OutboxRow[] = [];
      try {
        claiming = this.claim(free);
        rows = await claiming;
      } catch (error) {
        this.options.log?.warn({ err: error }, 'claiming callbacks failed');
      } finally {
        claiming = undefined;
      }
      // Rows claimed while stopping are left to their lease: another run delivers them.
      if (this.stopped) return;
      for (const row of rows) {
        const delivery: Promise<void> = this.attempt(row)
          .catch((error: unknown) => this.options.log?.warn({ err: error, webhookId: row.webhook_id }, 'recording a callback attempt failed'))
          .finally(() => {
            inFlight.delete(delivery);
            void fill();
          });
        inFlight.add(delivery);
      }
      if (refillAfterClaim) {
        refillAfterClaim = false;
        void fill();
        return;
      }
      // A slot is still free: look for newly due rows after the interval (a finishing delivery also looks).
      if (inFlight.size < this.concurrency) {
        clearTimeout(idle);
        idle = setTimeout(() => void fill(), this.options.config.dispatchIntervalMs);
      }
    };
    this.running = {
      stop: () => clearTimeout(idle),
      settled: async () => {
        await claiming?.catch(() => {});
        await Promise.all(inFlight);
      },
    };
    void fill();
  }

  /** Stops claiming; the deliveries under way finish and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.running?.stop();
    await this.running?.settled();
  }
}
