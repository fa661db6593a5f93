// `partner-api deposits rescan`: finds the transfers to one order's address that the scanner did not
// credit (after the watch window, or missed for any reason) and credits them through the same path,
// exactly once: a transfer credited before is recognised by its deposit identity and skipped.
import type { Network } from '../shared/network.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { creditTransfers, type Credit } from '../orders/deposits.js';
import { orderAddress } from '../orders/order-rows.js';
import type { Clock } from '../shared/time.js';
import { haltedNetworks } from './halt.js';
import { ChainScanner, rangeEnd } from './scanner.js';
import { acceptedTransfers } from './transfer-logs.js';
import type { JsonRpcClient } from './rpc.js';

export class RescanError extends Error {}

/** The default start is an hour before the order's creation: the server's and the chain's clocks may differ. */
const CLOCK_MARGIN_SECONDS = 3600;

export interface RescanResult {
  orderUuid: string;
  network: Network;
  address: string;
  fromBlock: bigint;
  toBlock: bigint;
  /** Transfers to the address found in the range (credited before or now). */
  found: number;
  credits: Credit[];
}


/**
 * Scans one order's address from `fromBlock` (by default the first block at or after the order's
 * creation less an hour, found by block timestamps: no transfer to a fresh address can come before) up to the
 * network's confirmed head, and credits what was not credited yet, whatever the watch window.
 */
export async function rescanOrder(deps: { db: Database; config: Config; now: Clock }, orderUuid: string, fromBlock?: bigint): Promise<RescanResult | undefined> {
  const { db, config, now } = deps;
  const order = await orderAddress(db, orderUuid);
  if (!order) return undefined;
  const network = order.blockchain;
  const { chain, confirmations } = config.networks[network];
  if (!chain) throw new RescanError(`no ${network.toUpperCase()}_RPC_URL: ${network} cannot be scanned`);
  if ((await haltedNetworks(db)).some((h) => h.network === network)) {
    throw new RescanError(`crediting on ${network} is halted after a deep reorg: resume it first (partner-api chain resume --blockchain ${network.toLowerCase()})`);
  }
  const scanner = new ChainScanner({ network, chain, confirmations, watchWindowSeconds: config.watchWindowSeconds, db, now });
  const head = await scanner.confirmedHead();
  const start = fromBlock ?? (await firstBlockAtOrAfter(scanner.rpc, head, Math.floor(order.created_at.getTime() / 1000) - CLOCK_MARGIN_SECONDS));
  const result: RescanResult = { orderUuid, network, address: order.address, fromBlock: start, toBlock: head, found: 0, credits: [] };
  const topics = new Set([scanner.topic(order.address)]);
  for (let from = start; from <= head; from += BigInt(chain.maxBlockRange)) {
    const to = rangeEnd(from, head, chain.maxBlockRange);
    const logs = await scanner.logs(from, to, [order.address]);
    const end = await scanner.requireBlock(to, 'the last block of the rescanned range'); // a lagging node: stop, nothing lost
    const { transfers } = acceptedTransfers(network, logs, chain.tokenContract, topics);
    result.found += transfers.length;
    if (transfers.length === 0) continue;
    await scanner.stampBlockTimes(transfers, [end]);
    const at = new Date(now());
    const { credits } = await db.transaction((tx) => creditTransfers(tx, transfers, { now: at, at, watchWindowSeconds: config.watchWindowSeconds, anyTime: true }));
    result.credits.push(...credits);
  }
  return result;
}

/** The first block whose timestamp is at or after `time` (UNIX seconds), by bisection up to `head`. */
async function firstBlockAtOrAfter(rpc: JsonRpcClient, head: bigint, time: number): Promise<bigint> {
  let low = 0n;
  let high = head < 0n ? 0n : head;
  while (low < high) {
    const middle = (low + high) / 2n;
    if ((await rpc.blockTimestamp(middle)) < time) low = middle + 1n;
    else high = middle;
  }
  return low;
}
