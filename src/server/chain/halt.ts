// A network's crediting halted after a reorg deeper than its confirmations (issue 9): what was
// credited from the replaced blocks may no longer be on the chain, so nothing more is credited on
// that network until an operator has looked and resumes it (`partner-api chain resume`). Its state is
// kept on the network's scan position (a chain_cursors row).
import type { Network } from '../shared/network.js';
import type { Sql } from '../db/database.js';

export interface HaltedNetwork {
  network: Network;
  haltedAt: Date;
  reason: string;
}

/** Halts a network's scanner (it stays halted across restarts and on every instance). */
export async function halt(sql: Sql, network: Network, at: Date, reason: string): Promise<void> {
  await sql.query('UPDATE chain_cursors SET halted_at = $2, halt_reason = $3 WHERE network = $1 AND halted_at IS NULL', [network, at, reason]);
}

export async function haltedNetworks(sql: Sql): Promise<HaltedNetwork[]> {
  const rows = await sql.query<{ network: Network; halted_at: Date; halt_reason: string }>(
    'SELECT network, halted_at, halt_reason FROM chain_cursors WHERE halted_at IS NOT NULL ORDER BY network',
  );
  return rows.map((r) => ({ network: r.network, haltedAt: r.halted_at, reason: r.halt_reason }));
}

/**
 * Whether a network's watch is halted, and since when: while it is, nothing is paid on it and withdrawals
 * on it are refused (what was credited from the replaced blocks may be in its balances).
 */
export async function networkHalt(sql: Sql, network: Network): Promise<HaltedNetwork | undefined> {
  const [row] = await sql.query<{ halted_at: Date; halt_reason: string }>('SELECT halted_at, halt_reason FROM chain_cursors WHERE network = $1 AND halted_at IS NOT NULL', [network]);
  return row ? { network, haltedAt: row.halted_at, reason: row.halt_reason } : undefined;
}

/** A resume that would move the scan position forward past blocks never scanned: their deposits would be lost. */
export class ScanPositionForwardError extends Error {}

/**
 * Resumes a halted network after the operator's review: the scanner accepts the node's current chain
 * at its scan position, and with `fromBlock` scans again from there (e.g. the fork point, so transfers of the
 * new chain are credited; those credited before and only re-mined are not credited again).
 * `fromBlock` only moves the scan position back (or leaves it): past it lie blocks never scanned,
 * and skipping them would lose their deposits, so that is refused (ScanPositionForwardError), halted or not.
 * Undefined when the network has no scan position (it was never scanned).
 */
export async function resumeNetwork(sql: Sql, network: Network, fromBlock?: bigint): Promise<{ wasHalted: boolean; reason: string | null; nextBlock: bigint } | undefined> {
  const [before] = await sql.query<{ halted_at: Date | null; halt_reason: string | null; next_block: bigint }>('SELECT halted_at, halt_reason, next_block FROM chain_cursors WHERE network = $1', [network]);
  if (!before) return undefined;
  // One conditional statement: a scanner committing meanwhile only moves the scan position further forward.
  const [row] = await sql.query<{ next_block: bigint }>(
    `UPDATE chain_cursors SET halted_at = NULL, halt_reason = NULL, last_block_hash = NULL, next_block = COALESCE($2, next_block)
      WHERE network = $1 AND ($2::bigint IS NULL OR $2::bigint <= next_block) RETURNING next_block`,
    [network, fromBlock ?? null],
  );
  if (!row) {
    throw new ScanPositionForwardError(
      `--from-block ${fromBlock} is past ${network}'s scan position (next block ${before.next_block}): the blocks between were never scanned and their deposits would be lost; ` +
        'only a block at or before the scan position can be given',
    );
  }
  return { wasHalted: before.halted_at !== null, reason: before.halt_reason, nextBlock: row.next_block };
}
