// Callbacks and the events feed: timeouts, retries, which destinations a callback may reach, how long
// events are kept and how often a merchant may ask for one again.
import { ConfigError, integer, optionalFlag, rateLimit, type SettingGetter } from './values.js';
import { loopbackOnlySandbox, type Mode } from './server.js';

export const CALLBACK_SETTINGS = {
  'callback-timeout-seconds': { env: 'CALLBACK_TIMEOUT_SECONDS' },
  'callback-retry-schedule': { env: 'CALLBACK_RETRY_SCHEDULE' },
  'allow-private-callbacks': { env: 'ALLOW_PRIVATE_CALLBACKS' },
  'event-retention-days': { env: 'EVENT_RETENTION_DAYS' },
  'redelivery-rate-limit': { env: 'REDELIVERY_RATE_LIMIT' },
} as const;

export interface CallbacksConfig {
  timeoutSeconds: number;
  /** Seconds before each retry (jitter is added); the event is given up after the last. */
  retrySchedule: number[];
  /** Callbacks may reach private and loopback addresses: only when ALLOW_PRIVATE_CALLBACKS is set (tests on one machine), in either mode. */
  allowPrivate: boolean;
  /**
   * Callbacks may reach this machine (loopback: 127.0.0.0/8, ::1, localhost): with allowPrivate, and by
   * default in a loopback-only sandbox (loopbackOnlySandbox), unless ALLOW_PRIVATE_CALLBACKS=false.
   */
  allowLoopback: boolean;
  dispatchIntervalMs: number;
}

/** About 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (docs/design.md#callbacks). */
const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,50400,72000,86400';

export function retrySchedule(text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 50 || !parts.every((p) => /^\d{1,6}$/.test(p) && Number(p) >= 1)) {
    throw new ConfigError(`CALLBACK_RETRY_SCHEDULE must be comma-separated seconds, e.g. ${DEFAULT_RETRY_SCHEDULE}, got "${text}"`);
  }
  return parts.map(Number);
}

/** Where callbacks may go: `listen` is where the platform listens and who reaches it (loopbackOnlySandbox). */
export function callbacksConfig(mode: Mode, get: SettingGetter<typeof CALLBACK_SETTINGS>, listen: { host: string; trustedProxies: string[]; publicUrl: string | undefined }): CallbacksConfig {
  const privateCallbacks = optionalFlag('ALLOW_PRIVATE_CALLBACKS', get('allow-private-callbacks'));
  return {
    timeoutSeconds: integer('CALLBACK_TIMEOUT_SECONDS', get('callback-timeout-seconds') ?? '15', 1, 120),
    retrySchedule: retrySchedule(get('callback-retry-schedule') ?? DEFAULT_RETRY_SCHEDULE),
    allowPrivate: privateCallbacks === true,
    // A merchant testing on the sandbox's own machine wants its local receiver (as Stripe's CLI
    // forwards to localhost); nobody else can reach a loopback-only sandbox to abuse it. Set either
    // way, ALLOW_PRIVATE_CALLBACKS decides.
    allowLoopback: privateCallbacks ?? loopbackOnlySandbox(mode, listen.host, listen.trustedProxies, listen.publicUrl),
    dispatchIntervalMs: 500,
  };
}

/** Days the events feed keeps an event. */
export function eventRetentionDays(get: SettingGetter<typeof CALLBACK_SETTINGS>): number {
  // At least a day: a merchant's stored feed cursor must outlive a weekend's outage, and the feed
  // must outlive the callbacks' retries (about 3 days by default).
  return integer('EVENT_RETENTION_DAYS', get('event-retention-days') ?? '30', 1, 3650);
}

export function redeliveryRateLimit(get: SettingGetter<typeof CALLBACK_SETTINGS>) {
  return rateLimit(get('redelivery-rate-limit') ?? '10/60', 'REDELIVERY_RATE_LIMIT');
}
