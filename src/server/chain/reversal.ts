// Resuming a network after a reorg deeper than its confirmations (issue 53): the deposits credited from
// blocks the new chain replaced, and that it does not hold again, are reversed in the books when the
// operator resumes it (`partner-api chain resume`), in the transaction that resumes it, each once.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { owedBalances, type Owed } from '../ledger/ledger.js';
import { creditedBlocks, depositsOfBlocks, reverseDeposits, type CreditedBlock, type CreditedDeposit, type Reversal } from '../orders/deposits.js';
import type { Network } from '../shared/network.js';
import type { Clock } from '../shared/time.js';
import { networkHalt, resumeNetwork } from './halt.js';
import { ChainScanner, rangeEnd } from './scanner.js';
import { acceptedTransfers } from './transfer-logs.js';
import { failWhileOwed } from '../withdrawals/settlement.js';

/** A halted network that cannot be searched for its removed deposits (no RPC URL): nothing is resumed. */
export class ResumeError extends Error {}

/** Credited blocks read at a time, newest first, in the walk down to the chain that did not change. */
const WALK_BATCH = 100;
/** Above every block number. */
const TOP = 2n ** 62n;

export interface Resumed {
  wasHalted: boolean;
  reason: string | null;
  nextBlock: bigint;
  /** Deposits of replaced blocks that the new chain holds again (kept as they are). */
  foundAgain: number;
  reversals: Reversal[];
  /** Withdrawals on the network not sent yet that were failed to pay what reversals took beyond the available balance. */
  failedWithdrawals: { uuid: string; merchantId: string; amount: bigint }[];
  /** Merchants whose balance on the network still does not cover the reversals: what they owe now. */
  owed: Owed[];
}

/** The failure reason of a withdrawal failed to pay back a reversal: the merchant reads it. */
const OWED_REASON = 'A deposit this withdrawal drew on was reversed: a chain reorganisation removed it from the chain.';

/** The identity of a transfer to an order's address, as a deposit of a replaced block is looked for on the new chain. */
const identity = (txHash: string, address: string, ordinal: number, amount: bigint) => `${txHash}/${address}/${ordinal}/${amount}`;

/**
 * The standing deposits credited from blocks the node no longer has, and the block after the newest
 * credited block still there (undefined: none is). The credited blocks are walked newest first and each
 * compared with the node's block at its height; the first one still there ends the walk, since a block's
 * hash seals every block below it.
 */
async function replacedDeposits(scanner: ChainScanner, db: Database, network: Network): Promise<{ deposits: CreditedDeposit[]; above: bigint | undefined }> {
  const replaced: CreditedBlock[] = [];
  const found = async (above: bigint | undefined) => ({ deposits: await depositsOfBlocks(db, network, replaced.map((b) => b.hash)), above });
  let after: CreditedBlock | undefined;
  for (;;) {
    const blocks = await creditedBlocks(db, network, after, WALK_BATCH);
    for (const block of blocks) {
      if ((await scanner.requireBlock(block.number, 'a block deposits were credited from')).hash === block.hash) return found(block.number + 1n);
      replaced.push(block);
    }
    if (blocks.length < WALK_BATCH) return found(undefined);
    after = blocks.at(-1);
  }
}

/**
 * Which of these deposits the node's chain holds, from `start` up to its confirmed head: the same
 * transfer (transaction, address, n-th transfer to it, amount), re-mined anywhere after the fork,
 * earlier than its old block too.
 */
async function foundAgain(scanner: ChainScanner, tokenContract: string, maxBlockRange: number, deposits: readonly CreditedDeposit[], start: bigint): Promise<Set<bigint>> {
  const found = new Set<bigint>();
  if (deposits.length === 0) return found;
  const addresses = [...new Set(deposits.map((d) => d.address))];
  const topics = new Set(addresses.map((a) => scanner.topic(a)));
  const head = await scanner.confirmedHead();
  const seen = new Set<string>();
  for (let from = start; from <= head; from += BigInt(maxBlockRange)) {
    const to = rangeEnd(from, head, maxBlockRange);
    const logs = await scanner.logs(from, to, addresses);
    await scanner.requireBlock(to, 'the last block searched'); // a lagging node: stop, nothing resumed
    for (const t of acceptedTransfers(scanner.network, logs, tokenContract, topics).transfers) seen.add(identity(t.txHash, t.to, t.ordinal ?? 0, t.amount));
  }
  for (const d of deposits) if (seen.has(identity(d.txHash, d.address, d.ordinal, d.amount))) found.add(d.id);
  return found;
}

/**
 * Where the search for the replaced deposits starts: the fork is above the newest credited block still
 * on the chain and at or below the operator's `--from-block` (the first replaced block); never above the
 * lowest replaced deposit's block.
 */
function searchStart(deposits: readonly CreditedDeposit[], above: bigint | undefined, fromBlock: bigint | undefined): bigint {
  const lowest = deposits.reduce((low, d) => (d.blockNumber < low ? d.blockNumber : low), TOP);
  const start = fromBlock ?? above ?? lowest;
  return start < lowest ? start : lowest;
}

/**
 * Resumes a network (halt.ts's resumeNetwork, `fromBlock` as there). A halted one is first searched: the
 * deposits of replaced blocks that its confirmed chain does not hold again are reversed in the same
 * transaction as the resume; where a reversal takes more than the available balance, the merchant's
 * withdrawals on the network not sent yet are failed, newest first, while it owes (docs/decisions.md). Found later on the chain (re-mined above the confirmed head), such a
 * transfer is credited anew by the scan. Undefined when the network was never scanned.
 */
export async function resumeAfterReorg(deps: { db: Database; config: Config; now: Clock }, network: Network, fromBlock?: bigint): Promise<Resumed | undefined> {
  const { db, config, now } = deps;
  let removed: bigint[] = [];
  let kept = 0;
  if (await networkHalt(db, network)) {
    const { chain, confirmations } = config.networks[network];
    if (!chain) throw new ResumeError(`no ${network.toUpperCase()}_RPC_URL: the deposits of the replaced blocks cannot be looked for on the chain; nothing was resumed`);
    const scanner = new ChainScanner({ network, chain, confirmations, watchWindowSeconds: config.watchWindowSeconds, db, now });
    const { deposits, above } = await replacedDeposits(scanner, db, network);
    const found = await foundAgain(scanner, chain.tokenContract, chain.maxBlockRange, deposits, searchStart(deposits, above, fromBlock));
    removed = deposits.filter((d) => !found.has(d.id)).map((d) => d.id);
    kept = found.size;
  }
  return db.transaction(async (tx) => {
    const resumed = await resumeNetwork(tx, network, fromBlock);
    if (!resumed) return undefined;
    const reversals = await reverseDeposits(tx, network, removed, new Date(now()));
    const failedWithdrawals: Resumed['failedWithdrawals'] = [];
    for (const { merchantId } of reversals.length > 0 ? await owedBalances(tx, network) : []) {
      for (const w of await failWhileOwed(tx, merchantId, network, OWED_REASON)) failedWithdrawals.push({ uuid: w.uuid, merchantId, amount: w.amount_units + w.fee_units });
    }
    const owed = reversals.length > 0 ? await owedBalances(tx, network) : [];
    return { ...resumed, foundAgain: kept, reversals, failedWithdrawals, owed };
  });
}
