// The chain scanner (docs/design.md#the-platforms-architecture): the network's cursor and its state
// machine. ERC-20 Transfer logs to watched deposit addresses (decoded in transfer-logs.ts), read over
// JSON-RPC up to the confirmed head, credited in the same transaction that advances the cursor. One
// implementation for Ethereum and Tron.
import type { Network } from '../addresses/derivation.js';
import type { ChainConfig } from '../config.js';
import type { Database } from '../db/database.js';
import { creditTransfers, watchedAddresses, type Credit, type Transfer } from '../orders/deposits.js';
import type { Clock } from '../shared/time.js';
import { runRepeatedly } from '../shared/repeat.js';
import { halt } from './halt.js';
import { FinalityUnavailableError, isLogLimitError, JsonRpcClient, suggestedRange, type RpcBlock, type RpcLog } from './rpc.js';
import { acceptedTransfers, addressTopic, TRANSFER_TOPIC } from './transfer-logs.js';
import type { Logger } from '../shared/logger.js';

/** The last block of a scan step from `fromBlock`: at most `maxBlockRange` blocks, never past `head`. */
export function rangeEnd(fromBlock: bigint, head: bigint, maxBlockRange: number): bigint {
  const last = fromBlock + BigInt(maxBlockRange) - 1n;
  return head < last ? head : last;
}

/** A network that cannot be scanned safely as configured. */
export class ScannerStartError extends Error {}

class ScanStoppedError extends Error {
  constructor() {
    super('the scanner was stopped');
  }
}

export interface ScanResult {
  fromBlock: bigint;
  toBlock: bigint;
  logs: number;
  /** Logs the node returned that are not the token's Transfers to a requested address. */
  ignored: number;
  credits: Credit[];
}

/** The node does not (yet) have a block the scan needs: a lagging backend. Nothing is committed. */
export class NodeBehindError extends Error {}

/** Gauges a scanner keeps up to date (Prometheus, in the platform). */
export interface ScannerGauges {
  /** Confirmed blocks not yet scanned: confirmed head − cursor + 1. */
  lag: { set(labels: { network: string }, value: number): void };
  /** 1 while the network is halted after a reorg deeper than its confirmations. */
  halted: { set(labels: { network: string }, value: number): void };
}

export interface ScannerOptions {
  network: Network;
  chain: ChainConfig;
  confirmations: number;
  watchWindowSeconds: number;
  db: Database;
  now: Clock;
  log?: Logger;
  gauges?: ScannerGauges;
}

interface CursorRow {
  next_block: bigint;
  last_block_hash: string | null;
  halted_at: Date | null;
}

export class ChainScanner {
  readonly rpc: JsonRpcClient;
  /** Address → topic: decoding base58 for every watched address on every poll is the scan's main cost on Tron. */
  private readonly topics = new Map<string, string>();
  private loop: { stop(): Promise<void> } | undefined;
  private stopped = false;
  private haltReported = false;

  constructor(private readonly options: ScannerOptions) {
    this.rpc = new JsonRpcClient(options.chain.rpcUrl);
  }

  get network(): Network {
    return this.options.network;
  }

  /**
   * The newest block whose transfers count: enough confirmations, or the node's finalized block.
   * Only a node that does not know the `finalized` tag falls back to confirmations; any other
   * failure ends the round (retried at the next), so a rate limit never moves crediting past finality,
   * and a node without a finalized block yet (FinalityUnavailableError) makes the scan wait.
   */
  async confirmedHead(): Promise<bigint> {
    if (this.options.chain.finality === 'finalized') {
      const finalized = await this.rpc.finalizedBlock();
      if (finalized !== undefined) return finalized;
    }
    return (await this.rpc.blockNumber()) - BigInt(this.options.confirmations) + 1n;
  }

  /**
   * Makes sure the network has a cursor. The first one starts at *_START_BLOCK, or at the confirmed
   * head when no order waits on this network yet; with orders waiting and no start block it refuses,
   * since their earlier deposits would never be credited.
   */
  async prepare(): Promise<void> {
    const { db, network, chain, now, watchWindowSeconds } = this.options;
    const [row] = await db.query('SELECT 1 FROM chain_cursors WHERE network = $1', [network]);
    if (row) return;
    let start: bigint;
    if (chain.startBlock !== undefined) start = BigInt(chain.startBlock);
    else {
      const waiting = await watchedAddresses(db, network, new Date(now()), watchWindowSeconds);
      if (waiting.length > 0) {
        throw new ScannerStartError(
          `${network.toUpperCase()}_START_BLOCK is required: ${waiting.length} ${network} order(s) exist that were never scanned; ` +
            'set it to a block before the oldest of them',
        );
      }
      start = await this.confirmedHead();
    }
    await db.query('INSERT INTO chain_cursors (network, next_block) VALUES ($1, $2) ON CONFLICT (network) DO NOTHING', [network, start < 0n ? 0n : start]);
  }

  private async cursor(): Promise<CursorRow> {
    await this.prepare();
    const [row] = await this.options.db.query<CursorRow>('SELECT next_block, last_block_hash, halted_at FROM chain_cursors WHERE network = $1', [this.options.network]);
    return row!;
  }

  /** The token's Transfer logs to these addresses, the query split wherever the node refuses its size. */
  async logs(fromBlock: bigint, toBlock: bigint, addresses: string[]): Promise<RpcLog[]> {
    const { chain } = this.options;
    const out: RpcLog[] = [];
    for (let i = 0; i < addresses.length; i += chain.maxAddressesPerQuery) {
      out.push(...(await this.logsSplitting(fromBlock, toBlock, addresses.slice(i, i + chain.maxAddressesPerQuery).map((a) => this.topic(a)))));
    }
    return out;
  }

  /**
   * One eth_getLogs; a result- or range-limit error splits the blocks (at the provider's suggested
   * range if it gives one, else in halves) down to one block, then the address batch down to one
   * address. Only a single block for a single address that still fails is an error: nothing is skipped.
   */
  private async logsSplitting(fromBlock: bigint, toBlock: bigint, topics: string[]): Promise<RpcLog[]> {
    if (this.stopped) throw new ScanStoppedError();
    try {
      return await this.rpc.getLogs({ fromBlock, toBlock, address: this.options.chain.tokenContract, topics: [TRANSFER_TOPIC, null, topics] });
    } catch (error) {
      if (!isLogLimitError(error) || (fromBlock === toBlock && topics.length === 1)) throw error;
      this.options.log?.warn({ network: this.options.network, fromBlock: String(fromBlock), toBlock: String(toBlock), addresses: topics.length, err: (error as Error).message }, 'eth_getLogs refused for its size: splitting the query');
      if (fromBlock < toBlock) {
        const suggested = suggestedRange(error);
        const middle = suggested && suggested.to >= fromBlock && suggested.to < toBlock ? suggested.to : fromBlock + (toBlock - fromBlock) / 2n;
        return [...(await this.logsSplitting(fromBlock, middle, topics)), ...(await this.logsSplitting(middle + 1n, toBlock, topics))];
      }
      const half = Math.ceil(topics.length / 2);
      return [...(await this.logsSplitting(fromBlock, toBlock, topics.slice(0, half))), ...(await this.logsSplitting(fromBlock, toBlock, topics.slice(half)))];
    }
  }

  topic(address: string): string {
    let topic = this.topics.get(address);
    if (topic === undefined) {
      if (this.topics.size >= 1_000_000) this.topics.clear();
      topic = addressTopic(this.options.network, address);
      this.topics.set(address, topic);
    }
    return topic;
  }

  /** A block the scan relies on; a node without it is behind, and the round ends without committing. */
  async requireBlock(number: bigint, why: string): Promise<RpcBlock> {
    const block = await this.rpc.block(number);
    if (!block) throw new NodeBehindError(`the node does not have block ${number} (${why}): a lagging backend; nothing committed, retried next round`);
    return block;
  }

  /** Scans the next range of confirmed blocks; undefined when there is none yet, or the network is halted. */
  async scanOnce(): Promise<ScanResult | undefined> {
    const { db, network, chain, now, watchWindowSeconds, gauges } = this.options;
    const cursor = await this.cursor();
    gauges?.halted.set({ network }, cursor.halted_at ? 1 : 0);
    if (cursor.halted_at) {
      // Once per process (e.g. after a restart), not on every poll.
      if (!this.haltReported) this.options.log?.error({ network, haltedAt: cursor.halted_at }, `crediting on ${network} is HALTED: review, then partner-api chain resume --network ${network.toLowerCase()}`);
      this.haltReported = true;
      return undefined;
    }
    this.haltReported = false;
    const head = await this.confirmedHead();
    const fromBlock = cursor.next_block;
    const lag = head >= fromBlock ? head - fromBlock + 1n : 0n;
    gauges?.lag.set({ network }, Number(lag));
    if (fromBlock > head) return undefined;
    const toBlock = rangeEnd(fromBlock, head, chain.maxBlockRange);

    // Continuity: the block the cursor last scanned must still be the node's block at that height.
    // It had its confirmations when it was scanned, so a change means a reorg deeper than them.
    const first = await this.requireBlock(fromBlock, 'the first block of the range');
    if (cursor.last_block_hash) {
      const last = await this.requireBlock(fromBlock - 1n, "the cursor's last block");
      if (last.hash !== cursor.last_block_hash) {
        await halt(db, network, new Date(now()), `block ${fromBlock - 1n} is now ${last.hash}, but ${cursor.last_block_hash} was scanned: a reorg deeper than ${this.options.confirmations} confirmations`);
        this.options.log?.error({ network, block: String(fromBlock - 1n), scanned: cursor.last_block_hash, now: last.hash }, 'deep reorg: crediting on this network is HALTED until an operator resumes it (partner-api chain resume)');
        gauges?.halted.set({ network }, 1);
        this.haltReported = true;
        return undefined;
      }
      if (first.parentHash !== last.hash) throw new NodeBehindError(`block ${fromBlock}'s parent is not block ${fromBlock - 1n}: the node's chain changed under the scan; retried next round`);
    }

    const wallClock = new Date(now());
    // The watch window is judged at the range's first block: a scanner catching up after an outage
    // still credits the late payments that were inside their window when they were made.
    const at = new Date(first.timestamp * 1000);
    const addresses = await watchedAddresses(db, network, at, watchWindowSeconds);
    const logs = addresses.length > 0 ? await this.logs(fromBlock, toBlock, addresses) : [];
    const { transfers, ignored } = acceptedTransfers(network, logs, chain.tokenContract, new Set(addresses.map((a) => this.topic(a))));
    if (ignored > 0) this.options.log?.warn({ network, fromBlock: String(fromBlock), toBlock: String(toBlock), ignored }, 'logs ignored: not the token contract\'s Transfer to a requested address');

    // The node must have had the whole range: a lagging backend answers eth_getLogs for blocks it
    // does not have with nothing, and the cursor would pass deposits that are then lost.
    const end = await this.requireBlock(toBlock, 'the last block of the range');
    if (logs.some((log) => BigInt(log.blockNumber) === toBlock && log.blockHash && log.blockHash.toLowerCase() !== end.hash)) {
      throw new NodeBehindError(`the logs of block ${toBlock} are from another chain than its block: retried next round`);
    }
    await this.stampBlockTimes(transfers, [first, end]);

    const credits = await db.transaction(async (tx) => {
      // The cursor row is locked and checked: a second instance that scanned the range meanwhile wins.
      const [locked] = await tx.query<CursorRow>('SELECT next_block, last_block_hash, halted_at FROM chain_cursors WHERE network = $1 FOR UPDATE', [network]);
      if (locked!.next_block !== fromBlock || locked!.halted_at) return undefined;
      const { credits: credited, refusals } = await creditTransfers(tx, transfers, { now: wallClock, at, watchWindowSeconds });
      for (const { transfer, reason } of refusals) this.options.log?.error({ network, txHash: transfer.txHash, logIndex: transfer.logIndex, to: transfer.to }, `transfer not credited: ${reason}`);
      // The end block's time is the network's chain time, by which its orders expire (expireOrders).
      await tx.query(
        'UPDATE chain_cursors SET next_block = $2, last_block_hash = $3, scanned_block_time = $4, updated_at = $5 WHERE network = $1',
        [network, toBlock + 1n, end.hash, new Date(end.timestamp * 1000), wallClock],
      );
      return credited;
    });
    if (!credits) return undefined;
    const remaining = head - toBlock;
    gauges?.lag.set({ network }, Number(remaining));
    if (remaining >= BigInt(chain.maxBlockRange)) this.options.log?.info?.({ network, fromBlock: String(fromBlock), toBlock: String(toBlock), lag: Number(remaining) }, 'chain scanner catching up');
    return { fromBlock, toBlock, logs: logs.length, ignored, credits };
  }

  /** Gives each transfer its block's time (the callback's occurredAt); a block the node lacks ends the round. */
  async stampBlockTimes(transfers: readonly Transfer[], known: readonly RpcBlock[]): Promise<void> {
    const times = new Map(known.map((block) => [block.number, block.timestamp]));
    for (const transfer of transfers) {
      let timestamp = times.get(transfer.blockNumber);
      if (timestamp === undefined) {
        timestamp = (await this.requireBlock(transfer.blockNumber, "a credited transfer's block")).timestamp;
        times.set(transfer.blockNumber, timestamp);
      }
      transfer.blockTime = new Date(timestamp * 1000);
    }
  }

  /** Scans every poll interval while `holdsLease` says this instance holds the network's job lease. */
  start(holdsLease: () => Promise<boolean> = async () => true): void {
    this.stopped = false;
    this.loop = runRepeatedly(
      async () => (await holdsLease()) && (await this.scanOnce()) !== undefined, // catching up: scan again at once
      this.options.chain.pollIntervalSeconds * 1000,
      (error) =>
        error instanceof FinalityUnavailableError
          ? this.options.log?.warn({ network: this.options.network, err: error.message }, 'finality is "finalized" but the node has no finalized block yet: crediting waits')
          : this.options.log?.warn({ err: error, network: this.options.network }, 'chain scan failed; retrying'),
    );
  }

  /** Stops after the query under way: a scan being stopped writes nothing. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop?.stop();
  }
}
