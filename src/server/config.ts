// The platform's configuration from flags and environment (flags win), checked at start: a bad
// value stops the start with a message that names the setting.
import { parseArgs } from 'node:util';
import { createAddressDeriver, type Network } from './addresses.js';
import type { Mode } from './secrets.js';

/** The public "abandon … about" test wallet (vectors/hd-addresses.json): sandbox only, never for real funds. */
export const SANDBOX_XPUBS: Record<Network, string> = {
  Ethereum: 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt',
  Tron: 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd',
};

export interface NetworkConfig {
  xpub: string;
  /** Smallest units (USDT: 6 decimals). */
  minAmount: bigint;
  confirmations: number;
}

export interface Config {
  mode: Mode;
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Connections of the PostgreSQL pool (DATABASE_URL only). */
  databasePoolSize: number;
  /** Base64 master key (at least 32 bytes) from which merchant secrets are derived; required live. */
  secretKey: Buffer | undefined;
  networks: Record<Network, NetworkConfig>;
  orderLifetimeSeconds: number;
  watchWindowSeconds: number;
  timestampToleranceSeconds: number;
  rateLimit: { limit: number; windowSeconds: number };
  logLevel: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Raw = Record<string, string | undefined>;

/** Each setting: its flag, its environment variable, and how it is parsed and checked. */
const SETTINGS = {
  mode: { env: 'PARTNER_API_MODE' },
  host: { env: 'HOST' },
  port: { env: 'PORT' },
  'data-dir': { env: 'DATA_DIR' },
  'database-url': { env: 'DATABASE_URL' },
  'database-pool-size': { env: 'DATABASE_POOL_SIZE' },
  'secret-key': { env: 'SECRET_KEY' },
  'tron-xpub': { env: 'TRON_XPUB' },
  'ethereum-xpub': { env: 'ETHEREUM_XPUB' },
  'tron-min-amount': { env: 'TRON_MIN_AMOUNT' },
  'ethereum-min-amount': { env: 'ETHEREUM_MIN_AMOUNT' },
  'tron-confirmations': { env: 'TRON_CONFIRMATIONS' },
  'ethereum-confirmations': { env: 'ETHEREUM_CONFIRMATIONS' },
  'order-lifetime-seconds': { env: 'ORDER_LIFETIME_SECONDS' },
  'watch-window-seconds': { env: 'WATCH_WINDOW_SECONDS' },
  'timestamp-tolerance-seconds': { env: 'TIMESTAMP_TOLERANCE_SECONDS' },
  'rate-limit': { env: 'RATE_LIMIT' },
  'log-level': { env: 'LOG_LEVEL' },
} as const;

export type SettingName = keyof typeof SETTINGS;

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export function settingsHelp(): string {
  return SETTING_NAMES.map((name) => `  --${name.padEnd(30)} ${SETTINGS[name].env}`).join('\n');
}

function integer(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

function amount(name: string, text: string): bigint {
  if (!/^\d{1,16}$/.test(text) || BigInt(text) > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new ConfigError(`${name} must be a whole number of smallest units (USDT: 1000000 = 1 USDT), got "${text}"`);
  }
  return BigInt(text);
}

function xpubFor(network: Network, mode: Mode, value: string | undefined): string {
  const name = `${network.toUpperCase()}_XPUB`;
  if (!value) {
    if (mode === 'live') throw new ConfigError(`${name} is required in live mode: the account-level xpub of the ${network} deposit wallet`);
    return SANDBOX_XPUBS[network];
  }
  if (mode === 'live' && value === SANDBOX_XPUBS[network]) throw new ConfigError(`${name} is the public test wallet: never use it in live mode`);
  try {
    createAddressDeriver(network, value);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
  return value;
}

function secretKey(mode: Mode, value: string | undefined): Buffer | undefined {
  if (!value) {
    if (mode === 'live') throw new ConfigError('SECRET_KEY is required in live mode: base64 of 32 random bytes (openssl rand -base64 32)');
    return undefined;
  }
  const key = Buffer.from(value, 'base64');
  if (key.length < 32) throw new ConfigError('SECRET_KEY must be base64 of at least 32 bytes (openssl rand -base64 32)');
  return key;
}

function rateLimit(text: string) {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) throw new ConfigError(`RATE_LIMIT must be "requests/seconds", e.g. 100/60, got "${text}"`);
  return { limit: integer('RATE_LIMIT requests', match[1]!, 1, 1_000_000), windowSeconds: integer('RATE_LIMIT seconds', match[2]!, 1, 86_400) };
}

/** The settings as node:util parseArgs options, for commands that add options of their own. */
export const SETTING_OPTIONS = Object.fromEntries(SETTING_NAMES.map((name) => [name, { type: 'string' as const }]));

/** Parses command-line arguments against `options` (settings included), with a clear error. */
export function parseFlags(args: string[], options: Record<string, { type: 'string' | 'boolean' }>): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\nsettings (flag, environment variable):\n${settingsHelp()}`);
  }
}

/** Reads the configuration from command-line flags (`--port 8080`) over environment variables. */
export function loadConfig(args: string[], env: NodeJS.ProcessEnv): Config {
  return configFrom(parseFlags(args, SETTING_OPTIONS), env);
}

/** The configuration from parsed flag values over environment variables. */
export function configFrom(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): Config {
  const flags = values as Raw;
  const get = (name: SettingName) => flags[name] ?? (env[SETTINGS[name].env] || undefined);

  const mode = get('mode') ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'live') throw new ConfigError(`--mode must be sandbox or live, got "${mode}"`);
  const databaseUrl = get('database-url');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  const host = get('host') ?? '127.0.0.1';
  return {
    mode,
    host,
    port: integer('PORT', get('port') ?? '8080', 0, 65535),
    dataDir: get('data-dir') ?? './data',
    databaseUrl,
    databasePoolSize: integer('DATABASE_POOL_SIZE', get('database-pool-size') ?? '10', 1, 1000),
    secretKey: secretKey(mode, get('secret-key')),
    networks: {
      Tron: {
        xpub: xpubFor('Tron', mode, get('tron-xpub')),
        minAmount: amount('TRON_MIN_AMOUNT', get('tron-min-amount') ?? '1000000'),
        confirmations: integer('TRON_CONFIRMATIONS', get('tron-confirmations') ?? '20', 0, 10_000),
      },
      Ethereum: {
        xpub: xpubFor('Ethereum', mode, get('ethereum-xpub')),
        minAmount: amount('ETHEREUM_MIN_AMOUNT', get('ethereum-min-amount') ?? '10000000'),
        confirmations: integer('ETHEREUM_CONFIRMATIONS', get('ethereum-confirmations') ?? '12', 0, 10_000),
      },
    },
    orderLifetimeSeconds: integer('ORDER_LIFETIME_SECONDS', get('order-lifetime-seconds') ?? '3600', 60, 30 * 86_400),
    watchWindowSeconds: integer('WATCH_WINDOW_SECONDS', get('watch-window-seconds') ?? String(7 * 86_400), 0, 90 * 86_400),
    timestampToleranceSeconds: integer('TIMESTAMP_TOLERANCE_SECONDS', get('timestamp-tolerance-seconds') ?? '300', 1, 3600),
    rateLimit: rateLimit(get('rate-limit') ?? '100/60'),
    logLevel: get('log-level') ?? 'info',
  };
}
