// The shared address pool: a fill derives the addresses of new indexes (and of the rows still to derive)
// into the database, one fill follows another instead of running beside it, fills of two processes
// never draw an index twice, and a failed fill fails only its callers.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AddressPool, POOL_TARGET, walletFingerprint } from '../../../src/server/addresses/pool.js';
import { createAddressDeriver } from '../../../src/server/addresses/derivation.js';
import type { Database } from '../../../src/server/db/database.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { decodeQr } from '../../support/qr.js';
import { DATABASES, migratedDatabase } from '../../support/platform.js';
import { observedStatements } from '../../support/statements.js';

const wallet = hdVectors.wallets[0]!;
const XPUBS = { Tron: wallet.Tron.xpub, Ethereum: wallet.Ethereum.xpub };
const deriveTron = createAddressDeriver('Tron', wallet.Tron.xpub);

interface PoolRow {
  address_index: bigint;
  wallet: string | null;
  address: string | null;
  address_qr: string | null;
}

describe.each(DATABASES)('AddressPool on %s', (kind) => {
  let database: Awaited<ReturnType<typeof migratedDatabase>>;
  let fills: number;
  let failNext: Error | undefined;
  let db: Database;
  const pools: AddressPool[] = [];
  const newPool = (xpubs = XPUBS) => {
    const pool = new AddressPool(db, xpubs);
    pools.push(pool);
    return pool;
  };
  const rows = (network = 'Tron') => database.db.query<PoolRow>('SELECT address_index, wallet, address, address_qr FROM address_pool WHERE network = $1 ORDER BY address_index', [network]);
  const counter = async (network = 'Tron') => Number((await database.db.query<{ n: bigint }>('SELECT next_index AS n FROM address_counters WHERE network = $1', [network]))[0]!.n);

  beforeEach(async () => {
    database = await migratedDatabase(kind);
    fills = 0;
    failNext = undefined;
    // The real database, with each fill's write counted and one made to fail on demand.
    db = {
      ...database.db,
      ...observedStatements(database.db, (text) => {
        if (!text.includes('INSERT INTO address_pool')) return;
        fills++;
        const error = failNext;
        failNext = undefined;
        if (error) throw error;
      }),
    };
  });
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.close();
    await database.db.close();
    await database.drop();
  });

  it('fills the network to its target with the wallet\'s addresses and QR codes, and a full pool is left alone', async () => {
    const pool = newPool();
    await pool.fill('Tron');
    const filled = await rows();
    expect(filled.map((r) => Number(r.address_index))).toEqual(Array.from({ length: POOL_TARGET }, (_, i) => i));
    expect(filled.map((r) => r.address)).toEqual(filled.map((r) => deriveTron(Number(r.address_index))));
    expect(filled.slice(0, 3).map((r) => r.address)).toEqual(wallet.Tron.addresses);
    expect(decodeQr(filled[POOL_TARGET - 1]!.address_qr!)).toBe(filled[POOL_TARGET - 1]!.address);
    expect(new Set(filled.map((r) => r.wallet))).toEqual(new Set([walletFingerprint(wallet.Tron.xpub)]));
    expect(await counter()).toBe(POOL_TARGET);
    // Full: nothing drawn, nothing written.
    await pool.fill('Tron');
    expect(fills).toBe(1);
    expect(await counter()).toBe(POOL_TARGET);
    // A fill for creates that found none adds what they want beyond the target; the networks are apart.
    await pool.fill('Tron', 5);
    expect(await counter()).toBe(POOL_TARGET + 5);
    expect(await rows('Ethereum')).toEqual([]);
  });

  it('derives the rows still to derive first, the lowest first: indexes reserved before the pool and rows of another wallet', async () => {
    await database.db.query(`INSERT INTO address_pool (network, address_index) VALUES ('Tron', 3), ('Tron', 7)`);
    await database.db.query(`UPDATE address_counters SET next_index = 10 WHERE network = 'Tron'`);
    const other = newPool({ Tron: hdVectors.wallets[1]!.Tron.xpub, Ethereum: XPUBS.Ethereum });
    await other.fill('Tron');
    const pool = newPool();
    await pool.fill('Tron');
    const filled = await rows();
    // The other wallet's rows are derived again with this one's xpub, and topped up to the target.
    expect(filled.map((r) => Number(r.address_index))).toEqual([3, 7, ...Array.from({ length: POOL_TARGET - 2 }, (_, i) => 10 + i)]);
    expect(filled.map((r) => r.address)).toEqual(filled.map((r) => deriveTron(Number(r.address_index))));
    expect(await counter()).toBe(10 + POOL_TARGET - 2);
  });

  it('runs one fill at a time: the calls made during a fill share the one after it', async () => {
    const pool = newPool();
    const first = pool.fill('Tron');
    const sameTurn = pool.fill('Tron');
    expect(sameTurn).toBe(first); // calls of one turn share a fill that has not started yet
    await new Promise((resolve) => setImmediate(resolve)); // now it runs
    const during = [pool.fill('Tron', 2), pool.fill('Tron', 3), pool.fill('Tron')];
    expect(during[0]).toBe(during[1]);
    await Promise.all([first, ...during]);
    expect(fills).toBe(2);
    expect(await counter()).toBe(POOL_TARGET + 5);
  });

  it('never draws an index twice when two processes fill at once', async () => {
    const [a, b] = [newPool(), newPool()];
    await Promise.all([a.fill('Tron', 40), b.fill('Tron', 40)]);
    const filled = await rows();
    const indexes = filled.map((r) => Number(r.address_index));
    expect(indexes).toEqual(Array.from({ length: indexes.length }, (_, i) => i));
    expect(indexes.length).toBeGreaterThanOrEqual(POOL_TARGET + 40);
    expect(await counter()).toBe(indexes.length);
  });

  it('fills when a create leaves the shared pool low, whoever took its addresses', async () => {
    const [a, b] = [newPool(), newPool()];
    await a.fill('Tron');
    // Other processes took all but 3, each fewer than makes it fill on its own count.
    await database.db.query(`DELETE FROM address_pool WHERE network = 'Tron' AND address_index < $1`, [POOL_TARGET - 3]);
    // One create of this process: its own count says nothing, the pool's level does.
    b.taken('Tron', 1, 2);
    await expect.poll(async () => (await rows()).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(POOL_TARGET);
    expect(fills).toBe(2);
  });

  it('fails the callers of a fill that failed, and the next fill draws the same indexes', async () => {
    const pool = newPool();
    failNext = new Error('the database is away');
    await expect(pool.fill('Tron', 1)).rejects.toThrow('the database is away');
    expect(await rows()).toEqual([]);
    expect(await counter()).toBe(0);
    await pool.fill('Tron');
    expect((await rows())[0]!.address).toBe(wallet.Tron.addresses[0]);
  });

  it('once closed, fails a fill instead of drawing indexes or starting a thread', async () => {
    const pool = newPool();
    await pool.close();
    await expect(pool.fill('Tron')).rejects.toThrow('the address pool is closed');
    expect(fills).toBe(0);
  });
});
