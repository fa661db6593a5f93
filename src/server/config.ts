// The platform's configuration from flags and environment (flags win), checked at start: a bad
// value stops the start with a message that names the setting. Each noun's settings live in its own
// file under config/ (server.ts, networks.ts, callbacks.ts, payouts.ts), with its table of flags and
// environment variables (gathered in config/settings.ts) and the checks of its values (config/values.ts).
//
// Settings only: nothing here imports the modules that use them (the wiring, platform.ts, checks what
// needs them: the xpubs against the deriver, a Tron token contract's T… form, the callback policy).
import type { Network } from './shared/network.js';
import { callbacksConfig, eventRetentionDays, redeliveryRateLimit, type CallbacksConfig } from './config/callbacks.js';
import { explorerTxUrl, networkConfig, type NetworkConfig } from './config/networks.js';
import { payoutConfig, type PayoutConfig } from './config/payouts.js';
import { host, logLevel, publicUrl, secretKey, trustedProxies, type Mode } from './config/server.js';
import { isSecretSetting, secretSetting, settingEnv, type SettingName } from './config/settings.js';
import { ConfigError, integer, rateLimit } from './config/values.js';

export { ConfigError } from './config/values.js';
export { isSecretSetting, SETTING_NAMES, settingEnv, type SettingName } from './config/settings.js';
export { SANDBOX_XPUBS, USDT_CONTRACTS, type ChainConfig, type NetworkConfig } from './config/networks.js';
export type { PayoutConfig } from './config/payouts.js';
export type { CallbacksConfig } from './config/callbacks.js';
export type { Mode } from './config/server.js';

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
  connections: { total: number; perAddress: number; perNetwork: number };
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
  callbacks: CallbacksConfig;
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

/** The configuration from the environment, under the command line's flags (the flag wins; a secret's flag is refused). */
export function readConfig(env: NodeJS.ProcessEnv, flags: Record<string, string | boolean | string[] | undefined> = {}): Config {
  const raw = flags as Record<string, string | undefined>;
  const get = (name: SettingName) => {
    if (isSecretSetting(name)) return secretSetting(name, raw[name], env);
    return raw[name] ?? (env[settingEnv(name)] || undefined);
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
      // Twice an address's: a /24 or a /48 is one site (an office, a carrier's pool) more often than many.
      perNetwork: integer('MAX_CONNECTIONS_PER_NETWORK', get('max-connections-per-network') ?? '1024', 1, 1_000_000),
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
  return {
    ...settings,
    callbacks: callbacksConfig(mode, get, settings),
    expiryIntervalSeconds: integer('EXPIRY_INTERVAL_SECONDS', get('expiry-interval-seconds') ?? '10', 1, 3600),
    eventRetentionDays: eventRetentionDays(get),
    redeliveryRateLimit: redeliveryRateLimit(get),
    sandboxWithdrawalSeconds: integer('SANDBOX_WITHDRAWAL_SECONDS', get('sandbox-withdrawal-seconds') ?? '5', 0, 3600),
    payouts: payoutConfig(mode, get),
  };
}
