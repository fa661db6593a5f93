// The environment of a live platform on an Ethereum test chain: what the end-to-end tests share, each
// adding its database, data directory, payout key and log level.
import { randomBytes } from 'node:crypto';
import { HDKey } from '@scure/bip32';

/** A live platform's own settings, no chain: wallets of their own (a random seed's xpubs, so no earlier run's orders match) and a secret key. */
export function liveEnv(): Record<string, string> {
  const seed = randomBytes(32);
  return {
    PARTNER_API_MODE: 'live',
    PUBLIC_URL: 'https://pay.partner.example',
    SECRET_KEY: randomBytes(32).toString('base64'),
    ETHEREUM_XPUB: HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").publicExtendedKey,
    TRON_XPUB: HDKey.fromMasterSeed(seed).derive("m/44'/195'/0'").publicExtendedKey,
  };
}

/** liveEnv with the chain's RPC URL and token, scanned every second from `startBlock`. */
export function liveEthereumEnv({ rpcUrl, token, confirmations, startBlock }: { rpcUrl: string; token: string; confirmations: number; startBlock: number | bigint }): Record<string, string> {
  return {
    ...liveEnv(),
    ETHEREUM_RPC_URL: rpcUrl,
    ETHEREUM_TOKEN_CONTRACT: token,
    ETHEREUM_CONFIRMATIONS: String(confirmations),
    ETHEREUM_POLL_SECONDS: '1',
    ETHEREUM_START_BLOCK: String(startBlock),
    RATE_LIMIT: '100000/60',
  };
}
