// Transfer logs as deposits: an ERC-20 Transfer log decoded into the platform's transfer (its address
// forms per network), and the filter of what a node answered down to the transfers a scan may credit.
import { toChecksumAddress, toTronAddress, tronAddressToId } from '../addresses/derivation.js';
import type { Network } from '../shared/network.js';
import type { Transfer } from '../orders/transfer.js';
import type { RpcLog } from './rpc.js';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A deposit address as the 32-byte topic of a Transfer's `to`. */
export function addressTopic(network: Network, address: string): string {
  const id = network === 'Tron' ? Buffer.from(tronAddressToId(address)).toString('hex') : address.slice(2).toLowerCase();
  return `0x${id.padStart(64, '0')}`;
}

/** The deposit address a Transfer's `to` topic names, in the platform's form. */
export function topicAddress(network: Network, topic: string): string {
  const id = Uint8Array.from(Buffer.from(topic.slice(-40), 'hex'));
  return network === 'Tron' ? toTronAddress(id) : toChecksumAddress(id);
}

/** A log as a transfer; Tron's transaction ids are written without 0x, as Tron writes them. */
export function logToTransfer(network: Network, log: RpcLog): Transfer | undefined {
  if (log.removed || log.topics[0] !== TRANSFER_TOPIC || log.topics.length !== 3) return undefined;
  const hash = log.transactionHash.toLowerCase();
  return {
    network,
    txHash: network === 'Tron' ? hash.replace(/^0x/, '') : hash,
    logIndex: Number(BigInt(log.logIndex)),
    blockNumber: BigInt(log.blockNumber),
    ...(log.blockHash ? { blockHash: log.blockHash.toLowerCase() } : {}),
    to: topicAddress(network, log.topics[2]!),
    amount: BigInt(log.data === '0x' ? 0 : log.data),
    source: 'chain',
  };
}

/**
 * The transfers a scan may credit: Transfer logs of the configured token contract to an address it
 * asked for (or, for a scan of all the token's Transfers, to a watched address), and nothing else,
 * whatever the node answered (a provider that ignores the address or topic filter must not make a fake
 * token's transfer count as USDT). Each gets its ordinal among its transaction's transfers to the
 * same address. `ignored` counts what is not the token's Transfer at all (and logs answered twice);
 * `unrequested` the token's Transfers to other addresses: from an address-filtered query, a node that
 * ignored the filter; from a query of all the token's Transfers, everybody else's payments.
 */
export function acceptedTransfers(
  network: Network,
  logs: readonly RpcLog[],
  tokenContract: string,
  requestedTopics: ReadonlySet<string>,
): { transfers: Transfer[]; ignored: number; unrequested: number } {
  const transfers: Transfer[] = [];
  let ignored = 0;
  let unrequested = 0;
  const token = tokenContract.toLowerCase();
  const unique = new Map(logs.map((log) => [`${log.transactionHash.toLowerCase()}/${BigInt(log.logIndex)}`, log]));
  ignored += logs.length - unique.size; // a node that answered a log twice
  for (const log of unique.values()) {
    if (!isTokenTransfer(log, token)) {
      ignored++;
      continue;
    }
    const transfer = requestedTopics.has(log.topics[2]!.toLowerCase()) ? logToTransfer(network, log) : undefined;
    if (transfer) transfers.push(transfer);
    else unrequested++;
  }
  transfers.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
  const seen = new Map<string, number>();
  for (const transfer of transfers) {
    const key = `${transfer.txHash}/${transfer.to}`;
    transfer.ordinal = seen.get(key) ?? 0;
    seen.set(key, transfer.ordinal + 1);
  }
  return { transfers, ignored, unrequested };
}

/** A log of the token contract (lower case) shaped as an ERC-20 Transfer, not removed. */
export function isTokenTransfer(log: RpcLog, token: string): boolean {
  return !log.removed && log.address.toLowerCase() === token && log.topics.length === 3 && log.topics[0] === TRANSFER_TOPIC && typeof log.topics[2] === 'string';
}
