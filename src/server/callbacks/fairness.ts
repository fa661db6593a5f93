// Fair delivery (issue 23): one merchant's slow or silent receivers cost only that merchant. A
// dispatcher gives each merchant and each destination (scheme, host and port) at most a few of its
// delivery slots, and a circuit breaker per destination backs off one that keeps not answering: after
// a few attempts in a row without an answer (a timeout, a refused or reset connection) its events wait
// out a cooldown, then one probe is let through; an answer closes the breaker, another failure opens
// it for twice as long. The way Svix and Hatchet keep one tenant's endpoint from starving the others:
// concurrency per tenant and per endpoint, and endpoints that fail are backed off, not retried hot.
// The state is per instance (each dispatcher has its own slots) and bounded: a breaker is forgotten
// once it no longer limits anything (below the threshold for a cooldown, or half-open and unused for
// the longest cooldown), the oldest when there are `maxBreakers`, and a claim is sent only the keys
// that are limited. When a breaker opens, the dispatcher moves the destination's due events past the
// cooldown in the database, so they leave the due index instead of being skipped by every claim.

export interface FairnessLimits {
  /** Deliveries under way at once for one merchant. */
  perMerchant: number;
  /** Deliveries under way at once to one destination. */
  perDestination: number;
  /** Attempts in a row without an answer that open a destination's breaker. */
  breakerThreshold: number;
  /** The first cooldown; each failed probe doubles it, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
  /** Breakers kept at most; past it the least recently used one is forgotten. */
  maxBreakers: number;
}

/**
 * The limits of a dispatcher with `concurrency` slots: a merchant, and a destination, get a quarter of
 * them (4 of the default 16), so one that hangs leaves three quarters to everyone else.
 */
export function fairnessFor(concurrency: number): FairnessLimits {
  const share = Math.max(1, Math.ceil(concurrency / 4));
  return { perMerchant: share, perDestination: share, breakerThreshold: 3, cooldownMs: 30_000, maxCooldownMs: 600_000, maxBreakers: 1000 };
}

interface Breaker {
  failuresInARow: number;
  openUntil: number;
  cooldownMs: number;
  /** When a delivery to the destination last ended. */
  lastUsed: number;
}

/** What a claim may take: each listed merchant's and destination's free slots (others: the full limit). */
export interface ClaimCapacity {
  merchants: { ids: string[]; free: number[] };
  destinations: { keys: string[]; free: number[] };
}

export class DeliveryFairness {
  private readonly merchants = new Map<string, number>();
  private readonly destinations = new Map<string, number>();
  private readonly breakers = new Map<string, Breaker>();

  constructor(
    readonly limits: FairnessLimits,
    /** A monotonic clock for cooldowns (they are this instance's own timing, not shared state). */
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * The free slots to claim with, of the merchants and destinations that have fewer than the full limit;
   * `newcomersOnly`: none for any merchant with a delivery in flight (only those with none may claim).
   */
  capacity(newcomersOnly = false): ClaimCapacity {
    this.forgetExpiredBreakers();
    const merchants = [...this.merchants].map(([id, used]) => [id, newcomersOnly ? this.limits.perMerchant : used] as const);
    const keys = new Set([...this.destinations.keys(), ...this.breakers.keys()]);
    const destinations = [...keys].map((key) => [key, this.destinationFree(key)] as const).filter(([, free]) => free < this.limits.perDestination);
    return {
      merchants: { ids: merchants.map(([id]) => id), free: merchants.map(([, used]) => Math.max(0, this.limits.perMerchant - used)) },
      destinations: { keys: destinations.map(([key]) => key), free: destinations.map(([, free]) => free) },
    };
  }

  /** Breakers kept, open or not: bounded by `maxBreakers`. */
  get breakerCount(): number {
    return this.breakers.size;
  }

  private forgetExpiredBreakers(): void {
    const now = this.clock();
    for (const [key, breaker] of this.breakers) {
      const opened = breaker.failuresInARow >= this.limits.breakerThreshold;
      const expired = opened
        ? now - Math.max(breaker.openUntil, breaker.lastUsed) >= this.limits.maxCooldownMs
        : now - breaker.lastUsed >= this.limits.cooldownMs;
      if (expired) this.breakers.delete(key);
    }
  }

  private destinationFree(key: string): number {
    const used = this.destinations.get(key) ?? 0;
    const breaker = this.breakers.get(key);
    if (!breaker || breaker.failuresInARow < this.limits.breakerThreshold) return Math.max(0, this.limits.perDestination - used);
    if (this.clock() < breaker.openUntil) return 0; // open: the destination's events wait
    return Math.max(0, 1 - used); // half-open: one probe at a time
  }

  started(merchantId: string, destination: string): void {
    this.merchants.set(merchantId, (this.merchants.get(merchantId) ?? 0) + 1);
    this.destinations.set(destination, (this.destinations.get(destination) ?? 0) + 1);
  }

  /**
   * A delivery ended: `answered` when the receiver sent any HTTP status, false for a timeout or a
   * connection failure. Returns the cooldown when this failure opened the destination's breaker.
   */
  finished(merchantId: string, destination: string, answered: boolean): number | undefined {
    decrement(this.merchants, merchantId);
    decrement(this.destinations, destination);
    const breaker = this.breakers.get(destination);
    this.breakers.delete(destination); // set again below: the map stays ordered by last use
    if (answered) return undefined;
    const now = this.clock();
    const failing = breaker ?? { failuresInARow: 0, openUntil: 0, cooldownMs: 0, lastUsed: now };
    failing.failuresInARow++;
    failing.lastUsed = now;
    this.keep(destination, failing);
    // Opened, or opened again after a failed probe; failures of deliveries begun before it opened add nothing.
    if (failing.failuresInARow < this.limits.breakerThreshold || now < failing.openUntil) return undefined;
    failing.cooldownMs = failing.cooldownMs === 0 ? this.limits.cooldownMs : Math.min(2 * failing.cooldownMs, this.limits.maxCooldownMs);
    failing.openUntil = now + failing.cooldownMs;
    return failing.cooldownMs;
  }

  /** Bounded: a merchant chooses its callback hosts, so failing destinations are as many as it likes. */
  private keep(destination: string, breaker: Breaker): void {
    if (this.breakers.size >= this.limits.maxBreakers) this.breakers.delete(this.breakers.keys().next().value!);
    this.breakers.set(destination, breaker);
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
