// The operator's chain commands behind the CLI: `chain resume` after a halt, `deposits rescan` of one order.
import { isUuid } from '../shared/uuid.js';
import type { Platform } from '../platform.js';
import { ScanPositionForwardError, resumeNetwork } from '../chain/halt.js';
import { rescanOrder } from '../chain/rescan.js';
import { RefusedError, UsageError } from './errors.js';
import { networkFlag, type Flags } from './flags.js';
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
  const resumed = await resumeNetwork(platform.db, network, fromBlock).catch((error: unknown) => {
    throw error instanceof ScanPositionForwardError ? new RefusedError(error.message) : error;
  });
  if (!resumed) throw new RefusedError(`${network} has never been scanned: nothing to resume`);
  const value = { network, wasHalted: resumed.wasHalted, haltReason: resumed.reason, nextBlock: String(resumed.nextBlock) };
  const text = `${network}: ${resumed.wasHalted ? `resumed (it was halted: ${resumed.reason})` : 'was not halted'}; the scan continues at block ${resumed.nextBlock}`;
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
