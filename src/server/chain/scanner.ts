// The chain scanner (DESIGN §6): ERC-20 Transfer logs to watched deposit addresses, read over
// JSON-RPC up to the confirmed head, credited in the same transaction that advances the network's
// cursor. One implementation for Ethereum and Tron; only the address forms differ.
import { toChecksumAddress, toTronAddress, tronAddressToId, type Network } from '../addresses.js';
import type { ChainConfig } from '../config.js';
import type { Database } from '../db/database.js';
import { creditTransfers, watchedAddresses, type Credit, type Transfer } from '../deposits.js';
import type { Clock } from '../time.js';
import { runRepeatedly } from '../loop.js';
import { JsonRpcClient, type RpcLog } from './rpc.js';

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
    to: topicAddress(network, log.topics[2]!),
    amount: BigInt(log.data === '0x' ? 0 : log.data),
    source: 'chain',
  };
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
  credits: Credit[];
}

export interface ScannerOptions {
  network: Network;
  chain: ChainConfig;
  confirmations: number;
  watchWindowSeconds: number;
  db: Database;
  now: Clock;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class ChainScanner {
  private readonly rpc: JsonRpcClient;
  /** Address → topic: decoding base58 for every watched address on every poll is the scan's main cost on Tron. */
  private readonly topics = new Map<string, string>();
  private loop: { stop(): Promise<void> } | undefined;
  private stopped = false;

  constructor(private readonly options: ScannerOptions) {
    this.rpc = new JsonRpcClient(options.chain.rpcUrl);
  }

  /** The newest block whose transfers count: enough confirmations, or the node's finalized block. */
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

  private async cursor(): Promise<bigint> {
    await this.prepare();
    const [row] = await this.options.db.query<{ next_block: bigint }>('SELECT next_block FROM chain_cursors WHERE network = $1', [this.options.network]);
    return row!.next_block;
  }

  private async logs(fromBlock: bigint, toBlock: bigint, addresses: string[]): Promise<RpcLog[]> {
    const { chain } = this.options;
    const out: RpcLog[] = [];
    for (let i = 0; i < addresses.length; i += chain.maxAddressesPerQuery) {
      if (this.stopped) throw new ScanStoppedError();
      const topics = addresses.slice(i, i + chain.maxAddressesPerQuery).map((a) => this.topic(a));
      out.push(...(await this.rpc.getLogs({ fromBlock, toBlock, address: chain.tokenContract, topics: [TRANSFER_TOPIC, null, topics] })));
    }
    return out;
  }

  private topic(address: string): string {
    let topic = this.topics.get(address);
    if (topic === undefined) {
      if (this.topics.size >= 1_000_000) this.topics.clear();
      topic = addressTopic(this.options.network, address);
      this.topics.set(address, topic);
    }
    return topic;
  }

  /** Scans the next range of confirmed blocks; undefined when there is none yet. */
  async scanOnce(): Promise<ScanResult | undefined> {
    const { db, network, chain, now, watchWindowSeconds } = this.options;
    const head = await this.confirmedHead();
    const fromBlock = await this.cursor();
    if (fromBlock > head) return undefined;
    const toBlock = head < fromBlock + BigInt(chain.maxBlockRange) - 1n ? head : fromBlock + BigInt(chain.maxBlockRange) - 1n;
    const wallClock = new Date(now());
    // The watch window is judged at the range's first block: a scanner catching up after an outage
    // still credits the late payments that were inside their window when they were made.
    const at = new Date((await this.rpc.blockTimestamp(fromBlock)) * 1000);
    const addresses = await watchedAddresses(db, network, at, watchWindowSeconds);
    const logs = addresses.length > 0 ? await this.logs(fromBlock, toBlock, addresses) : [];
    const transfers = logs
      .map((log) => logToTransfer(network, log))
      .filter((t): t is Transfer => t !== undefined)
      .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
    const credits = await db.transaction(async (tx) => {
      // The cursor row is locked and checked: a second instance that scanned the range meanwhile wins.
      const [cursor] = await tx.query<{ next_block: bigint }>('SELECT next_block FROM chain_cursors WHERE network = $1 FOR UPDATE', [network]);
      if (cursor!.next_block !== fromBlock) return undefined;
      const { credits: credited, refusals } = await creditTransfers(tx, transfers, { now: wallClock, at, watchWindowSeconds });
      for (const { transfer, reason } of refusals) this.options.log?.error({ network, txHash: transfer.txHash, logIndex: transfer.logIndex, to: transfer.to }, `transfer not credited: ${reason}`);
      await tx.query('UPDATE chain_cursors SET next_block = $2, updated_at = $3 WHERE network = $1', [network, toBlock + 1n, wallClock]);
      return credited;
    });
    return credits && { fromBlock, toBlock, logs: logs.length, credits };
  }

  start(): void {
    this.stopped = false;
    this.loop = runRepeatedly(
      async () => (await this.scanOnce()) !== undefined, // catching up: scan again at once
      this.options.chain.pollIntervalSeconds * 1000,
      (error) => this.options.log?.warn({ err: error, network: this.options.network }, 'chain scan failed; retrying'),
    );
  }

  /** Stops after the query under way: a scan being stopped writes nothing. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop?.stop();
  }
}
