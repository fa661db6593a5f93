// Per-API-key quotas in fixed windows, announced with the IETF RateLimit header fields on every
// response. Kept in memory: each instance enforces its own quota (docs/operating.md#postgresql-and-several-instances).
import type { Clock } from '../shared/time.js';

export interface RateLimitState {
  allowed: boolean;
  remaining: number;
  resetSeconds: number;
}

export interface RateLimiter {
  readonly policy: string;
  take(key: string): RateLimitState;
  headers(state: RateLimitState): Record<string, string>;
}

export function createRateLimiter(limit: number, windowSeconds: number, now: Clock): RateLimiter {
  const windowMs = windowSeconds * 1000;
  let windowStart = 0;
  let counts = new Map<string, number>();
  const policy = `"default";q=${limit};w=${windowSeconds}`;
  return {
    policy,
    take(key) {
      const time = now();
      if (time - windowStart >= windowMs) {
        windowStart = time - (time % windowMs);
        counts = new Map();
      }
      const used = (counts.get(key) ?? 0) + 1;
      counts.set(key, used);
      const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - time) / 1000));
      return { allowed: used <= limit, remaining: Math.max(0, limit - used), resetSeconds };
    },
    headers(state) {
      return {
        RateLimit: `"default";r=${state.remaining};t=${state.resetSeconds}`,
        'RateLimit-Policy': policy,
        ...(state.allowed ? {} : { 'Retry-After': String(state.resetSeconds) }),
      };
    },
  };
}
