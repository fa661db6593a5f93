// Deposit addresses are made ahead of the creates that take them, into one pool in the database that
// every process shares (table address_pool). The address thread derives them and draws their QR
// codes; a create then costs one statement, its insert, which takes the lowest ready address of its
// network and removes its row (orders.ts).
//
// No gap beyond a wallet's gap limit (20), however many processes and whatever crashes: no process
// holds indexes of its own. A fill advances the network's counter and adds the new rows in one
// statement, so an index is either in the pool or was never drawn; an insert that rolls back (a
// crash, a replay that inserted nothing) leaves its row in the pool, and the next create takes it
// first. The used indexes therefore run without holes but for the rows of creates in flight at one
// moment that did not insert.
import { createHash } from 'node:crypto';
import type { Network } from '../shared/network.js';
import { AddressThread } from './thread.js';
import type { Database, Sql } from '../db/database.js';

/**
 * A fill tops the pool up to this many ready addresses, plus the creates waiting and what was taken since
 * the last fill. Enough to outlast a fill under a burst: with 128, 0.6 % of the creates of a
 * `--workers 2` POST run still found the pool empty and waited (the workers' fills take turns).
 */
export const POOL_TARGET = 256;
/** A process asks for a fill after its creates took this many addresses of a network... */
const TAKEN_BEFORE_FILL = 16;
/** ...or when a create of its own leaves fewer ready than this, whichever processes took them. */
const LOW_WATER = POOL_TARGET / 2;
/** Addresses per message to the address thread: a large fill is several messages, none holding the thread long. */
const CHUNK = 8;
/** Fills that lose the race for the counter to another process's fill, before this one gives up. */
const FILL_ATTEMPTS = 5;
/**
 * On PostgreSQL the fills of a network run one at a time across the processes (an advisory lock that
 * the fill's transaction holds), so that none derives addresses for indexes another is adding: with
 * `serve --workers 2` under a burst of creates, the fills that lost the race had thrown away 57 % of the
 * addresses the address threads derived. PGlite is one process's, whose fills already run one at a time.
 */
const FILL_LOCKS: Record<Network, number> = { Tron: 7_412_101, Ethereum: 7_412_102 };

/** What a fill starts from: the counter, the ready rows of this wallet, and the rows still to derive. */
const POOL_STATE_SQL = `
  SELECT c.next_index,
         (SELECT count(*)::int FROM address_pool p WHERE p.network = $1 AND p.wallet = $2) AS ready,
         ARRAY(SELECT p.address_index FROM address_pool p
                WHERE p.network = $1 AND p.wallet IS DISTINCT FROM $2 ORDER BY p.address_index LIMIT $3) AS to_derive
    FROM address_counters c WHERE c.network = $1`;

/**
 * One fill: the rows still to derive get their addresses, and the new indexes ($7..) are added only if
 * the counter still stands at $6 (else another process filled meanwhile: nothing new is added).
 */
const FILL_SQL = `
  WITH derived AS (
    UPDATE address_pool p SET wallet = $2, address = v.address, address_qr = v.qr
      FROM unnest($3::bigint[], $4::text[], $5::text[]) AS v(address_index, address, qr)
     WHERE p.network = $1 AND p.address_index = v.address_index AND p.wallet IS DISTINCT FROM $2),
  advanced AS (
    UPDATE address_counters SET next_index = $6 + cardinality($7::bigint[])
     WHERE network = $1 AND next_index = $6 AND cardinality($7::bigint[]) > 0
    RETURNING next_index),
  added AS (
    INSERT INTO address_pool (network, address_index, wallet, address, address_qr)
    SELECT $1, v.address_index, $2, v.address, v.qr
      FROM unnest($7::bigint[], $8::text[], $9::text[]) AS v(address_index, address, qr)
     WHERE EXISTS (SELECT 1 FROM advanced))
  SELECT count(*)::int AS advanced FROM advanced`;

/** The fingerprint of an xpub on the rows derived from it: a process uses only its own wallet's addresses. */
export function walletFingerprint(xpub: string): string {
  return createHash('sha256').update(xpub).digest('hex').slice(0, 32);
}

interface NetworkFill {
  /** The fill under way, if any. */
  running: Promise<void> | undefined;
  /** The fill that starts when the one under way ends: what comes meanwhile waits on it. */
  queued: Promise<void> | undefined;
  /** Addresses this process's creates took since its last fill. */
  takenSince: number;
  /** Addresses wanted by creates that found none, beyond the target. */
  wanted: number;
}

export class AddressPool {
  private readonly thread: AddressThread;
  readonly wallets: Record<Network, string>;
  private closed = false;
  private readonly fills: Record<Network, NetworkFill> = {
    Tron: { running: undefined, queued: undefined, takenSince: 0, wanted: 0 },
    Ethereum: { running: undefined, queued: undefined, takenSince: 0, wanted: 0 },
  };

  constructor(
    private readonly db: Database,
    xpubs: Record<Network, string>,
  ) {
    this.thread = new AddressThread(xpubs);
    this.wallets = { Tron: walletFingerprint(xpubs.Tron), Ethereum: walletFingerprint(xpubs.Ethereum) };
  }

  /**
   * Creates took `count` addresses of the network and left about `left` ready: a fill starts in the
   * background after every few, or at once when the shared pool runs low, so that a process whose
   * neighbours took most of it does not wait for the next create to find it empty.
   */
  taken(network: Network, count: number, left: number): void {
    const fill = this.fills[network];
    fill.takenSince += count;
    // A failed background fill is not an error of any create: the next create that finds the pool
    // empty asks for a fill itself and receives its error.
    if (fill.takenSince >= TAKEN_BEFORE_FILL || left < LOW_WATER) this.fill(network).catch(() => {});
  }

  /**
   * A fill for `missing` creates that found no ready address: it resolves once the pool has been
   * filled (by this process or, when it lost the race, another), and fails with the cause when the
   * database or the thread failed. Calls that come while a fill runs share the one that follows it,
   * which counts what they want.
   */
  fill(network: Network, missing = 0): Promise<void> {
    const fill = this.fills[network];
    fill.wanted += missing;
    const start = async () => {
      fill.queued = undefined;
      if (this.closed) throw new Error('the address pool is closed');
      // The target grows with the load: what creates took since the last fill is taken again while this
      // one draws, so a busy process keeps that much more ready instead of running dry.
      const target = POOL_TARGET + fill.wanted + fill.takenSince;
      const createsWait = fill.wanted > 0;
      fill.wanted = 0;
      fill.takenSince = 0;
      const running = this.fillOnce(network, target, createsWait);
      fill.running = running;
      try {
        await running;
      } finally {
        if (fill.running === running) fill.running = undefined;
      }
    };
    fill.queued ??= (fill.running ?? Promise.resolve()).catch(() => {}).then(start);
    return fill.queued;
  }

  /** Stops the address thread once it has answered the fill under way. Nothing is held: nothing to give back. */
  async close(): Promise<void> {
    this.closed = true;
    await this.thread.close();
  }

  /**
   * A fill that creates wait for waits for another process's fill to end and then tops up what is still
   * missing; a fill ahead of need is left to the process already filling, without holding a connection.
   */
  private async fillOnce(network: Network, target: number, createsWait: boolean): Promise<void> {
    if (this.db.kind === 'pglite') return this.fillAttempts(this.db, network, target);
    await this.db.transaction(async (tx) => {
      if (createsWait) await tx.query('SELECT pg_advisory_xact_lock($1)', [FILL_LOCKS[network]]);
      else {
        const [{ locked }] = (await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [FILL_LOCKS[network]])) as [{ locked: boolean }];
        if (!locked) return;
      }
      await this.fillAttempts(tx, network, target);
    });
  }

  /** Fills from the pool's state as it is now; again if another process's fill (one without the lock) won the counter. */
  private async fillAttempts(db: Sql, network: Network, target: number): Promise<void> {
    const wallet = this.wallets[network];
    for (let attempt = 1; attempt <= FILL_ATTEMPTS; attempt++) {
      const [state] = await db.query<{ next_index: bigint; ready: number; to_derive: bigint[] }>(POOL_STATE_SQL, [network, wallet, target]);
      const toDerive = state!.to_derive.map(Number);
      const nextIndex = Number(state!.next_index);
      const fresh = Array.from({ length: Math.max(0, target - state!.ready - toDerive.length) }, (_, i) => nextIndex + i);
      if (toDerive.length === 0 && fresh.length === 0) return;
      const [derived, added] = await Promise.all([this.derive(network, toDerive), this.derive(network, fresh)]);
      if (this.closed) throw new Error('the address pool is closed');
      const [result] = await db.query<{ advanced: number }>(FILL_SQL, [network, wallet, ...derived, nextIndex, ...added]);
      if (fresh.length === 0 || result!.advanced === 1) return;
    }
    // Every attempt lost to another process's fill: the pool was filled, by others.
  }

  /** The indexes' addresses and QR codes, as three columns for the fill's unnest. */
  private async derive(network: Network, indexes: number[]): Promise<[string[], string[], string[]]> {
    const chunks = Array.from({ length: Math.ceil(indexes.length / CHUNK) }, (_, i) => indexes.slice(i * CHUNK, (i + 1) * CHUNK));
    const issued = (await Promise.all(chunks.map((chunk) => this.thread.issue(chunk.map((index) => [network, index] as const))))).flat();
    const addresses: string[] = [];
    const qrs: string[] = [];
    for (const one of issued) {
      if (one instanceof Error) throw one;
      addresses.push(one.address);
      qrs.push(one.qr);
    }
    return [indexes.map(String), addresses, qrs];
  }
}
