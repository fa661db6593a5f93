// Fair delivery (issue 23): one merchant's slow or silent receivers cost only that merchant. A
// dispatcher gives each merchant and each destination (scheme, host and port) at most a few of its
// delivery slots, and a circuit breaker per destination backs off one that keeps not answering: after
// a few attempts in a row without an answer (a timeout, a refused or reset connection) its events wait
// out a cooldown, then one probe is let through; an answer closes the breaker, another failure opens
// it for twice as long. The way Svix and Hatchet keep one tenant's endpoint from starving the others:
// concurrency per tenant and per endpoint, and endpoints that fail are backed off, not retried hot.
// The state is per instance (each dispatcher has its own slots); the database holds none of it.

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
}

/**
 * The limits of a dispatcher with `concurrency` slots: a merchant, and a destination, get a quarter of
 * them (4 of the default 16), so one that hangs leaves three quarters to everyone else.
 */
export function fairnessFor(concurrency: number): FairnessLimits {
  const share = Math.max(1, Math.ceil(concurrency / 4));
  return { perMerchant: share, perDestination: share, breakerThreshold: 3, cooldownMs: 30_000, maxCooldownMs: 600_000 };
}

interface Breaker {
  failuresInARow: number;
  openUntil: number;
  cooldownMs: number;
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

  /** The free slots to claim with: merchants and destinations with deliveries under way or a breaker set. */
  capacity(): ClaimCapacity {
    const merchants = [...this.merchants];
    const keys = new Set([...this.destinations.keys(), ...this.breakers.keys()]);
    const destinations = [...keys].map((key) => [key, this.destinationFree(key)] as const);
    return {
      merchants: { ids: merchants.map(([id]) => id), free: merchants.map(([, used]) => Math.max(0, this.limits.perMerchant - used)) },
      destinations: { keys: destinations.map(([key]) => key), free: destinations.map(([, free]) => free) },
    };
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

  /** A delivery ended: `answered` when the receiver sent any HTTP status, false for a timeout or a connection failure. */
  finished(merchantId: string, destination: string, answered: boolean): void {
    decrement(this.merchants, merchantId);
    decrement(this.destinations, destination);
    if (answered) {
      this.breakers.delete(destination);
      return;
    }
    const breaker = this.breakers.get(destination) ?? { failuresInARow: 0, openUntil: 0, cooldownMs: 0 };
    breaker.failuresInARow++;
    // Opened, or opened again after a failed probe; failures of deliveries begun before it opened add nothing.
    if (breaker.failuresInARow >= this.limits.breakerThreshold && this.clock() >= breaker.openUntil) {
      breaker.cooldownMs = breaker.cooldownMs === 0 ? this.limits.cooldownMs : Math.min(2 * breaker.cooldownMs, this.limits.maxCooldownMs);
      breaker.openUntil = this.clock() + breaker.cooldownMs;
    }
    this.breakers.set(destination, breaker);
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
