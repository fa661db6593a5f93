// Delivers the outbox (docs/design.md#callbacks): claims due rows (outbox.ts), delivers each over HTTP
// (delivery.ts) within the merchant's and the destination's share of the slots (fairness.ts), and
// records every attempt (outbox.ts). 2xx delivers, 410 stops, anything else retries until the schedule
// ends. Every due time and lease is the database's clock (now()), one clock for all instances whatever
// their own say.
import type { Config } from '../config.js';
import { callbackPolicy, type CallbackPolicy } from './destinations.js';
import type { Database } from '../db/database.js';
import type { Mode, SecretKeeper } from '../merchants/secrets.js';
import type { Clock } from '../shared/time.js';
import { DeliveryFairness, fairnessFor, type FairnessLimits } from './fairness.js';
import { deliver } from './delivery.js';
import { DeliveryTimeoutError } from './delivery-errors.js';
import { backOff, claimDue, recordAttempt, type OutboxRow } from './outbox.js';
import type { Logger } from '../shared/logger.js';

export interface DispatcherOptions {
  db: Database;
  secrets: SecretKeeper;
  config: Config['callbacks'];
  mode: Mode;
  /** The clock of the webhook-timestamp header only; due times and leases are the database's. */
  now: Clock;
  /** Deliveries under way at once that are still within `slowAfterMs` (the slots). */
  concurrency?: number;
  /**
   * A delivery unanswered this long gives its slot up (it goes on, until the timeout): a receiver that
   * never answers holds a socket, not a slot. 1 s by default.
   */
  slowAfterMs?: number;
  /**
   * Deliveries open at once, slow ones included: 8 × concurrency by default. When they are all open and a
   * slot is free, the slow delivery open the longest is cut short (recorded as a timeout, retried on its
   * schedule), so that however many merchants' receivers never answer, the others' callbacks still go.
   */
  maxOpen?: number;
  /** Each merchant's and destination's share of them, and the breaker (fairnessFor(concurrency)). */
  fairness?: Partial<FairnessLimits>;
  log?: Logger;
}

export class CallbackDispatcher {
  private stopped = true;
  /** The deliveries under way, slow ones included. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Deliveries under way that still hold a slot (not yet slow). */
  private active = 0;
  /** The slow deliveries, longest open first: what cuts one short. */
  private readonly slow: AbortController[] = [];
  private readonly slowAfterMs: number;
  private readonly maxOpen: number;
  /** The claim under way, if any (one at a time). */
  private claiming: Promise<OutboxRow[]> | undefined;
  /** A refill was asked for while a claim was under way. */
  private refillAfterClaim = false;
  /** The next look for due rows while a slot is free. */
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly concurrency: number;
  private readonly policy: CallbackPolicy;
  private readonly fairness: DeliveryFairness;

  constructor(private readonly options: DispatcherOptions) {
    this.concurrency = options.concurrency ?? 16;
    this.slowAfterMs = options.slowAfterMs ?? 1000;
    this.maxOpen = options.maxOpen ?? 8 * this.concurrency;
    this.policy = callbackPolicy(options.mode, options.config.allowPrivate, options.config.allowLoopback);
    this.fairness = new DeliveryFairness({ ...fairnessFor(this.concurrency), ...options.fairness });
  }

  /** Claims up to `limit` due rows within the free shares the fairness sees now (`newcomersOnly`: of merchants with nothing in flight). */
  private claim(limit: number, newcomersOnly = false): Promise<OutboxRow[]> {
    return claimDue(this.options.db, limit, this.options.config.timeoutSeconds, this.fairness.capacity(newcomersOnly), this.fairness.limits);
  }

  /** Delivers a claimed row and records the attempt, within the merchant's and the destination's share. */
  private async attempt(row: OutboxRow, signal?: AbortSignal): Promise<void> {
    this.fairness.started(row.merchant_id, row.destination);
    let answered = false;
    try {
      const { secrets, now, config } = this.options;
      const result = await deliver(row, { secrets, now, policy: this.policy, timeoutSeconds: config.timeoutSeconds, ...(signal ? { signal } : {}) });
      answered = result.statusCode !== undefined;
      await recordAttempt(this.options.db, row, result, config.retrySchedule, this.options.log);
    } finally {
      const cooldownMs = this.fairness.finished(row.merchant_id, row.destination, answered);
      if (cooldownMs !== undefined) await backOff(this.options.db, row.destination, cooldownMs);
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
    void this.fill();
  }

  /** Stops claiming; the deliveries under way finish and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.idleTimer);
    await this.claiming?.catch(() => {});
    await Promise.all(this.inFlight);
  }

  /**
   * Claims for the free slots and starts their deliveries. One claim at a time: a claim gives each
   * merchant and destination the free share it sees, and a second claim beside it would hand out the
   * same share again (a silent destination got 7 attempts before its breaker opened, where 6 are the
   * most). A refill asked for meanwhile (a delivery's end, the idle timer) runs as soon as the claim ends.
   */
  private async fill(): Promise<void> {
    if (this.stopped) return;
    if (this.claiming) {
      this.refillAfterClaim = true;
      return;
    }
    // Every socket held, mostly by receivers that never answer: a merchant with nothing in flight still
    // gets its next event out, in the place of the slow delivery open the longest.
    const newcomersOnly = this.inFlight.size >= this.maxOpen;
    const free = newcomersOnly ? Math.min(1, this.concurrency - this.active) : Math.min(this.concurrency - this.active, this.maxOpen - this.inFlight.size);
    if (free <= 0) return;
    this.refillAfterClaim = false;
    const rows = await this.claimOnce(free, newcomersOnly);
    if (newcomersOnly && rows.length > 0) {
      this.slow.shift()?.abort(new DeliveryTimeoutError(`no answer within ${this.slowAfterMs} ms, cut short: every delivery socket was open to a slow receiver`));
    }
    // Rows claimed while stopping are left to their lease: another run delivers them.
    if (this.stopped) return;
    for (const row of rows) this.launch(row);
    if (this.refillAfterClaim) {
      this.refillAfterClaim = false;
      void this.fill();
    } else if (this.active < this.concurrency) {
      // A slot is still free: look for newly due rows after the interval (a finishing delivery also looks).
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => void this.fill(), this.options.config.dispatchIntervalMs);
    }
  }

  /** The one claim under way; a failed claim is logged and claims nothing. */
  private async claimOnce(free: number, newcomersOnly: boolean): Promise<OutboxRow[]> {
    try {
      this.claiming = this.claim(free, newcomersOnly);
      return await this.claiming;
    } catch (error) {
      this.options.log?.warn({ err: error }, 'claiming callbacks failed');
      return [];
    } finally {
      this.claiming = undefined;
    }
  }

  /**
   * A delivery in one slot; its end, or its going slow, frees the slot and refills. A slow delivery
   * still counts against its merchant's and destination's shares (fairness.ts), so the merchants whose
   * receivers never answer hold at most their shares of sockets, and the slots serve everyone else.
   */
  private launch(row: OutboxRow): void {
    this.active++;
    const controller = new AbortController();
    let holdsSlot = true;
    const giveUpSlot = () => {
      if (!holdsSlot) return;
      holdsSlot = false;
      this.active--;
    };
    const slow = setTimeout(() => {
      giveUpSlot();
      this.slow.push(controller);
      void this.fill();
    }, this.slowAfterMs);
    const delivery: Promise<void> = this.attempt(row, controller.signal)
      .catch((error: unknown) => this.options.log?.warn({ err: error, webhookId: row.webhook_id }, 'recording a callback attempt failed'))
      .finally(() => {
        clearTimeout(slow);
        giveUpSlot();
        const index = this.slow.indexOf(controller);
        if (index >= 0) this.slow.splice(index, 1);
        this.inFlight.delete(delivery);
        void this.fill();
      });
    this.inFlight.add(delivery);
  }
}
