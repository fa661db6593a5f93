// The sandbox's transaction ids: what its withdrawals are DONE with where no chain paid them (its own
// settlement, its helper, the operator's set-status without --tx-id), one way for all.
import { randomBytes } from 'node:crypto';
import type { Network } from '../shared/network.js';

/** A transaction id in the network's form (`0x` + 64 hex on Ethereum, 64 hex on Tron), random. */
export function madeUpTxId(network: Network): string {
  const hex = randomBytes(32).toString('hex');
  return network === 'Ethereum' ? `0x${hex}` : hex;
}
