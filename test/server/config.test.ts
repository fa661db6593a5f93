// Issue 23 (11): settings that carry a key or a password (SECRET_KEY, DATABASE_URL, the RPC URLs) come
// from the environment or from a file, never from a flag, which every user of the machine can read in
// /proc/PID/cmdline. The refusal names the setting and where to put it instead, never the value.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, readConfig, isSecretSetting, settingEnv, SETTING_NAMES, type Config, type SettingName } from '../../src/server/config.js';

const KEY = Buffer.alloc(32, 7).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'partner-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('secret settings', () => {
  it('are exactly the master key, the database URL, the nodes\' URLs and TronGrid\'s API key (the payout keys are files only their code reads)', () => {
    expect(SETTING_NAMES.filter(isSecretSetting)).toEqual(['database-url', 'secret-key', 'tron-rpc-url', 'ethereum-rpc-url', 'tron-api-url', 'tron-api-key']);
  });

  it.each([
    ['secret-key', KEY, 'SECRET_KEY'],
    ['database-url', 'postgres://app:hunter2@db.invalid/partner', 'DATABASE_URL'],
    ['tron-rpc-url', 'https://rpc.invalid/key-abc123', 'TRON_RPC_URL'],
    ['ethereum-rpc-url', 'https://u:p@rpc.invalid/', 'ETHEREUM_RPC_URL'],
  ])('--%s is refused as a flag, naming %s and its _FILE, without repeating the value', (name, value, variable) => {
    let error: unknown;
    try {
      readConfig({}, { [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`--${name} is refused`);
    expect((error as Error).message).toContain(`set ${variable} or ${variable}_FILE`);
    expect((error as Error).message).not.toContain(value);
  });

  it('are read from the environment, or from the file <VARIABLE>_FILE names (trimmed)', () => {
    const keyFile = join(dir, 'secret-key');
    const urlFile = join(dir, 'database-url');
    const rpcFile = join(dir, 'rpc-url');
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    writeFileSync(urlFile, 'postgres://app:pw@db.invalid/partner\n', { mode: 0o600 });
    writeFileSync(rpcFile, 'https://rpc.invalid/key\n', { mode: 0o600 });
    const fromFiles = readConfig({ SECRET_KEY_FILE: keyFile, DATABASE_URL_FILE: urlFile, ETHEREUM_RPC_URL_FILE: rpcFile }, {});
    expect(fromFiles.secretKey).toEqual(Buffer.from(KEY, 'base64'));
    expect(fromFiles.databaseUrl).toBe('postgres://app:pw@db.invalid/partner');
    expect(fromFiles.networks.Ethereum.chain?.rpcUrl).toBe('https://rpc.invalid/key');
    // The variable itself wins over its file.
    expect(readConfig({ DATABASE_URL: 'postgres://env@db.invalid/x', DATABASE_URL_FILE: urlFile }, {}).databaseUrl).toBe('postgres://env@db.invalid/x');
  });

  it('refuses a _FILE that cannot be read, naming the variable and the path', () => {
    const missing = join(dir, 'no-such-file');
    expect(() => readConfig({ SECRET_KEY_FILE: missing }, {})).toThrow(new ConfigError(`SECRET_KEY_FILE: cannot read ${missing} (ENOENT)`));
  });

});

/**
 * Every setting that is not a secret: a value for its flag, another for its environment variable, and
 * where the Config holds it. The flag's and the variable's values differ, so the case with both proves
 * which one won; where one of them is the default, the other case proves it is read at all.
 */
const a40 = `0x${'a'.repeat(40)}`;
const b40 = `0x${'b'.repeat(40)}`;
const EVERY_OTHER_SETTING: Record<string, [flag: string, env: string, read: (c: Config) => unknown, fromFlag: unknown, fromEnv: unknown]> = {
  mode: ['live', 'sandbox', (c) => c.mode, 'live', 'sandbox'],
  host: ['0.0.0.0', '::1', (c) => c.host, '0.0.0.0', '::1'],
  port: ['9000', '9001', (c) => c.port, 9000, 9001],
  'data-dir': ['/tmp/from-flag', '/tmp/from-env', (c) => c.dataDir, '/tmp/from-flag', '/tmp/from-env'],
  'database-pool-size': ['3', '4', (c) => c.databasePoolSize, 3, 4],
  'tron-xpub': ['xpub-flag-tron', 'xpub-env-tron', (c) => c.networks.Tron.xpub, 'xpub-flag-tron', 'xpub-env-tron'],
  'ethereum-xpub': ['xpub-flag-eth', 'xpub-env-eth', (c) => c.networks.Ethereum.xpub, 'xpub-flag-eth', 'xpub-env-eth'],
  'tron-min-amount': ['5', '6', (c) => c.networks.Tron.minAmount, 5n, 6n],
  'ethereum-min-amount': ['7', '8', (c) => c.networks.Ethereum.minAmount, 7n, 8n],
  'tron-withdrawal-fee': ['0', '2000000', (c) => c.networks.Tron.withdrawalFee, 0n, 2_000_000n],
  'ethereum-withdrawal-fee': ['3', '4', (c) => c.networks.Ethereum.withdrawalFee, 3n, 4n],
  'tron-min-withdrawal': ['5', '6', (c) => c.networks.Tron.minWithdrawal, 5n, 6n],
  'ethereum-min-withdrawal': ['7', '8', (c) => c.networks.Ethereum.minWithdrawal, 7n, 8n],
  'tron-confirmations': ['30', '31', (c) => c.networks.Tron.confirmations, 30, 31],
  'ethereum-confirmations': ['32', '33', (c) => c.networks.Ethereum.confirmations, 32, 33],
  'tron-token-contract': [a40, b40, (c) => c.networks.Tron.chain?.tokenContract, a40, b40],
  'ethereum-token-contract': [b40, a40, (c) => c.networks.Ethereum.chain?.tokenContract, b40, a40],
  'tron-poll-seconds': ['7', '8', (c) => c.networks.Tron.chain?.pollIntervalSeconds, 7, 8],
  'ethereum-poll-seconds': ['9', '10', (c) => c.networks.Ethereum.chain?.pollIntervalSeconds, 9, 10],
  'tron-max-block-range': ['100', '200', (c) => c.networks.Tron.chain?.maxBlockRange, 100, 200],
  'ethereum-max-block-range': ['300', '400', (c) => c.networks.Ethereum.chain?.maxBlockRange, 300, 400],
  'tron-max-addresses': ['10', '20', (c) => c.networks.Tron.chain?.maxAddressesPerQuery, 10, 20],
  'ethereum-max-addresses': ['30', '40', (c) => c.networks.Ethereum.chain?.maxAddressesPerQuery, 30, 40],
  'tron-start-block': ['123', '456', (c) => c.networks.Tron.chain?.startBlock, 123, 456],
  'ethereum-start-block': ['789', '1011', (c) => c.networks.Ethereum.chain?.startBlock, 789, 1011],
  'tron-finality': ['confirmations', 'finalized', (c) => c.networks.Tron.chain?.finality, 'confirmations', 'finalized'],
  'ethereum-finality': ['confirmations', 'finalized', (c) => c.networks.Ethereum.chain?.finality, 'confirmations', 'finalized'],
  'callback-timeout-seconds': ['20', '25', (c) => c.callbacks.timeoutSeconds, 20, 25],
  'callback-retry-schedule': ['1,2', '3,4,5', (c) => c.callbacks.retrySchedule, [1, 2], [3, 4, 5]],
  'allow-private-callbacks': ['false', 'true', (c) => c.callbacks.allowPrivate, false, true],
  'expiry-interval-seconds': ['20', '30', (c) => c.expiryIntervalSeconds, 20, 30],
  'order-lifetime-seconds': ['600', '700', (c) => c.orderLifetimeSeconds, 600, 700],
  'max-open-orders-per-merchant': ['50', '60', (c) => c.maxOpenOrdersPerMerchant, 50, 60],
  'watch-window-seconds': ['100', '200', (c) => c.watchWindowSeconds, 100, 200],
  'timestamp-tolerance-seconds': ['60', '90', (c) => c.timestampToleranceSeconds, 60, 90],
  'request-timeout-seconds': ['10', '20', (c) => c.requestTimeoutSeconds, 10, 20],
  'max-connections': ['100', '200', (c) => c.connections.total, 100, 200],
  'max-connections-per-address': ['10', '20', (c) => c.connections.perAddress, 10, 20],
  'max-connections-per-network': ['30', '40', (c) => c.connections.perNetwork, 30, 40],
  'rate-limit': ['5/60', '7/30', (c) => c.rateLimit, { limit: 5, windowSeconds: 60 }, { limit: 7, windowSeconds: 30 }],
  'trusted-proxies': ['10.0.0.5', '192.168.0.0/16', (c) => c.trustedProxies, ['10.0.0.5'], ['192.168.0.0/16']],
  'public-url': ['https://flag.example/pay/', 'https://env.example', (c) => c.publicUrl, 'https://flag.example/pay', 'https://env.example'],
  'payment-page-rate-limit': ['10/60', '20/30', (c) => c.paymentPageRateLimit, { limit: 10, windowSeconds: 60 }, { limit: 20, windowSeconds: 30 }],
  'tron-explorer-tx-url': ['https://tron.flag.example/tx/{txId}', 'https://tron.env.example/#/{txId}', (c) => c.explorerTxUrls.Tron, 'https://tron.flag.example/tx/{txId}', 'https://tron.env.example/#/{txId}'],
  'ethereum-explorer-tx-url': ['https://eth.flag.example/tx/{txId}', 'https://eth.env.example/tx/{txId}?x=1', (c) => c.explorerTxUrls.Ethereum, 'https://eth.flag.example/tx/{txId}', 'https://eth.env.example/tx/{txId}?x=1'],
  'log-level': ['debug', 'error', (c) => c.logLevel, 'debug', 'error'],
  'event-retention-days': ['45', '90', (c) => c.eventRetentionDays, 45, 90],
  'redelivery-rate-limit': ['5/60', '20/3600', (c) => c.redeliveryRateLimit, { limit: 5, windowSeconds: 60 }, { limit: 20, windowSeconds: 3600 }],
  'sandbox-withdrawal-seconds': ['0', '60', (c) => c.sandboxWithdrawalSeconds, 0, 60],
  'tron-payout-key-file': ['/flag/tron.key', '/env/tron.key', (c) => c.payouts.keyFiles.Tron, '/flag/tron.key', '/env/tron.key'],
  'ethereum-payout-key-file': ['/flag/eth.key', '/env/eth.key', (c) => c.payouts.keyFiles.Ethereum, '/flag/eth.key', '/env/eth.key'],
  'ethereum-max-fee-gwei': ['50', '60', (c) => c.payouts.ethereumMaxFeePerGas, 50_000_000_000n, 60_000_000_000n],
  'tron-fee-limit-sun': ['1000', '2000', (c) => c.payouts.tronFeeLimitSun, 1000, 2000],
  'tron-payout-expiration-seconds': ['120', '300', (c) => c.payouts.tronExpirationSeconds, 120, 300],
  'payout-replace-after-seconds': ['30', '40', (c) => c.payouts.replaceAfterSeconds, 30, 40],
  'payout-funds-wait-hours': ['1', '2', (c) => c.payouts.fundsWaitHours, 1, 2],
  'ethereum-low-balance-usdt': ['500000000', '600000000', (c) => c.payouts.lowBalance.Ethereum.token, 500_000_000n, 600_000_000n],
  'ethereum-low-balance-eth': ['500000000000000000', '20000000000000000000', (c) => c.payouts.lowBalance.Ethereum.gas, 500_000_000_000_000_000n, 20_000_000_000_000_000_000n],
  'tron-low-balance-usdt': ['100000000', '200000000', (c) => c.payouts.lowBalance.Tron.token, 100_000_000n, 200_000_000n],
  'tron-low-balance-trx': ['500000000', '900000000', (c) => c.payouts.lowBalance.Tron.gas, 500_000_000n, 900_000_000n],
};

/**
 * What every case starts from: live mode (where a payout key file is taken), and with both networks
 * scanned, so that each chain setting has a place in the Config.
 */
const BASE_ENV: Record<string, string> = {
  PARTNER_API_MODE: 'live',
  SECRET_KEY: KEY,
  TRON_RPC_URL: 'https://tron.invalid/',
  ETHEREUM_RPC_URL: 'https://eth.invalid/',
  TRON_XPUB: 'xpub-base-tron',
  ETHEREUM_XPUB: 'xpub-base-eth',
  PUBLIC_URL: 'https://base.example',
};

describe('every other setting', () => {
  it('is in the table below: each setting that is not a secret, none missing and none extra', () => {
    expect(Object.keys(EVERY_OTHER_SETTING).sort()).toEqual(SETTING_NAMES.filter((name) => !isSecretSetting(name)).sort());
  });

  it.each(Object.entries(EVERY_OTHER_SETTING))('--%s is a flag and an environment variable, and the flag wins', (name, [flagValue, envValue, read, fromFlag, fromEnv]) => {
    const variable = settingEnv(name as SettingName);
    const env = { ...BASE_ENV };
    delete env[variable];
    expect(fromFlag).not.toEqual(fromEnv);
    expect(read(readConfig(env, { [name]: flagValue }))).toEqual(fromFlag);
    expect(read(readConfig({ ...env, [variable]: envValue }, {}))).toEqual(fromEnv);
    expect(read(readConfig({ ...env, [variable]: envValue }, { [name]: flagValue }))).toEqual(fromFlag);
  });
});

describe('the withdrawal settings', () => {
  it('default to the peers\' fees and the deposits\' minimums, and refuse a minimum of zero or a fee that is no amount', () => {
    const { networks, sandboxWithdrawalSeconds } = readConfig({}, {});
    expect([networks.Tron.withdrawalFee, networks.Ethereum.withdrawalFee, networks.Tron.minWithdrawal, networks.Ethereum.minWithdrawal]).toEqual([1_000_000n, 5_000_000n, 1_000_000n, 10_000_000n]);
    expect(sandboxWithdrawalSeconds).toBe(5);
    expect(() => readConfig({ TRON_MIN_WITHDRAWAL: '0' }, {})).toThrow('TRON_MIN_WITHDRAWAL must be at least 1 smallest unit, got "0"');
    expect(() => readConfig({ ETHEREUM_WITHDRAWAL_FEE: '1.5' }, {})).toThrow(/^ETHEREUM_WITHDRAWAL_FEE must be a whole number of smallest units/);
    expect(() => readConfig({ SANDBOX_WITHDRAWAL_SECONDS: '3601' }, {})).toThrow(/SANDBOX_WITHDRAWAL_SECONDS must be a whole number from 0 to 3600/);
  });
});

// Issue 53 (6): a sandbox credits made-up deposits; with a hot wallet it paid them out in real tokens.
describe('the payout key files', () => {
  it.each(['TRON_PAYOUT_KEY_FILE', 'ETHEREUM_PAYOUT_KEY_FILE'])('%s is refused in a sandbox, by default, by the variable or by the flag, saying why', (variable) => {
    const refusal = new ConfigError(
      `${variable} is refused in sandbox mode: the sandbox's balances are made up (its deposit helper), and a hot wallet would pay them out in real tokens; payouts on chain need --mode live`,
    );
    const file = join(dir, 'payout.key');
    expect(() => readConfig({ [variable]: file }, {})).toThrow(refusal);
    expect(() => readConfig({ ...BASE_ENV, PARTNER_API_MODE: 'sandbox', [variable]: file }, {})).toThrow(refusal);
    expect(() => readConfig({ ...BASE_ENV, [variable]: file }, { mode: 'sandbox' })).toThrow(refusal);
    expect(readConfig({ ...BASE_ENV, [variable]: file }, {}).payouts.keyFiles).toEqual(variable.startsWith('TRON') ? { Tron: file, Ethereum: undefined } : { Tron: undefined, Ethereum: file });
  });
});

describe("the payment page's explorer settings", () => {
  it('link to Tronscan and Etherscan by default', () => {
    expect(readConfig({}, {}).explorerTxUrls).toEqual({ Tron: 'https://tronscan.org/#/transaction/{txId}', Ethereum: 'https://etherscan.io/tx/{txId}' });
  });

  it.each(['https://tronscan.org/#/transaction/', 'tronscan.org/{txId}', 'javascript:alert("{txId}")', 'https://u:p@x.example/{txId}', 'https://x.example/{txId}/{txId}'])('refuse %s', (value) => {
    expect(() => readConfig({ TRON_EXPLORER_TX_URL: value }, {})).toThrow(/^TRON_EXPLORER_TX_URL must be an absolute http\(s\) URL with \{txId\} once/);
  });
});

describe('the reconciliation settings', () => {
  it('keep events 30 days and allow 10 redeliveries a minute by default', () => {
    const config = readConfig({}, {});
    expect(config.eventRetentionDays).toBe(30);
    expect(config.redeliveryRateLimit).toEqual({ limit: 10, windowSeconds: 60 });
  });

  it.each([
    [{ EVENT_RETENTION_DAYS: '0' }, 'EVENT_RETENTION_DAYS must be a whole number from 1 to 3650, got "0"'],
    [{ EVENT_RETENTION_DAYS: '7.5' }, 'EVENT_RETENTION_DAYS must be a whole number from 1 to 3650, got "7.5"'],
    [{ REDELIVERY_RATE_LIMIT: 'ten' }, 'REDELIVERY_RATE_LIMIT must be "requests/seconds", e.g. 100/60, got "ten"'],
  ])('refuses %o', (env, message) => {
    expect(() => readConfig(env, {})).toThrow(new ConfigError(message));
  });
});

// Issue 49 (1): loopback callbacks are allowed by default only where nobody but this machine reaches
// the sandbox; ALLOW_PRIVATE_CALLBACKS, set either way, decides over that default.
describe('loopback callbacks by default', () => {
  const loopback = (env: Record<string, string>) => readConfig(env, {}).callbacks;

  it('are allowed in a sandbox on loopback with no proxy and no public URL elsewhere: npm start as it comes', () => {
    for (const HOST of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) expect(loopback({ HOST }), HOST).toEqual(expect.objectContaining({ allowLoopback: true, allowPrivate: false }));
    expect(loopback({}).allowLoopback).toBe(true);
    expect(loopback({ PUBLIC_URL: 'http://127.0.0.1:8080' }).allowLoopback).toBe(true);
    expect(loopback({ PUBLIC_URL: 'http://localhost:8080/pay' }).allowLoopback).toBe(true);
  });

  it('are refused in a sandbox others reach: on another address, behind a proxy, with a public URL elsewhere', () => {
    for (const env of [{ HOST: '0.0.0.0' }, { HOST: '::' }, { HOST: '192.0.2.10' }, { TRUSTED_PROXIES: '127.0.0.1' }, { PUBLIC_URL: 'https://sandbox.shop.example' }] as Record<string, string>[]) {
      expect(loopback(env).allowLoopback, JSON.stringify(env)).toBe(false);
    }
  });

  it('follow ALLOW_PRIVATE_CALLBACKS when it is set, either way, and never open live mode by themselves', () => {
    expect(loopback({ ALLOW_PRIVATE_CALLBACKS: 'false' }).allowLoopback).toBe(false);
    expect(loopback({ HOST: '0.0.0.0', ALLOW_PRIVATE_CALLBACKS: 'true' })).toEqual(expect.objectContaining({ allowLoopback: true, allowPrivate: true }));
    expect(loopback({ ...BASE_ENV, PARTNER_API_MODE: 'live', PUBLIC_URL: 'https://127.0.0.1' }).allowLoopback).toBe(false);
  });
});

describe('the connection limits (issue 50)', () => {
  it('are 4096 in all, 512 per address and 1024 per network by default, and refuse 0', () => {
    expect(readConfig({}, {}).connections).toEqual({ total: 4096, perAddress: 512, perNetwork: 1024 });
    expect(() => readConfig({ MAX_CONNECTIONS_PER_NETWORK: '0' }, {})).toThrow(/^MAX_CONNECTIONS_PER_NETWORK must be a whole number from 1 to 1000000, got "0"$/);
    expect(() => readConfig({ MAX_CONNECTIONS: '0' }, {})).toThrow(/^MAX_CONNECTIONS must be a whole number from 1 to 1000000, got "0"$/);
    expect(() => readConfig({ MAX_CONNECTIONS_PER_ADDRESS: 'many' }, {})).toThrow(/^MAX_CONNECTIONS_PER_ADDRESS must be a whole number/);
  });
});
