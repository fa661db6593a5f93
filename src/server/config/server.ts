// The process's own settings: its mode, where it listens, its database and master key, its limits on
// requests and connections, orders' lifetimes, and its logs.
import { BlockList, isIP } from 'node:net';
import { ConfigError } from './values.js';

export type Mode = 'sandbox' | 'live';

export const SERVER_SETTINGS = {
  mode: { env: 'PARTNER_API_MODE' },
  host: { env: 'HOST' },
  port: { env: 'PORT' },
  'data-dir': { env: 'DATA_DIR' },
  'database-url': { env: 'DATABASE_URL', secret: true },
  'database-pool-size': { env: 'DATABASE_POOL_SIZE' },
  'secret-key': { env: 'SECRET_KEY', secret: true },
  'expiry-interval-seconds': { env: 'EXPIRY_INTERVAL_SECONDS' },
  'order-lifetime-seconds': { env: 'ORDER_LIFETIME_SECONDS' },
  'max-open-orders-per-merchant': { env: 'MAX_OPEN_ORDERS_PER_MERCHANT' },
  'watch-window-seconds': { env: 'WATCH_WINDOW_SECONDS' },
  'timestamp-tolerance-seconds': { env: 'TIMESTAMP_TOLERANCE_SECONDS' },
  'request-timeout-seconds': { env: 'REQUEST_TIMEOUT_SECONDS' },
  'max-connections': { env: 'MAX_CONNECTIONS' },
  'max-connections-per-address': { env: 'MAX_CONNECTIONS_PER_ADDRESS' },
  'max-connections-per-network': { env: 'MAX_CONNECTIONS_PER_NETWORK' },
  'rate-limit': { env: 'RATE_LIMIT' },
  'trusted-proxies': { env: 'TRUSTED_PROXIES' },
  'public-url': { env: 'PUBLIC_URL' },
  'payment-page-rate-limit': { env: 'PAYMENT_PAGE_RATE_LIMIT' },
  'log-level': { env: 'LOG_LEVEL' },
} as const;

export function secretKey(mode: Mode, value: string | undefined): Buffer | undefined {
  if (!value) {
    if (mode === 'live') throw new ConfigError('SECRET_KEY is required in live mode: base64 of 32 random bytes (openssl rand -base64 32)');
    return undefined;
  }
  const key = Buffer.from(value, 'base64');
  if (key.length < 32) throw new ConfigError('SECRET_KEY must be base64 of at least 32 bytes (openssl rand -base64 32)');
  return key;
}

/** The origin (and optional path prefix) payers' browsers reach; links are made by appending paths. */
export function publicUrl(mode: Mode, text: string | undefined): string | undefined {
  // A live payment link must outlive the port and the instance that made it: it is the operator's to name.
  if (text === undefined && mode === 'live') throw new ConfigError('PUBLIC_URL is required in live mode: the https address where payers reach the payment pages, e.g. https://pay.example.com');
  if (text === undefined) return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash || text.length > 1024) {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL without user, query or fragment (at most 1024 characters), got "${text}"`);
  }
  if (mode === 'live' && url.protocol !== 'https:') throw new ConfigError('PUBLIC_URL must be https in live mode: payers open it');
  return url.href.replace(/\/+$/, '');
}

/** TRUSTED_PROXIES: comma-separated IP addresses or CIDR ranges of the reverse proxies in front of the API. */
export function trustedProxies(text: string): string[] {
  const entries = text.split(',').map((p) => p.trim()).filter((p) => p !== '');
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const version = isIP(address ?? '');
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (version === 0 || !prefixOk || rest.length > 0) throw new ConfigError(`TRUSTED_PROXIES must be comma-separated IP addresses or CIDR ranges, e.g. 10.0.0.5,192.168.0.0/16, got "${entry}"`);
  }
  return entries;
}

/**
 * The address to listen on: an IP literal or `localhost`, checked here so that a typo is refused at
 * once (a name would be looked up in DNS, which may hang or leave this machine; 999.1.1.1 is no address).
 */
export function host(text: string): string {
  if (isIP(text) !== 0 || text === 'localhost') return text;
  throw new ConfigError(`HOST must be an IP address of this machine (e.g. 127.0.0.1, 0.0.0.0, ::1) or localhost, got "${text}"`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function logLevel(text: string): string {
  if (!LOG_LEVELS.includes(text)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${text}"`);
  return text;
}

const LOOPBACK_V6 = new BlockList();
LOOPBACK_V6.addAddress('::1', 'ipv6');

/** `localhost`, 127.0.0.0/8 or ::1: an address only this machine reaches. */
export function isLoopbackHost(text: string): boolean {
  const name = text.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost') return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return isIP(name) === 6 && LOOPBACK_V6.check(name, 'ipv6');
}

/**
 * A sandbox that only this machine can reach: it listens on loopback, and nothing says it is served to
 * others (no TRUSTED_PROXIES, no PUBLIC_URL off this machine). Only there are loopback callbacks allowed
 * by default: in a sandbox others reach, a merchant's callbackUrl could aim at the host's own services.
 */
export function loopbackOnlySandbox(mode: Mode, listenHost: string, proxies: string[], payersUrl: string | undefined): boolean {
  const publicHost = payersUrl === undefined ? undefined : new URL(payersUrl).hostname;
  return mode === 'sandbox' && isLoopbackHost(listenHost) && proxies.length === 0 && (publicHost === undefined || isLoopbackHost(publicHost));
}
