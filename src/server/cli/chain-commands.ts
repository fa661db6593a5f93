// The operator's chain commands behind the CLI: `chain resume` after a halt (reversing the deposits the reorg removed), `deposits rescan` of one order.
import { isUuid } from '../shared/uuid.js';
import type { Platform } from '../platform.js';
import { ScanPositionForwardError } from '../chain/halt.js';
import { NodeBehindError } from '../chain/scanner.js';
import { ResumeError, resumeAfterReorg } from '../chain/reversal.js';
import { formatDecimalUnits } from '../shared/money.js';
import { rescanOrder } from '../chain/rescan.js';
import { RefusedError, UsageError } from './errors.js';
import { networkFlag, type Flags } from './flags.js';
import { JSON_FLAG, blockchainFlag, printedResult, type Command } from './command.js';
import { parseExactInteger } from '../shared/exact-integer.js';
type Output = { value: unknown; text: string };

function fromBlockFlag(flags: Flags): bigint | undefined {
  const text = flags['from-block'];
  if (text === undefined) return undefined;
  const block = typeof text === 'string' ? parseExactInteger(text) : undefined;
  if (block === undefined) throw new UsageError('--from-block must be a block number');
  return block;
}

export async function chainResumeCommand(platform: Platform, flags: Flags): Promise<Output> {
  const network = networkFlag(flags, 'blockchain');
  const fromBlock = fromBlockFlag(flags);
  const resumed = await resumeAfterReorg({ db: platform.db, config: platform.config, now: Date.now }, network, fromBlock).catch((error: unknown) => {
    if (error instanceof ScanPositionForwardError || error instanceof ResumeError) throw new RefusedError(error.message);
    if (error instanceof NodeBehindError) throw new RefusedError(`${error.message}; nothing was resumed, run the command again`);
    throw error;
  });
  if (!resumed) throw new RefusedError(`${network} has never been scanned: nothing to resume`);
  const reversals = resumed.reversals.map((r) => ({ depositId: String(r.depositId), orderUuid: r.orderUuid, amount: String(r.amount), receivedAmount: String(r.receivedAmount) }));
  const failed = resumed.failedWithdrawals.map((w) => ({ uuid: w.uuid, merchantId: w.merchantId, released: String(w.amount) }));
  const owed = resumed.owed.map((o) => ({ merchantId: o.merchantId, owed: String(o.owed) }));
  const value = { network, wasHalted: resumed.wasHalted, haltReason: resumed.reason, nextBlock: String(resumed.nextBlock), foundAgain: resumed.foundAgain, reversed: reversals, failedWithdrawals: failed, owed };
  const text =
    `${network}: ${resumed.wasHalted ? `resumed (it was halted: ${resumed.reason})` : 'was not halted'}; the scan continues at block ${resumed.nextBlock}` +
    (resumed.wasHalted ? `\n  deposits of replaced blocks: ${resumed.foundAgain} found again on the chain, ${reversals.length} reversed` : '') +
    resumed.reversals.map((r) => `\n  reversed deposit ${r.depositId}: ${formatDecimalUnits(r.amount)} USDT of order ${r.orderUuid} (receivedAmount now ${r.receivedAmount})`).join('') +
    resumed.failedWithdrawals.map((w) => `\n  failed withdrawal ${w.uuid} of merchant ${w.merchantId}: its ${formatDecimalUnits(w.amount)} USDT released to pay a reversal`).join('') +
    resumed.owed.map((o) => `\n  merchant ${o.merchantId} owes ${formatDecimalUnits(o.owed)} USDT on ${network}: its next deposits pay it first`).join('');
  return { value, text };
}

export async function depositsRescanCommand(platform: Platform, flags: Flags): Promise<Output> {
  const order = flags.order;
  if (typeof order !== 'string' || !isUuid(order)) throw new UsageError('--order must be an order uuid');
  const fromBlock = fromBlockFlag(flags);
  const result = await rescanOrder({ db: platform.db, config: platform.config, now: Date.now }, order, fromBlock);
  if (!result) throw new RefusedError(`no order ${order}`);
  const credits = result.credits.map((c) => ({ amount: String(c.amount), status: c.status, receivedAmount: String(c.receivedAmount) }));
  const value = { order, network: result.network, address: result.address, fromBlock: String(result.fromBlock), toBlock: String(result.toBlock), transfersFound: result.found, credited: credits };
  const text =
    `order ${order}: blocks ${result.fromBlock}–${result.toBlock} of ${result.network} scanned for ${result.address}; ` +
    `${result.found} transfer(s) found, ${credits.length} newly credited` +
    credits.map((c) => `\n  credited ${c.amount} → receivedAmount ${c.receivedAmount} (${c.status})`).join('');
  return { value, text };
}

export const CHAIN_COMMANDS: Command[] = [
  {
    words: ['deposits', 'rescan'],
    summary: "scans the chain for an order's address and credits what was missed, e.g. a payment after the watch window",
    flags: {
      order: { value: 'UUID', description: "the order's uuid", required: true },
      'from-block': { value: 'N', description: "the first block to scan (default: about the order's creation)" },
      json: JSON_FLAG,
    },
    example: 'partner-api deposits rescan --order 0b9a… --from-block 71000000',
    runByRunningPlatform: true,
    run: printedResult(depositsRescanCommand),
  },
  {
    words: ['chain', 'resume'],
    summary: 'resumes crediting and payouts on a network halted by a reorg deeper than its confirmations, after review; reverses the deposits the reorg removed',
    flags: {
      blockchain: { ...blockchainFlag('the halted network'), required: true },
      'from-block': { value: 'N', description: 'rescan from this block (the first block the reorg replaced)' },
      json: JSON_FLAG,
    },
    example: 'partner-api chain resume --blockchain Ethereum --from-block 21000000',
    runByRunningPlatform: true,
    run: printedResult(chainResumeCommand),
  },
];
