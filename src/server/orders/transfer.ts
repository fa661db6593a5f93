// A token transfer to a deposit address, as the scanner reads it from the chain or the sandbox makes it:
// what crediting (deposits.ts) and the unconfirmed list (unconfirmed.ts) take.
import type { Network } from '../shared/network.js';

export interface Transfer {
  network: Network;
  /** As the network writes it: 0x-hex on Ethereum, bare hex on Tron. */
  txHash: string;
  logIndex: number;
  /** The n-th (from 0) transfer of this transaction to this address, in log order: unlike the log
   * index, it stays the same when the transaction is re-mined elsewhere after a reorg. */
  ordinal?: number;
  blockNumber: bigint;
  blockHash?: string;
  /** Its block's time (the callback's occurredAt); the sandbox's transfers happen at the wall clock. */
  blockTime?: Date;
  /** The deposit address in the platform's form (EIP-55 or Tron base58). */
  to: string;
  amount: bigint;
  source: 'chain' | 'sandbox';
}
