// The platform's configuration from flags and environment (flags win), checked at start: a bad
// value stops the start with a message that names the setting.
//
// Settings only: nothing here imports the modules that use them (the wiring, platform.ts, checks what
// needs them: the xpubs against the deriver, a Tron token contract's T… form, the callback policy).
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import type { Network } from './shared/network.js';
import { parseExactInteger } from './shared/exact-integer.js';

export type Mode = 'sandbox' | 'live';

/** The public "abandon … about" test wallet (vectors/hd-addresses.json): sandbox only, never for real funds. */
export const SANDBOX_XPUBS: Record<Network, string> = {
  Ethereum: 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt',
  Tron: 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd',
};

/** Default USDT contracts: TRC-20 on Tron (TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t), ERC-20 on Ethereum. */
export const USDT_CONTRACTS: Record<Network, string> = {
  Tron: '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c',
  Ethereum: '0xdac17f958d2ee523a2206206994597c13d831ec7',
};

export interface ChainConfig {
  rpcUrl: string;
  /** The token contract: 0x + 20-byte hex, or on Tron a T… address (the wiring turns it into hex). */
  tokenContract: string;
  pollIntervalSeconds: number;
  /** Blocks per eth_getLogs query (Tron allows at most 5,000). */
  maxBlockRange: number;
  /** Addresses per eth_getLogs query (Tron allows at most 1,000). */
  maxAddressesPerQuery: number;
  /** Where the first scan starts; by default the current confirmed head. */
  startBlock: number | undefined;
  /** `confirmations`: head − confirmations + 1; `finalized`: the node's finalized block. */
  finality: 'confirmations' | 'finalized';
}

export interface NetworkConfig {
  xpub: string;
  /** The token contract, scanned or not (payouts and the payment page name it too): as ChainConfig's. */
  tokenContract: string;
  /** Smallest units (USDT: 6 decimals). */
  minAmount: bigint;
  /** The platform's fee on each withdrawal, smallest units (zero allowed): held and spent with its amount. */
  withdrawalFee: bigint;
  /** The least a withdrawal may pay out, smallest units. */
  minWithdrawal: bigint;
  confirmations: number;
  /** Undefined when this network's scanner is off (no RPC URL). */
  chain: ChainConfig | undefined;
}

export interface Config {
  mode: Mode;
  host: string;
  port: number;
  dataDir: string;
  /** DATA_DIR or --data-dir was set: `./data` is otherwise a default, looked for upwards (cli.ts). */
  dataDirGiven: boolean;
  databaseUrl: string | undefined;
  /** Connections of the PostgreSQL pool (DATABASE_URL only). */
  databasePoolSize: number;
  /** Base64 master key (at least 32 bytes) from which merchant secrets are derived; required live. */
  secretKey: Buffer | undefined;
  networks: Record<Network, NetworkConfig>;
  orderLifetimeSeconds: number;
  /** Open (NEW) orders a merchant may have at once; a create past it is refused with 429 too_many_open_orders. */
  maxOpenOrdersPerMerchant: number;
  watchWindowSeconds: number;
  timestampToleranceSeconds: number;
  /** A request (headers and body) must arrive in full within this; then 408. */
  requestTimeoutSeconds: number;
  /** Connections at once, in total and from one address (http/connection-limits.ts). */
  connections: { total: number; perAddress: number };
  rateLimit: { limit: number; windowSeconds: number };
  /** Reverse proxies (IPs or CIDRs) whose X-Forwarded-For names the client; empty: the TCP peer is the client. */
  trustedProxies: string[];
  /** Where payers reach the platform (the payment page's links); by default the address it listens on. */
  publicUrl: string | undefined;
  /** Reads of payment pages per caller's address (the page and its live updates). */
  paymentPageRateLimit: { limit: number; windowSeconds: number };
  /** Each network's block explorer page of a transaction, `{txId}` in it: the payment page links its payments there. */
  explorerTxUrls: Record<Network, string>;
  /** Sandbox: warn (a quiet terminal, request logs off); live: info (a line per request). */
  logLevel: string;
  callbacks: {
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
  };
  expiryIntervalSeconds: number;
  /** Days the events feed keeps an event (and its delivery attempts) after it was recorded. */
  eventRetentionDays: number;
  /** A merchant's redeliveries of events (POST …/redeliver), apart from its requests' quota. */
  redeliveryRateLimit: { limit: number; windowSeconds: number };
  /** Sandbox: how long after its creation (or approval) a withdrawal asked for through the API settles by itself. */
  sandboxWithdrawalSeconds: number;
  /** Paying withdrawals on chain (payouts/): the hot wallets' key files and the payout jobs' limits. */
  payouts: PayoutConfig;
}

export interface PayoutConfig {
  /** The file of each network's hot wallet key (only the signing code reads it; live mode only); none: that network is paid by hand. */
  keyFiles: Record<Network, string | undefined>;
  /** Tron's HTTP API (java-tron's /wallet and /walletsolidity), where Tron payouts are broadcast and confirmed. */
  tronApiUrl: string | undefined;
  /** TronGrid's API key, sent as its TRON-PRO-API-KEY header on every request to TRON_API_URL; never logged. */
  tronApiKey: string | undefined;
  /** The most an Ethereum payout pays per gas (maxFeePerGas), in wei. */
  ethereumMaxFeePerGas: bigint;
  /** The most TRX (in sun) a Tron payout may burn for its energy (fee_limit). */
  tronFeeLimitSun: number;
  /** How long a Tron payout's transaction may wait to be included (its expiration after its reference block). */
  tronExpirationSeconds: number;
  /** A payout not mined this long after it was sent is replaced with higher fees (Ethereum, same nonce). */
  replaceAfterSeconds: number;
  /** A queued withdrawal the hot wallet has not covered this long fails, its hold released. */
  fundsWaitHours: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Raw = Record<string, string | undefined>;

/**
 * Each setting: its flag and its environment variable. A `secret` one (it carries a key or a password)
 * has no flag, since every user of the machine can read a process's arguments: it comes from its
 * environment variable or from the file that `<VARIABLE>_FILE` names.
 */
const SETTINGS = {
  mode: { env: 'PARTNER_API_MODE' },
  host: { env: 'HOST' },
  port: { env: 'PORT' },
  'data-dir': { env: 'DATA_DIR' },
  'database-url': { env: 'DATABASE_URL', secret: true },
  'database-pool-size': { env: 'DATABASE_POOL_SIZE' },
  'secret-key': { env: 'SECRET_KEY', secret: true },
  'tron-xpub': { env: 'TRON_XPUB' },
  'ethereum-xpub': { env: 'ETHEREUM_XPUB' },
  'tron-min-amount': { env: 'TRON_MIN_AMOUNT' },
  'ethereum-min-amount': { env: 'ETHEREUM_MIN_AMOUNT' },
  'tron-withdrawal-fee': { env: 'TRON_WITHDRAWAL_FEE' },
  'ethereum-withdrawal-fee': { env: 'ETHEREUM_WITHDRAWAL_FEE' },
  'tron-min-withdrawal': { env: 'TRON_MIN_WITHDRAWAL' },
  'ethereum-min-withdrawal': { env: 'ETHEREUM_MIN_WITHDRAWAL' },
  'tron-confirmations': { env: 'TRON_CONFIRMATIONS' },
  'ethereum-confirmations': { env: 'ETHEREUM_CONFIRMATIONS' },
  'tron-rpc-url': { env: 'TRON_RPC_URL', secret: true },
  'ethereum-rpc-url': { env: 'ETHEREUM_RPC_URL', secret: true },
  'tron-token-contract': { env: 'TRON_TOKEN_CONTRACT' },
  'ethereum-token-contract': { env: 'ETHEREUM_TOKEN_CONTRACT' },
  'tron-poll-seconds': { env: 'TRON_POLL_SECONDS' },
  'ethereum-poll-seconds': { env: 'ETHEREUM_POLL_SECONDS' },
  'tron-max-block-range': { env: 'TRON_MAX_BLOCK_RANGE' },
  'ethereum-max-block-range': { env: 'ETHEREUM_MAX_BLOCK_RANGE' },
  'tron-max-addresses': { env: 'TRON_MAX_ADDRESSES' },
  'ethereum-max-addresses': { env: 'ETHEREUM_MAX_ADDRESSES' },
  'tron-start-block': { env: 'TRON_START_BLOCK' },
  'ethereum-start-block': { env: 'ETHEREUM_START_BLOCK' },
  'tron-finality': { env: 'TRON_FINALITY' },
  'ethereum-finality': { env: 'ETHEREUM_FINALITY' },
  'callback-timeout-seconds': { env: 'CALLBACK_TIMEOUT_SECONDS' },
  'callback-retry-schedule': { env: 'CALLBACK_RETRY_SCHEDULE' },
  'allow-private-callbacks': { env: 'ALLOW_PRIVATE_CALLBACKS' },
  'expiry-interval-seconds': { env: 'EXPIRY_INTERVAL_SECONDS' },
  'order-lifetime-seconds': { env: 'ORDER_LIFETIME_SECONDS' },
  'max-open-orders-per-merchant': { env: 'MAX_OPEN_ORDERS_PER_MERCHANT' },
  'watch-window-seconds': { env: 'WATCH_WINDOW_SECONDS' },
  'timestamp-tolerance-seconds': { env: 'TIMESTAMP_TOLERANCE_SECONDS' },
  'request-timeout-seconds': { env: 'REQUEST_TIMEOUT_SECONDS' },
  'max-connections': { env: 'MAX_CONNECTIONS' },
  'max-connections-per-address': { env: 'MAX_CONNECTIONS_PER_ADDRESS' },
  'rate-limit': { env: 'RATE_LIMIT' },
  'trusted-proxies': { env: 'TRUSTED_PROXIES' },
  'public-url': { env: 'PUBLIC_URL' },
  'payment-page-rate-limit': { env: 'PAYMENT_PAGE_RATE_LIMIT' },
  'tron-explorer-tx-url': { env: 'TRON_EXPLORER_TX_URL' },
  'ethereum-explorer-tx-url': { env: 'ETHEREUM_EXPLORER_TX_URL' },
  'log-level': { env: 'LOG_LEVEL' },
  'event-retention-days': { env: 'EVENT_RETENTION_DAYS' },
  'redelivery-rate-limit': { env: 'REDELIVERY_RATE_LIMIT' },
  'sandbox-withdrawal-seconds': { env: 'SANDBOX_WITHDRAWAL_SECONDS' },
  'tron-payout-key-file': { env: 'TRON_PAYOUT_KEY_FILE' },
  'ethereum-payout-key-file': { env: 'ETHEREUM_PAYOUT_KEY_FILE' },
  'tron-api-url': { env: 'TRON_API_URL', secret: true },
  'tron-api-key': { env: 'TRON_API_KEY', secret: true },
  'ethereum-max-fee-gwei': { env: 'ETHEREUM_MAX_FEE_GWEI' },
  'tron-fee-limit-sun': { env: 'TRON_FEE_LIMIT_SUN' },
  'tron-payout-expiration-seconds': { env: 'TRON_PAYOUT_EXPIRATION_SECONDS' },
  'payout-replace-after-seconds': { env: 'PAYOUT_REPLACE_AFTER_SECONDS' },
  'payout-funds-wait-hours': { env: 'PAYOUT_FUNDS_WAIT_HOURS' },
} as const;

export type SettingName = keyof typeof SETTINGS;

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** True for a setting given only by the environment or a file (see SETTINGS). */
export function isSecretSetting(name: SettingName): boolean {
  return 'secret' in SETTINGS[name];
}

/** The environment variable of a setting. */
export function settingEnv(name: SettingName): string {
  return SETTINGS[name].env;
}

function integer(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

function amount(name: string, text: string): bigint {
  const units = parseExactInteger(text);
  if (units === undefined) {
    throw new ConfigError(`${name} must be a whole number of smallest units (USDT: 1000000 = 1 USDT), got "${text}"`);
  }
  return units;
}

/** An amount that must be at least one smallest unit. */
function positiveAmount(name: string, text: string): bigint {
  const units = amount(name, text);
  if (units === 0n) throw new ConfigError(`${name} must be at least 1 smallest unit, got "${text}"`);
  return units;
}

function xpubFor(network: Network, mode: Mode, value: string | undefined): string {
  const name = `${network.toUpperCase()}_XPUB`;
  if (!value) {
    if (mode === 'live') throw new ConfigError(`${name} is required in live mode: the account-level xpub of the ${network} deposit wallet`);
    return SANDBOX_XPUBS[network];
  }
  if (mode === 'live' && value === SANDBOX_XPUBS[network]) throw new ConfigError(`${name} is the public test wallet: never use it in live mode`);
  return value; // its key is checked by the deriver when the platform opens
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

function rateLimit(text: string, name = 'RATE_LIMIT') {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) throw new ConfigError(`${name} must be "requests/seconds", e.g. 100/60, got "${text}"`);
  return { limit: integer(`${name} requests`, match[1]!, 1, 1_000_000), windowSeconds: integer(`${name} seconds`, match[2]!, 1, 86_400) };
}

/** The origin (and optional path prefix) payers' browsers reach; links are made by appending paths. */
function publicUrl(mode: Mode, text: string | undefined): string | undefined {
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

/** A block explorer's transaction page: an absolute http(s) URL with `{txId}` once, where the transaction id goes. */
function explorerTxUrl(name: string, text: string): string {
  const url = URL.canParse(text.replace('{txId}', 'x')) ? new URL(text.replace('{txId}', 'x')) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || text.split('{txId}').length !== 2 || text.length > 1024) {
    throw new ConfigError(`${name} must be an absolute http(s) URL with {txId} once where the transaction id goes (at most 1024 characters), got "${text}"`);
  }
  return text;
}

/** The configuration from the environment, under the command line's flags (the flag wins; a secret's flag is refused). */
export function readConfig(env: NodeJS.ProcessEnv, flags: Record<string, string | boolean | string[] | undefined> = {}): Config {
  const raw = flags as Raw;
  const get = (name: SettingName) => {
    if (isSecretSetting(name)) return secretSetting(name, raw[name], env);
    return raw[name] ?? (env[SETTINGS[name].env] || undefined);
  };

  const mode = get('mode') ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'live') throw new ConfigError(`--mode must be sandbox or live, got "${mode}"`);
  const databaseUrl = get('database-url');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  // In the order a setting is checked in: the first bad one is the one named.
  const settings = {
    mode: mode as Mode,
    host: host(get('host') ?? '127.0.0.1'),
    port: integer('PORT', get('port') ?? '8080', 0, 65535),
    dataDir: get('data-dir') ?? './data',
    dataDirGiven: get('data-dir') !== undefined,
    databaseUrl,
    databasePoolSize: integer('DATABASE_POOL_SIZE', get('database-pool-size') ?? '10', 1, 1000),
    secretKey: secretKey(mode, get('secret-key')),
    networks: {
      // Fees as peers charge for a USDT payout on each network (about 1 USDT on Tron, a few on Ethereum).
      Tron: networkConfig('Tron', mode, get, { minAmount: '1000000', withdrawalFee: '1000000', minWithdrawal: '1000000', confirmations: '20', pollSeconds: '3', maxBlockRange: '5000' }),
      Ethereum: networkConfig('Ethereum', mode, get, { minAmount: '10000000', withdrawalFee: '5000000', minWithdrawal: '10000000', confirmations: '12', pollSeconds: '12', maxBlockRange: '2000' }),
    },
    orderLifetimeSeconds: integer('ORDER_LIFETIME_SECONDS', get('order-lifetime-seconds') ?? '3600', 10, 30 * 86_400),
    maxOpenOrdersPerMerchant: integer('MAX_OPEN_ORDERS_PER_MERCHANT', get('max-open-orders-per-merchant') ?? '10000', 1, 10_000_000),
    watchWindowSeconds: integer('WATCH_WINDOW_SECONDS', get('watch-window-seconds') ?? String(7 * 86_400), 0, 90 * 86_400),
    timestampToleranceSeconds: integer('TIMESTAMP_TOLERANCE_SECONDS', get('timestamp-tolerance-seconds') ?? '300', 1, 3600),
    requestTimeoutSeconds: integer('REQUEST_TIMEOUT_SECONDS', get('request-timeout-seconds') ?? '30', 1, 600),
    // A merchant's service may send a burst of a few hundred requests at once (200 concurrent creates
    // are tested), a payer's browser opens about 6 per payment page and many payers share a carrier's address:
    // 512 leaves room for them, and one address holds an eighth of the total at most.
    connections: {
      total: integer('MAX_CONNECTIONS', get('max-connections') ?? '4096', 1, 1_000_000),
      perAddress: integer('MAX_CONNECTIONS_PER_ADDRESS', get('max-connections-per-address') ?? '512', 1, 1_000_000),
    },
    rateLimit: rateLimit(get('rate-limit') ?? '100/60'),
    trustedProxies: trustedProxies(get('trusted-proxies') ?? ''),
    publicUrl: publicUrl(mode, get('public-url')),
    // An open payment page reads its order once a second: 300 a minute leaves room for a few payers behind one address.
    paymentPageRateLimit: rateLimit(get('payment-page-rate-limit') ?? '300/60', 'PAYMENT_PAGE_RATE_LIMIT'),
    explorerTxUrls: {
      Tron: explorerTxUrl('TRON_EXPLORER_TX_URL', get('tron-explorer-tx-url') ?? 'https://tronscan.org/#/transaction/{txId}'),
      Ethereum: explorerTxUrl('ETHEREUM_EXPLORER_TX_URL', get('ethereum-explorer-tx-url') ?? 'https://etherscan.io/tx/{txId}'),
    },
    logLevel: logLevel(get('log-level') ?? (mode === 'sandbox' ? 'warn' : 'info')),
  };
  const privateCallbacks = () => optionalFlag('ALLOW_PRIVATE_CALLBACKS', get('allow-private-callbacks'));
  return {
    ...settings,
    callbacks: {
      timeoutSeconds: integer('CALLBACK_TIMEOUT_SECONDS', get('callback-timeout-seconds') ?? '15', 1, 120),
      retrySchedule: retrySchedule(get('callback-retry-schedule') ?? DEFAULT_RETRY_SCHEDULE),
      allowPrivate: privateCallbacks() === true,
      // A merchant testing on the sandbox's own machine wants its local receiver (as Stripe's CLI
      // forwards to localhost); nobody else can reach a loopback-only sandbox to abuse it. Set either
      // way, ALLOW_PRIVATE_CALLBACKS decides.
      allowLoopback: privateCallbacks() ?? loopbackOnlySandbox(mode, settings.host, settings.trustedProxies, settings.publicUrl),
      dispatchIntervalMs: 500,
    },
    expiryIntervalSeconds: integer('EXPIRY_INTERVAL_SECONDS', get('expiry-interval-seconds') ?? '10', 1, 3600),
    // At least a day: a merchant's stored feed cursor must outlive a weekend's outage, and the feed
    // must outlive the callbacks' retries (about 3 days by default).
    eventRetentionDays: integer('EVENT_RETENTION_DAYS', get('event-retention-days') ?? '30', 1, 3650),
    redeliveryRateLimit: rateLimit(get('redelivery-rate-limit') ?? '10/60', 'REDELIVERY_RATE_LIMIT'),
    sandboxWithdrawalSeconds: integer('SANDBOX_WITHDRAWAL_SECONDS', get('sandbox-withdrawal-seconds') ?? '5', 0, 3600),
    payouts: {
      keyFiles: payoutKeyFiles(mode, { Tron: get('tron-payout-key-file'), Ethereum: get('ethereum-payout-key-file') }),
      tronApiUrl: optionalUrl('TRON_API_URL', get('tron-api-url')),
      tronApiKey: get('tron-api-key') || undefined,
      ethereumMaxFeePerGas: BigInt(integer('ETHEREUM_MAX_FEE_GWEI', get('ethereum-max-fee-gwei') ?? '200', 1, 1_000_000)) * 1_000_000_000n,
      // A USDT transfer takes about 65,000 energy (131,000 to an address that never held it): at 420 sun
      // an energy a wallet without staked energy burns 27-55 TRX; 100 TRX leaves room (15,000 at most).
      tronFeeLimitSun: integer('TRON_FEE_LIMIT_SUN', get('tron-fee-limit-sun') ?? '100000000', 1, 15_000_000_000),
      tronExpirationSeconds: integer('TRON_PAYOUT_EXPIRATION_SECONDS', get('tron-payout-expiration-seconds') ?? '600', 60, 86_400),
      replaceAfterSeconds: integer('PAYOUT_REPLACE_AFTER_SECONDS', get('payout-replace-after-seconds') ?? '180', 1, 86_400),
      fundsWaitHours: integer('PAYOUT_FUNDS_WAIT_HOURS', get('payout-funds-wait-hours') ?? '72', 1, 8760),
    },
  };
}

/**
 * The hot wallets' key files: live mode only. A sandbox's balances are made up (its deposit helper
 * credits what no chain received), and a hot wallet there would pay them out in real tokens.
 */
function payoutKeyFiles(mode: string, files: Record<Network, string | undefined>): Record<Network, string | undefined> {
  for (const network of ['Ethereum', 'Tron'] as const) {
    if (mode === 'sandbox' && files[network] !== undefined) {
      throw new ConfigError(`${network.toUpperCase()}_PAYOUT_KEY_FILE is refused in sandbox mode: the sandbox's balances are made up (its deposit helper), and a hot wallet would pay them out in real tokens; payouts on chain need --mode live`);
    }
  }
  return files;
}

/** A secret setting's value: its environment variable, else the file its `_FILE` variable names; never a flag. */
function secretSetting(name: SettingName, flagValue: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const variable = SETTINGS[name].env;
  if (flagValue !== undefined) {
    throw new ConfigError(`--${name} is refused: a flag is readable by every user of the machine (ps, /proc/PID/cmdline); set ${variable} or ${variable}_FILE (a file holding the value) instead`);
  }
  if (env[variable]) return env[variable];
  const file = env[`${variable}_FILE`];
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (error) {
    throw new ConfigError(`${variable}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** TRUSTED_PROXIES: comma-separated IP addresses or CIDR ranges of the reverse proxies in front of the API. */
function trustedProxies(text: string): string[] {
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
function host(text: string): string {
  if (isIP(text) !== 0 || text === 'localhost') return text;
  throw new ConfigError(`HOST must be an IP address of this machine (e.g. 127.0.0.1, 0.0.0.0, ::1) or localhost, got "${text}"`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(text: string): string {
  if (!LOG_LEVELS.includes(text)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${text}"`);
  return text;
}

/** About 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (docs/design.md#callbacks). */
const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,50400,72000,86400';

function retrySchedule(text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 50 || !parts.every((p) => /^\d{1,6}$/.test(p) && Number(p) >= 1)) {
    throw new ConfigError(`CALLBACK_RETRY_SCHEDULE must be comma-separated seconds, e.g. ${DEFAULT_RETRY_SCHEDULE}, got "${text}"`);
  }
  return parts.map(Number);
}

/** A switch: true or false when set, undefined when not. */
function optionalFlag(name: string, text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  if (text === 'false' || text === '0') return false;
  if (text === 'true' || text === '1') return true;
  throw new ConfigError(`${name} must be true or false, got "${text}"`);
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

/** 0x-hex, lowercased; on Tron a T… address is kept for the wiring, whose deriver checks and converts it. */
function contractAddress(network: Network, name: string, text: string): string {
  if (/^0x[0-9a-fA-F]{40}$/.test(text)) return text.toLowerCase();
  if (network === 'Tron' && /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(text)) return text;
  throw new ConfigError(`${name} must be a contract address (0x + 40 hex${network === 'Tron' ? ', or a T… address' : ''}), got "${text}"`);
}

/** An http(s) URL that may carry a key: checked when given, never repeated in an error. */
function optionalUrl(name: string, text: string | undefined): string | undefined {
  return text === undefined ? undefined : rpcUrl(name, text);
}

/** An RPC URL may carry an API key or a password: errors never repeat it. */
function rpcUrl(name: string, text: string): string {
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) throw new ConfigError(`${name} must be an http(s) URL`);
  return text;
}

function networkConfig(
  network: Network,
  mode: Mode,
  get: (name: SettingName) => string | undefined,
  defaults: { minAmount: string; withdrawalFee: string; minWithdrawal: string; confirmations: string; pollSeconds: string; maxBlockRange: string },
): NetworkConfig {
  const key = network.toLowerCase() as 'tron' | 'ethereum';
  const ENV = network.toUpperCase();
  const url = get(`${key}-rpc-url`);
  const finality = get(`${key}-finality`) ?? 'confirmations';
  if (finality !== 'confirmations' && finality !== 'finalized') throw new ConfigError(`${ENV}_FINALITY must be confirmations or finalized, got "${finality}"`);
  const startBlock = get(`${key}-start-block`);
  const tokenContract = contractAddress(network, `${ENV}_TOKEN_CONTRACT`, get(`${key}-token-contract`) ?? USDT_CONTRACTS[network]);
  return {
    xpub: xpubFor(network, mode, get(`${key}-xpub`)),
    tokenContract,
    minAmount: amount(`${ENV}_MIN_AMOUNT`, get(`${key}-min-amount`) ?? defaults.minAmount),
    withdrawalFee: amount(`${ENV}_WITHDRAWAL_FEE`, get(`${key}-withdrawal-fee`) ?? defaults.withdrawalFee),
    minWithdrawal: positiveAmount(`${ENV}_MIN_WITHDRAWAL`, get(`${key}-min-withdrawal`) ?? defaults.minWithdrawal),
    confirmations: integer(`${ENV}_CONFIRMATIONS`, get(`${key}-confirmations`) ?? defaults.confirmations, 1, 10_000),
    chain: url
      ? {
          rpcUrl: rpcUrl(`${ENV}_RPC_URL`, url),
          tokenContract,
          pollIntervalSeconds: integer(`${ENV}_POLL_SECONDS`, get(`${key}-poll-seconds`) ?? defaults.pollSeconds, 1, 3600),
          maxBlockRange: integer(`${ENV}_MAX_BLOCK_RANGE`, get(`${key}-max-block-range`) ?? defaults.maxBlockRange, 1, network === 'Tron' ? 5000 : 100_000),
          maxAddressesPerQuery: integer(`${ENV}_MAX_ADDRESSES`, get(`${key}-max-addresses`) ?? '1000', 1, network === 'Tron' ? 1000 : 10_000),
          startBlock: startBlock === undefined ? undefined : integer(`${ENV}_START_BLOCK`, startBlock, 0, Number.MAX_SAFE_INTEGER),
          finality,
        }
      : undefined,
  };
}
