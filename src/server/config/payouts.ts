// Paying withdrawals: the hot wallets' key files (live mode only), the Tron API payouts use, the most a
// payout may spend on fees, when one is replaced, how long one waits for funds; and the sandbox's own
// settlement of withdrawals asked for through the API; the hot wallets' low-balance thresholds (alerts).
import type { Network } from '../shared/network.js';
import type { Mode } from './server.js';
import { ConfigError, integer, optionalUrl, type SettingGetter } from './values.js';

export const PAYOUT_SETTINGS = {
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
  'ethereum-low-balance-usdt': { env: 'ETHEREUM_LOW_BALANCE_USDT' },
  'ethereum-low-balance-eth': { env: 'ETHEREUM_LOW_BALANCE_ETH' },
  'tron-low-balance-usdt': { env: 'TRON_LOW_BALANCE_USDT' },
  'tron-low-balance-trx': { env: 'TRON_LOW_BALANCE_TRX' },
} as const;

/**
 * A hot wallet's low-balance thresholds, in smallest units as every amount setting: `token` in the
 * token's (USDT: 1000000 = 1 USDT), `gas` in the network's own coin's (wei of ETH, sun of TRX). Unset:
 * no threshold, no alert. Exported as metrics beside the balances (partner_payout_hot_wallet_*).
 */
export type LowBalance = { token?: bigint; gas?: bigint };

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
  lowBalance: Record<Network, LowBalance>;
}

export function payoutConfig(mode: Mode, get: SettingGetter<typeof PAYOUT_SETTINGS>): PayoutConfig {
  return {
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
    lowBalance: {
      Ethereum: lowBalance({ token: ['ETHEREUM_LOW_BALANCE_USDT', get('ethereum-low-balance-usdt')], gas: ['ETHEREUM_LOW_BALANCE_ETH', get('ethereum-low-balance-eth')] }),
      Tron: lowBalance({ token: ['TRON_LOW_BALANCE_USDT', get('tron-low-balance-usdt')], gas: ['TRON_LOW_BALANCE_TRX', get('tron-low-balance-trx')] }),
    },
  };
}

/**
 * The thresholds given, each a whole number of smallest units (as every amount setting), read as a bigint:
 * wei pass JSON's exact integers (2^53 wei is 0.009 ETH), so not through `amount`, whose values are the API's.
 */
function lowBalance(settings: Record<keyof LowBalance, [string, string | undefined]>): LowBalance {
  const thresholds: LowBalance = {};
  for (const [asset, [name, text]] of Object.entries(settings) as [keyof LowBalance, [string, string | undefined]][]) {
    if (text === undefined) continue;
    if (!/^\d{1,30}$/.test(text)) throw new ConfigError(`${name} must be a whole number of smallest units (USDT: 1000000 = 1 USDT; ETH in wei, TRX in sun), got "${text}"`);
    thresholds[asset] = BigInt(text);
  }
  return thresholds;
}

/**
 * The hot wallets' key files: live mode only. A sandbox's balances are made up (its deposit helper
 * credits what no chain received), and a hot wallet there would pay them out in real tokens.
 */
function payoutKeyFiles(mode: Mode, files: Record<Network, string | undefined>): Record<Network, string | undefined> {
  for (const network of ['Ethereum', 'Tron'] as const) {
    if (mode === 'sandbox' && files[network] !== undefined) {
      throw new ConfigError(`${network.toUpperCase()}_PAYOUT_KEY_FILE is refused in sandbox mode: the sandbox's balances are made up (its deposit helper), and a hot wallet would pay them out in real tokens; payouts on chain need --mode live`);
    }
  }
  return files;
}
