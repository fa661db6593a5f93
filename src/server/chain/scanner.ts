// The chain scanner (docs/design.md#the-platforms-architecture): the network's scan position and its
// state machine. ERC-20 Transfer logs to watched deposit addresses (decoded in transfer-logs.ts), read over
// JSON-RPC up to the confirmed head, credited in the same transaction that advances the scan position.
// One implementation for Ethereum and Tron. The scan position is a row of the chain_cursors table, which
// keeps its name from before issue 48; the code says scan position, as the README's words do.
import type { Network } from '../shared/network.js';
import type { ChainConfig } from '../config.js';
import type { Database } from '../db/database.js';
import { countWatched, creditTransfers, watchedAddresses, watchedAmong, type Credit } from '../orders/deposits.js';
import type { Transfer } from '../orders/transfer.js';
import { replaceUnconfirmed } from '../orders/unconfirmed.js';
import type { Clock } from '../shared/time.js';
import { runRepeatedly } from '../shared/repeat.js';
import { halt } from './halt.js';
import { FinalityUnavailableError, isBlockMissing, isLogLimitError, JsonRpcClient, suggestedRange, type RpcBlock, type RpcLog } from './rpc.js';
import { acceptedTransfers, addressTopic, isTokenTransfer, topicAddress, TRANSFER_TOPIC } from './transfer-logs.js';
import type { Logger } from '../shared/logger.js';

/** The last block of a scan step from `fromBlock`: at most `maxBlockRange` blocks, never past `head`. */
export function rangeEnd(fromBlock: bigint, head: bigint, maxBlockRange: number): bigint {
  const last = fromBlock + BigInt(maxBlockRange) - 1n;
  return head < last ? head : last;
}

/** The confirmations a transfer needs now: latest − confirmed head + 1 (the setting; with `finalized`, today's distance to finality). */
function requiredConfirmations(heads: { confirmed: bigint; latest: bigint }): number {
  const needed = Number(heads.latest - heads.confirmed + 1n);
  return Math.min(100_000, Math.max(1, needed));
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
  /** Logs the node returned that are not the token's Transfers to a requested (or, querying all the token's Transfers, a watched) address. */
  ignored: number;
  credits: Credit[];
  /** How the logs were asked for: by the watched addresses, all the token's Transfers, or not at all (nothing watched). */
  query: Watch['kind'];
  /** Transfers to watched orders seen above the confirmed head (undefined: not looked at in this scan). */
  unconfirmed?: number;
}

/**
 * What a scan asks the node for (issue 33): nothing when no order is watched; the watched addresses'
 * Transfers when they fit in one query (maxAddressesPerQuery); else all the token's Transfers of the
 * range, matched against the watched orders in the platform, so that the calls per range do not grow
 * with the orders.
 */
export type Watch = { kind: 'none' } | { kind: 'addresses'; topics: string[] } | { kind: 'token' };

/** A query of all the token's Transfers aims at about this many logs: its block range adapts to the token's traffic (memory, and fewer result-limit refusals). */
export const TARGET_LOGS_PER_QUERY = 10_000;
/** The first block range of a query of all the token's Transfers, before the token's traffic is known. */
const FIRST_TOKEN_RANGE = 100;

type Where = { fromBlock: bigint; toBlock: bigint } | { blockHash: string; number: bigint };

/** The node does not (yet) have a block the scan needs: a lagging backend. Nothing is committed. */
export class NodeBehindError extends Error {}

/** Gauges a scanner keeps up to date (Prometheus, in the platform). */
export interface ScannerGauges {
  /** Confirmed blocks not yet scanned: confirmed head − scan position + 1. */
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

/** A network's scan position: the next block to scan, the last scanned block's hash, and whether it is halted. */
interface ScanPositionRow {
  next_block: bigint;
  last_block_hash: string | null;
  halted_at: Date | null;
}

export class ChainScanner {
  readonly rpc: JsonRpcClient;
  /** Address → topic: decoding base58 for every watched address on every poll is the scan's main cost on Tron. */
  private readonly topics = new Map<string, string>();
  /** Topic → address, the other way, for the recipients of a query of all the token's Transfers. */
  private readonly addresses = new Map<string, string>();
  private loop: { stop(): Promise<void> } | undefined;
  private stopped = false;
  private haltReported = false;
  /** Blocks per query of all the token's Transfers, as the token's traffic so far says (see TARGET_LOGS_PER_QUERY). */
  private tokenRange: number | undefined;

  constructor(private readonly options: ScannerOptions) {
    this.rpc = new JsonRpcClient(options.chain.rpcUrl);
  }

  get network(): Network {
    return this.options.network;
  }

  /** The newest block whose transfers count: enough confirmations, or the node's finalized block (JsonRpcClient.heads). */
  async confirmedHead(): Promise<bigint> {
    return (await this.heads()).confirmed;
  }

  /** The confirmed head and the node's latest block (above the confirmed head: transfers seen, not yet confirmed). */
  heads(): Promise<{ confirmed: bigint; latest: bigint }> {
    return this.rpc.heads(this.options.chain.finality, this.options.confirmations);
  }

  /**
   * Makes sure the network has a scan position. The first one starts at *_START_BLOCK, or at the confirmed
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

  private async scanPosition(): Promise<ScanPositionRow> {
    await this.prepare();
    const [row] = await this.options.db.query<ScanPositionRow>('SELECT next_block, last_block_hash, halted_at FROM chain_cursors WHERE network = $1', [this.options.network]);
    return row!;
  }

  /** The token's Transfer logs to these addresses, the query split wherever the node refuses its size. */
  async logs(fromBlock: bigint, toBlock: bigint, addresses: string[]): Promise<RpcLog[]> {
    return this.query({ fromBlock, toBlock }, { kind: 'addresses', topics: addresses.map((a) => this.topic(a)) }, async () => []);
  }

  /**
   * The logs a scan asks for: the watched addresses' Transfers in batches of maxAddressesPerQuery, or
   * all the token's Transfers (one query), each split wherever the node refuses its size.
   * `watchedTopics` loads every watched address's topic, only if a single block of all the token's
   * Transfers is still refused (then that block is asked for by address).
   */
  private async query(where: Where, watch: Watch, watchedTopics: () => Promise<string[]>): Promise<RpcLog[]> {
    if (watch.kind === 'none') return [];
    if (watch.kind === 'token') return this.logsSplitting(where, null, watchedTopics);
    const out: RpcLog[] = [];
    const batch = this.options.chain.maxAddressesPerQuery;
    for (let i = 0; i < watch.topics.length; i += batch) out.push(...(await this.logsSplitting(where, watch.topics.slice(i, i + batch), watchedTopics)));
    return out;
  }

  /**
   * One eth_getLogs; a result- or range-limit error splits the blocks (at the provider's suggested
   * range if it gives one, else in halves) down to one block, then (all the token's Transfers of one
   * block refused) asks for that block by the watched addresses, and splits the address batch down to
   * one address. Only a single block for a single address that still fails is an error: nothing is skipped.
   */
  private async logsSplitting(where: Where, topics: string[] | null, watchedTopics: () => Promise<string[]>): Promise<RpcLog[]> {
    if (this.stopped) throw new ScanStoppedError();
    const { tokenContract, maxAddressesPerQuery } = this.options.chain;
    const [fromBlock, toBlock] = 'blockHash' in where ? [where.number, where.number] : [where.fromBlock, where.toBlock];
    try {
      const filter = 'blockHash' in where ? { blockHash: where.blockHash } : { fromBlock, toBlock };
      return await this.rpc.getLogs({ ...filter, address: tokenContract, topics: topics ? [TRANSFER_TOPIC, null, topics] : [TRANSFER_TOPIC] });
    } catch (error) {
      if (!isLogLimitError(error) || (fromBlock === toBlock && topics !== null && topics.length === 1)) throw error;
      this.options.log?.warn({ network: this.options.network, fromBlock: String(fromBlock), toBlock: String(toBlock), addresses: topics ? topics.length : 'all', err: (error as Error).message }, 'eth_getLogs refused for its size: splitting the query');
      if (fromBlock < toBlock) {
        const suggested = suggestedRange(error);
        const middle = suggested && suggested.to >= fromBlock && suggested.to < toBlock ? suggested.to : fromBlock + (toBlock - fromBlock) / 2n;
        return [
          ...(await this.logsSplitting({ fromBlock, toBlock: middle }, topics, watchedTopics)),
          ...(await this.logsSplitting({ fromBlock: middle + 1n, toBlock }, topics, watchedTopics)),
        ];
      }
      if (topics === null) {
        // One block of the token's Transfers is too much for the provider: that block by the watched addresses.
        const all = await watchedTopics();
        const out: RpcLog[] = [];
        for (let i = 0; i < all.length; i += maxAddressesPerQuery) out.push(...(await this.logsSplitting(where, all.slice(i, i + maxAddressesPerQuery), watchedTopics)));
        return out;
      }
      const half = Math.ceil(topics.length / 2);
      return [...(await this.logsSplitting(where, topics.slice(0, half), watchedTopics)), ...(await this.logsSplitting(where, topics.slice(half), watchedTopics))];
    }
  }

  /** The watched address a Transfer's `to` topic names, if it is an address at all (12 zero bytes, then 20). */
  private recipient(topic: string): string | undefined {
    if (!/^0x0{24}[0-9a-f]{40}$/.test(topic)) return undefined;
    let address = this.addresses.get(topic);
    if (address === undefined) {
      if (this.addresses.size >= 1_000_000) this.addresses.clear();
      address = topicAddress(this.options.network, topic);
      this.addresses.set(topic, address);
    }
    return address;
  }

  /** The to-topics of these logs that name a watched order at `at`: one lookup by the recipients found, whatever the number of orders. */
  private async watchedRecipients(logs: readonly RpcLog[], at: Date): Promise<Set<string>> {
    const token = this.options.chain.tokenContract.toLowerCase();
    const byAddress = new Map<string, string>();
    for (const log of logs) {
      if (!isTokenTransfer(log, token)) continue;
      const topic = log.topics[2]!.toLowerCase();
      const address = this.recipient(topic);
      if (address !== undefined) byAddress.set(address, topic);
    }
    const watched = await watchedAmong(this.options.db, this.options.network, [...byAddress.keys()], at, this.options.watchWindowSeconds);
    return new Set([...watched].map((address) => byAddress.get(address)!));
  }

  /** How this scan asks for logs: by address while the watched orders fit in one query, else all the token's Transfers. */
  private async watch(at: Date): Promise<Watch> {
    const { db, network, chain, watchWindowSeconds } = this.options;
    const count = await countWatched(db, network, at, watchWindowSeconds, chain.maxAddressesPerQuery + 1);
    if (count === 0) return { kind: 'none' };
    if (count > chain.maxAddressesPerQuery) return { kind: 'token' };
    const addresses = await watchedAddresses(db, network, at, watchWindowSeconds);
    // Orders created between the count and the list may take it past one query: then all the token's.
    if (addresses.length > chain.maxAddressesPerQuery) return { kind: 'token' };
    return addresses.length === 0 ? { kind: 'none' } : { kind: 'addresses', topics: addresses.map((a) => this.topic(a)) };
  }

  /** Blocks per scan: the configured range, narrower while all the token's Transfers are asked for on a busy token. */
  private rangeLimit(kind: Watch['kind']): number {
    const max = this.options.chain.maxBlockRange;
    return kind === 'token' ? Math.min(max, this.tokenRange ?? FIRST_TOKEN_RANGE) : max;
  }

  /** Learns the token's traffic from a query of all its Transfers over `blocks` blocks. */
  private learnTokenRange(blocks: bigint, logs: number): void {
    const max = this.options.chain.maxBlockRange;
    const current = Math.min(max, this.tokenRange ?? FIRST_TOKEN_RANGE);
    if (logs > TARGET_LOGS_PER_QUERY) this.tokenRange = Math.max(1, Math.floor((Number(blocks) * TARGET_LOGS_PER_QUERY) / logs));
    else if (logs < TARGET_LOGS_PER_QUERY / 2 && blocks >= BigInt(current)) this.tokenRange = Math.min(max, current * 2);
  }

  /**
   * The second read (issue 33): the log backend must have the range's last block, the one the block
   * backend answered. A load-balanced provider may answer eth_getLogs from a backend that lags while
   * eth_getBlockByNumber comes from one that does not: its range answer leaves out the blocks it lacks,
   * with no error. So that block's logs are asked for again by its hash: a backend without the block
   * answers an error ("unknown block"), and any backend's answer must be the range answer's logs of
   * that block, log for log. Else nothing is committed and the round is retried.
   */
  private async checkEndBlock(end: RpcBlock, watch: Watch, logs: readonly RpcLog[], watchedTopics: () => Promise<string[]>): Promise<void> {
    let proof: RpcLog[];
    try {
      proof = await this.query({ blockHash: end.hash, number: end.number }, watch, watchedTopics);
    } catch (error) {
      if (isBlockMissing(error)) throw new NodeBehindError(`the log backend does not have block ${end.number} (${end.hash}): ${(error as Error).message}; a lagging backend, nothing committed, retried next round`);
      throw error;
    }
    const key = (log: RpcLog) => `${log.transactionHash.toLowerCase()}/${BigInt(log.logIndex)}`;
    const inRange = new Set(logs.filter((log) => BigInt(log.blockNumber) === end.number && !log.removed).map(key));
    const inBlock = new Set(proof.filter((log) => !log.removed).map(key));
    if (proof.some((log) => log.blockHash && log.blockHash.toLowerCase() !== end.hash) || inRange.size !== inBlock.size || [...inBlock].some((k) => !inRange.has(k))) {
      throw new NodeBehindError(
        `block ${end.number}: the range's eth_getLogs answered ${inRange.size} log(s) of it, the block by its hash ${inBlock.size}: a backend that lags for eth_getLogs; nothing committed, retried next round`,
      );
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
    const position = await this.scanPosition();
    gauges?.halted.set({ network }, position.halted_at ? 1 : 0);
    if (position.halted_at) {
      // Once per process (e.g. after a restart), not on every poll.
      if (!this.haltReported) this.options.log?.error({ network, haltedAt: position.halted_at }, `crediting on ${network} is HALTED: review, then partner-api chain resume --blockchain ${network.toLowerCase()}`);
      this.haltReported = true;
      return undefined;
    }
    this.haltReported = false;
    const heads = await this.heads();
    const head = heads.confirmed;
    const fromBlock = position.next_block;
    const lag = head >= fromBlock ? head - fromBlock + 1n : 0n;
    gauges?.lag.set({ network }, Number(lag));
    if (fromBlock > head) {
      await this.refreshUnconfirmed(fromBlock, heads);
      return undefined;
    }

    // Continuity: the block last scanned must still be the node's block at that height.
    // It had its confirmations when it was scanned, so a change means a reorg deeper than them.
    const first = await this.requireBlock(fromBlock, 'the first block of the range');
    if (position.last_block_hash) {
      const last = await this.requireBlock(fromBlock - 1n, 'the last scanned block');
      if (last.hash !== position.last_block_hash) {
        await halt(db, network, new Date(now()), `block ${fromBlock - 1n} is now ${last.hash}, but ${position.last_block_hash} was scanned: a reorg deeper than ${this.options.confirmations} confirmations`);
        this.options.log?.error({ network, block: String(fromBlock - 1n), scanned: position.last_block_hash, now: last.hash }, 'deep reorg: crediting on this network is HALTED until an operator resumes it (partner-api chain resume)');
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
    const watch = await this.watch(at);
    const limit = this.rangeLimit(watch.kind);
    const toBlock = rangeEnd(fromBlock, head, limit);
    // Caught up: the same query reads on to the latest block, for the transfers seen but not yet confirmed.
    const seeUnconfirmed = toBlock === head && heads.latest - fromBlock + 1n <= BigInt(limit);
    const queryEnd = seeUnconfirmed && heads.latest > toBlock ? heads.latest : toBlock;
    const single = fromBlock === queryEnd;
    const watchedTopics = async () => (await watchedAddresses(db, network, at, watchWindowSeconds)).map((a) => this.topic(a));
    // A range of one block is asked for by its hash: the answer is that block's, or an error.
    const logs = await this.query(single ? { blockHash: first.hash, number: fromBlock } : { fromBlock, toBlock: queryEnd }, watch, watchedTopics).catch((error: unknown) => {
      if (single && isBlockMissing(error)) throw new NodeBehindError(`the log backend does not have block ${fromBlock} (${first.hash}): ${(error as Error).message}; a lagging backend, nothing committed, retried next round`);
      throw error;
    });
    if (watch.kind === 'token') this.learnTokenRange(queryEnd - fromBlock + 1n, logs.length);
    const requested = watch.kind === 'token' ? await this.watchedRecipients(logs, at) : new Set(watch.kind === 'addresses' ? watch.topics : []);
    const accepted = acceptedTransfers(network, logs, chain.tokenContract, requested);
    // Asked by address, the token's Transfers to other addresses are a node that ignored the filter.
    const ignored = accepted.ignored + (watch.kind === 'token' ? 0 : accepted.unrequested);
    if (ignored > 0) this.options.log?.warn({ network, fromBlock: String(fromBlock), toBlock: String(queryEnd), ignored }, 'logs ignored: not the token contract\'s Transfer to a requested address');

    // The node must have had the whole range: a lagging backend answers eth_getLogs for blocks it
    // does not have with nothing, and the scan position would pass deposits that are then lost.
    const end = await this.requireBlock(toBlock, 'the last block of the range');
    if (single && end.hash !== first.hash) throw new NodeBehindError(`block ${toBlock} changed during the scan: retried next round`);
    if (logs.some((log) => BigInt(log.blockNumber) === toBlock && log.blockHash && log.blockHash.toLowerCase() !== end.hash)) {
      throw new NodeBehindError(`the logs of block ${toBlock} are from another chain than its block: retried next round`);
    }
    if (!single && watch.kind !== 'none') await this.checkEndBlock(end, watch, logs, watchedTopics);
    const transfers = accepted.transfers.filter((t) => t.blockNumber <= toBlock);
    const unconfirmed = accepted.transfers.filter((t) => t.blockNumber > toBlock);
    await this.stampBlockTimes(transfers, [first, end]);

    const credits = await db.transaction(async (tx) => {
      // The scan position's row is locked and checked: a second instance that scanned the range meanwhile wins.
      const [locked] = await tx.query<ScanPositionRow>('SELECT next_block, last_block_hash, halted_at FROM chain_cursors WHERE network = $1 FOR UPDATE', [network]);
      if (locked!.next_block !== fromBlock || locked!.halted_at) return undefined;
      const { credits: credited, refusals } = await creditTransfers(tx, transfers, { now: wallClock, at, watchWindowSeconds });
      for (const { transfer, reason } of refusals) this.options.log?.error({ network, txHash: transfer.txHash, logIndex: transfer.logIndex, to: transfer.to }, `transfer not credited: ${reason}`);
      // What is credited now leaves the unconfirmed ones; caught up, they are replaced by what this scan saw above.
      await replaceUnconfirmed(tx, network, toBlock, seeUnconfirmed ? { transfers: unconfirmed, latest: heads.latest, requiredConfirmations: requiredConfirmations(heads), at: wallClock } : undefined);
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
    return { fromBlock, toBlock, logs: logs.length, ignored, credits, query: watch.kind, ...(seeUnconfirmed ? { unconfirmed: unconfirmed.length } : {}) };
  }

  /**
   * Nothing to confirm this round (the confirmed head has not moved past the scan position): the transfers
   * above it are read again all the same, so that a payment shows on its order within one poll and
   * its confirmations count up (and a reorg that removed it removes it).
   */
  private async refreshUnconfirmed(fromBlock: bigint, heads: { confirmed: bigint; latest: bigint }): Promise<void> {
    const { db, network, chain, now, watchWindowSeconds } = this.options;
    const wallClock = new Date(now());
    let transfers: Transfer[] = [];
    if (heads.latest >= fromBlock) {
      if (heads.latest - fromBlock + 1n > BigInt(chain.maxBlockRange)) return;
      const watch = await this.watch(wallClock);
      const watchedTopics = async () => (await watchedAddresses(db, network, wallClock, watchWindowSeconds)).map((a) => this.topic(a));
      const logs = await this.query({ fromBlock, toBlock: heads.latest }, watch, watchedTopics);
      const requested = watch.kind === 'token' ? await this.watchedRecipients(logs, wallClock) : new Set(watch.kind === 'addresses' ? watch.topics : []);
      transfers = acceptedTransfers(network, logs, chain.tokenContract, requested).transfers;
    }
    await db.transaction(async (tx) => {
      const [locked] = await tx.query<ScanPositionRow>('SELECT next_block, last_block_hash, halted_at FROM chain_cursors WHERE network = $1 FOR UPDATE', [network]);
      if (locked!.next_block !== fromBlock || locked!.halted_at) return;
      await replaceUnconfirmed(tx, network, fromBlock - 1n, { transfers, latest: heads.latest, requiredConfirmations: requiredConfirmations(heads), at: wallClock });
    });
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
