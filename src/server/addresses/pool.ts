// Deposit addresses are made ahead of the creates that take them. Each network's indexes are reserved
// from its database sequence a block at a time, and the address thread derives their addresses and
// draws their QR codes while the request thread serves the creates from what is ready. A create then
// costs one statement (its insert), not a lookup and an insert, and waits for the thread only when the
// pool has run dry (at the first create, or under more load than the thread keeps up with).
//
// An index is never handed out twice: the sequence gives each block to one process, and an address goes
// back to the pool only when its insert did not use it (a replay of an existing externalId). The indexes
// still in the pool when the process stops are never used: a gap in the network's indexes of about
// 2 × BLOCK, more after a crash in a burst of creates.
import type { Network } from './derivation.js';
import { AddressThread, type IssuedAddress } from './thread.js';
import type { Sql } from '../db/database.js';

export interface PooledAddress extends IssuedAddress {
  network: Network;
  index: number;
}

/** The pool is topped up when it holds BLOCK addresses or fewer, to 2 × BLOCK beyond the creates waiting. */
const BLOCK = 8;
/** Addresses per message to the address thread: the first creates go on while it draws the next. */
const CHUNK = 4;

const SEQUENCE: Record<Network, string> = { Tron: 'address_index_tron', Ethereum: 'address_index_ethereum' };

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
  private closed = false;
  private readonly pools: Record<Network, NetworkPool> = {
    Tron: { ready: [], waiters: [], filling: false },
    Ethereum: { ready: [], waiters: [], filling: false },
  };

  constructor(
    private readonly db: Sql,
    xpubs: Record<Network, string>,
  ) {
    this.thread = new AddressThread(xpubs);
  }

  /** The next address of the network: from the pool at once when it has one. */
  take(network: Network): Promise<PooledAddress> {
    const pool = this.pools[network];
    const address = pool.ready.shift();
    const taken = address ? Promise.resolve(address) : new Promise<PooledAddress>((resolve, reject) => pool.waiters.push({ resolve, reject }));
    this.topUp(network);
    return taken;
  }

  /** An address whose insert did not use it (a replay): the next create takes it, so no index is lost. */
  giveBack(address: PooledAddress): void {
    this.deliver(address, 'first');
  }

  /** Stops the address thread once it has answered the fill under way; no fill starts after. */
  close(): Promise<void> {
    this.closed = true;
    return this.thread.close();
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
      const rows = await this.db.query<{ index: bigint }>(`SELECT nextval('${SEQUENCE[network]}') AS index FROM generate_series(1, $1::int)`, [count]);
      // Closed while the indexes were reserved: no thread may start after close().
      if (this.closed) throw new Error('the address pool is closed');
      const indexes = rows.map((row) => Number(row.index));
      const chunks = Array.from({ length: Math.ceil(indexes.length / CHUNK) }, (_, i) => indexes.slice(i * CHUNK, (i + 1) * CHUNK));
      await Promise.all(
        chunks.map(async (chunk) => {
          const issued = await this.thread.issue(chunk.map((index) => [network, index] as const));
          issued.forEach((one, i) => {
            if (one instanceof Error) throw one;
            this.deliver({ network, index: chunk[i]!, ...one });
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
