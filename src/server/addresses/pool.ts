// Deposit addresses are made ahead of the creates that take them. Each network's indexes are reserved
// a block at a time, and the address thread derives their addresses and
// draws their QR codes while the request thread serves the creates from what is ready. A create then
// costs one statement (its insert), not a lookup and an insert, and waits for the thread only when the
// pool has run dry (at the first create, or under more load than the thread keeps up with).
//
// No gap beyond a wallet's gap limit (20): every reserved index is a row of address_reservations with
// a deadline from the database's clock, removed by the insert of the order that uses it (orders.ts, in
// the same statement). A reservation the process never used (it stopped, crashed or froze, or let the
// address grow stale) is reserved again after its deadline, lowest index first, before any new index is
// drawn from the counter: lost indexes are handed out again instead of leaving gaps. A process uses an
// address only until RESERVATION_SECONDS − SAFETY_SECONDS after it reserved it, so it is never used by
// two (and the index's uniqueness in deposit_orders would refuse the second anyway: orders.ts then takes
// another). A clean stop gives its reservations back at once; on PGlite, whose one process owns the
// database, every reservation of another holder is lost and reserved again at once.
import { randomUUID } from 'node:crypto';
import type { Network } from './derivation.js';
import { AddressThread, type IssuedAddress } from './thread.js';
import type { Sql } from '../db/database.js';

export interface PooledAddress extends IssuedAddress {
  network: Network;
  index: number;
  /** performance.now() after which the reservation may have been handed to another process. */
  usableUntil: number;
}

/** How long a reservation lasts (by the database's clock) before another process may take it over. */
export const RESERVATION_SECONDS = 20;
/** Room for the insert that uses an address: a process stops using one this long before its deadline. */
const SAFETY_SECONDS = 5;

/** The pool is topped up when it holds BLOCK addresses or fewer, to 2 × BLOCK beyond the creates waiting. */
const BLOCK = 8;
/** Addresses per message to the address thread: the first creates go on while it draws the next. */
const CHUNK = 4;

/**
 * Reserves $3 indexes of network $1 for holder $2: the lost reservations first (past their deadline,
 * or on PGlite ($5) any other holder's), lowest first, then new indexes from the network's counter.
 * The counter is a row, not a sequence: a sequence jumps up to 32 values ahead when the database
 * itself crashes (PGlite dies with its process), and those would be gaps no reservation records.
 */
const RESERVE_SQL = `
  WITH lost AS (
    SELECT address_index FROM address_reservations
     WHERE network = $1 AND (expires_at <= now() OR ($5::boolean AND holder <> $2))
     ORDER BY address_index LIMIT $3 FOR UPDATE SKIP LOCKED),
  reclaimed AS (
    UPDATE address_reservations r SET holder = $2, expires_at = now() + make_interval(secs => $4)
      FROM lost WHERE r.network = $1 AND r.address_index = lost.address_index
    RETURNING r.address_index),
  counted AS (
    UPDATE address_counters SET next_index = next_index + ($3::int - (SELECT count(*)::int FROM reclaimed))
     WHERE network = $1 RETURNING next_index),
  fresh AS (
    INSERT INTO address_reservations (network, address_index, holder, expires_at)
    SELECT $1, counted.next_index - n, $2, now() + make_interval(secs => $4)
      FROM counted, generate_series(1, $3::int - (SELECT count(*)::int FROM reclaimed)) AS n
    RETURNING address_index)
  SELECT address_index AS index FROM reclaimed UNION ALL SELECT address_index FROM fresh ORDER BY index`;

interface Waiter {
  resolve: (address: PooledAddress) => void;
  reject: (error: Error) => void;
}

interface NetworkPool {
  ready: PooledAddress[];
  waiters: Waiter[];
  filling: boolean;
}

export class AddressPool {
  private readonly thread: AddressThread;
  /** This pool's name on its reservations. */
  private readonly holder = randomUUID();
  private closed = false;
  private readonly pools: Record<Network, NetworkPool> = {
    Tron: { ready: [], waiters: [], filling: false },
    Ethereum: { ready: [], waiters: [], filling: false },
  };

  constructor(
    private readonly db: Sql,
    xpubs: Record<Network, string>,
    /** PGlite: this process alone uses the database, so reservations of other holders are lost ones. */
    private readonly soleUser = false,
  ) {
    this.thread = new AddressThread(xpubs);
  }

  /** The next address of the network: from the pool at once when it has one. */
  take(network: Network): Promise<PooledAddress> {
    const pool = this.pools[network];
    // Stale addresses are left behind: their reservations run out and are handed out again.
    while (pool.ready.length > 0 && pool.ready[0]!.usableUntil <= performance.now()) pool.ready.shift();
    const address = pool.ready.shift();
    const taken = address ? Promise.resolve(address) : new Promise<PooledAddress>((resolve, reject) => pool.waiters.push({ resolve, reject }));
    this.topUp(network);
    return taken;
  }

  /** An address whose insert did not use it (a replay): the next create takes it, so no index is lost. */
  giveBack(address: PooledAddress): void {
    if (address.usableUntil > performance.now()) this.deliver(address, 'first');
  }

  /**
   * Stops the address thread once it has answered the fill under way; no fill starts after. The
   * reservations not used are given back at once: the next process hands them out first.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.thread.close();
    await this.db.query('UPDATE address_reservations SET expires_at = now() WHERE holder = $1', [this.holder]).catch(() => {});
  }

  private deliver(address: PooledAddress, place: 'first' | 'last' = 'last'): void {
    const pool = this.pools[address.network];
    const waiter = pool.waiters.shift();
    if (waiter) waiter.resolve(address);
    else if (place === 'first') pool.ready.unshift(address);
    else pool.ready.push(address);
  }

  private topUp(network: Network): void {
    const pool = this.pools[network];
    if (pool.filling || pool.ready.length > BLOCK) return;
    pool.filling = true;
    // After this turn of the event loop, so that one reservation covers every create of the turn.
    setImmediate(() => void this.fill(network));
  }

  private async fill(network: Network): Promise<void> {
    const pool = this.pools[network];
    let filled = false;
    try {
      if (this.closed) throw new Error('the address pool is closed');
      const count = 2 * BLOCK - pool.ready.length + pool.waiters.length;
      // Before the query is sent: the database's deadline is at least this late.
      const usableUntil = performance.now() + (RESERVATION_SECONDS - SAFETY_SECONDS) * 1000;
      const rows = await this.db.query<{ index: bigint }>(RESERVE_SQL, [network, this.holder, count, RESERVATION_SECONDS, this.soleUser]);
      // Closed while the indexes were reserved: no thread may start after close().
      if (this.closed) throw new Error('the address pool is closed');
      const indexes = rows.map((row) => Number(row.index));
      const chunks = Array.from({ length: Math.ceil(indexes.length / CHUNK) }, (_, i) => indexes.slice(i * CHUNK, (i + 1) * CHUNK));
      await Promise.all(
        chunks.map(async (chunk) => {
          const issued = await this.thread.issue(chunk.map((index) => [network, index] as const));
          issued.forEach((one, i) => {
            if (one instanceof Error) throw one;
            this.deliver({ network, index: chunk[i]!, usableUntil, ...one });
          });
        }),
      );
      filled = true;
    } catch (error) {
      // The creates waiting fail with the cause (the database, the thread, an index out of range), and
      // the next create tries again: no retry loop against a database that is down.
      for (const waiter of pool.waiters.splice(0)) waiter.reject(error as Error);
    } finally {
      pool.filling = false;
    }
    // Creates that came while this block was drawn may want more.
    if (filled) this.topUp(network);
  }
}
