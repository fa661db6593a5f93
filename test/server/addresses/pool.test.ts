// The address pool: indexes reserved from the network's sequence once per turn, handed out in order,
// an address given back handed out next, and a failed reservation failing only the creates waiting.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AddressPool } from '../../../src/server/addresses/pool.js';
import { createAddressDeriver } from '../../../src/server/addresses/derivation.js';
import type { Database } from '../../../src/server/db/database.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { decodeQr } from '../../support/qr.js';
import { DATABASES, migratedDatabase } from '../../support/platform.js';

const wallet = hdVectors.wallets[0]!;
const XPUBS = { Tron: wallet.Tron.xpub, Ethereum: wallet.Ethereum.xpub };
const deriveTron = createAddressDeriver('Tron', wallet.Tron.xpub);

describe.each(DATABASES)('AddressPool on %s', (kind) => {
  let database: Awaited<ReturnType<typeof migratedDatabase>>;
  let reservations: number;
  let failNext: Error | undefined;
  let pool: AddressPool;
  beforeEach(async () => {
    database = await migratedDatabase(kind);
    reservations = 0;
    failNext = undefined;
    // The real database, with each reservation counted and one made to fail on demand.
    const db: Database = {
      ...database.db,
      query: (text, params) => {
        if (text.includes('INSERT INTO address_reservations')) {
          reservations++;
          const error = failNext;
          failNext = undefined;
          if (error) return Promise.reject(error);
        }
        return database.db.query(text, params);
      },
    };
    pool = new AddressPool(db, XPUBS);
  });
  afterEach(async () => {
    await pool.close();
    await database.db.close();
    await database.drop();
  });

  it('reserves once for the takes of one turn and hands out the indexes in order, each with its QR code', async () => {
    const taken = await Promise.all(Array.from({ length: 40 }, () => pool.take('Tron')));
    expect(reservations).toBe(1);
    expect(taken.map((a) => a.index)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(taken.map((a) => a.address)).toEqual(taken.map((a) => deriveTron(a.index)));
    expect(taken.slice(0, 3).map((a) => a.address)).toEqual(wallet.Tron.addresses);
    expect(decodeQr(taken[39]!.qr)).toBe(taken[39]!.address);
    // The networks have pools of their own.
    expect((await pool.take('Ethereum')).address).toBe(wallet.Ethereum.addresses[0]);
  });

  it('hands out an address given back before any other', async () => {
    const first = await pool.take('Tron');
    const second = await pool.take('Tron');
    pool.giveBack(first);
    expect(await pool.take('Tron')).toEqual(first);
    expect((await pool.take('Tron')).index).toBe(second.index + 1);
  });

  it('fails the takes waiting on a reservation that failed, and the next take reserves again', async () => {
    failNext = new Error('the database is away');
    const waiting = Array.from({ length: 3 }, () => pool.take('Tron'));
    for (const take of waiting) await expect(take).rejects.toThrow('the database is away');
    expect(reservations).toBe(1);
    // No retry loop of its own: nothing more until a create asks.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reservations).toBe(1);
    expect((await pool.take('Tron')).address).toBe(wallet.Tron.addresses[0]);
    expect(reservations).toBe(2);
  });

  it('once closed, fails a take instead of reserving indexes or starting a thread', async () => {
    await pool.close();
    await expect(pool.take('Tron')).rejects.toThrow('the address pool is closed');
    expect(reservations).toBe(0);
  });
});
