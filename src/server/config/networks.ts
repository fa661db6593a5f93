// Each network's settings: its deposit wallet (an xpub), its token, amounts and fees, confirmations, the
// node its scanner reads and the explorer its payment page links to.
import type { Network } from '../shared/network.js';
import type { Mode } from './server.js';
import { amount, ConfigError, integer, positiveAmount, rpcUrl, type SettingGetter } from './values.js';

export const NETWORK_SETTINGS = {
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
  'tron-explorer-tx-url': { env: 'TRON_EXPLORER_TX_URL' },
  'ethereum-explorer-tx-url': { env: 'ETHEREUM_EXPLORER_TX_URL' },
} as const;

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

export function xpubFor(network: Network, mode: Mode, value: string | undefined): string {
  const name = `${network.toUpperCase()}_XPUB`;
  if (!value) {
    if (mode === 'live') throw new ConfigError(`${name} is required in live mode: the account-level xpub of the ${network} deposit wallet`);
    return SANDBOX_XPUBS[network];
  }
  if (mode === 'live' && value === SANDBOX_XPUBS[network]) throw new ConfigError(`${name} is the public test wallet: never use it in live mode`);
  return value; // its key is checked by the deriver when the platform opens
}

/** 0x-hex, lowercased; on Tron a T… address is kept for the wiring, whose deriver checks and converts it. */
export function contractAddress(network: Network, name: string, text: string): string {
  if (/^0x[0-9a-fA-F]{40}$/.test(text)) return text.toLowerCase();
  if (network === 'Tron' && /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(text)) return text;
  throw new ConfigError(`${name} must be a contract address (0x + 40 hex${network === 'Tron' ? ', or a T… address' : ''}), got "${text}"`);
}

/** A block explorer's transaction page: an absolute http(s) URL with `{txId}` once, where the transaction id goes. */
export function explorerTxUrl(name: string, text: string): string {
  const url = URL.canParse(text.replace('{txId}', 'x')) ? new URL(text.replace('{txId}', 'x')) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || text.split('{txId}').length !== 2 || text.length > 1024) {
    throw new ConfigError(`${name} must be an absolute http(s) URL with {txId} once where the transaction id goes (at most 1024 characters), got "${text}"`);
  }
  return text;
}

export function networkConfig(
  network: Network,
  mode: Mode,
  get: SettingGetter<typeof NETWORK_SETTINGS>,
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
