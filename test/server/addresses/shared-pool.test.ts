// The gap limit across processes (issue 23 #5). Several instances on one PostgreSQL database, only one
// of them busy: one served a single create and then no more, one filled the pool far ahead and went
// quiet. The busy one's creates still take the lowest ready indexes, so the used indexes run without a
// hole and a wallet restored from the seed with the standard gap limit (20) finds every deposit.
// Before, each process reserved up to 16 indexes of its own ahead: with two idle instances the busy
// one's first index was 32 past the last used one. And the instances fill one at a time.
import { afterEach, describe, expect, it } from 'vitest';
import { AddressPool, POOL_TARGET } from '../../../src/server/addresses/pool.js';
import { openPostgres, type Database } from '../../../src/server/db/database.js';
import { networkIndexes } from '../../../src/server/orders/issued-addresses.js';
import { openPlatform, type Platform } from '../../../src/server/platform.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { orderRequest } from '../../fixtures/orders.js';
import { freshDatabase, startTestPlatform, testConfig, TEST_DATABASE_URL } from '../../support/platform.js';
import { observedStatements } from '../../support/statements.js';

const wallet = hdVectors.wallets[0]!;

describe.skipIf(!TEST_DATABASE_URL)('address indexes of several instances on one PostgreSQL database', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('leave no unused index between used ones when only one instance creates', { timeout: 120_000 }, async () => {
    const busy = await startTestPlatform('postgres');
    cleanups.push(() => busy.close());
    const connect = async (): Promise<Database> => {
      const db = await openPostgres(busy.databaseUrl!);
      cleanups.push(() => db.close());
      return db;
    };
    const client = busy.client();
    const create = async (externalId: string) => expect((await client.POST('/partner/v1/platforms/orders', { body: orderRequest(externalId) })).response.status).toBe(201);
    await create('busy-first');
    // A quiet instance: one create, then no traffic.
    const quiet: Platform = await openPlatform(testConfig(), { db: await connect(), logger: false });
    cleanups.push(() => quiet.close());
    expect((await quiet.orders.create(busy.merchant.merchantId, orderRequest('quiet-0'))).outcome).toBe('created');
    // An instance whose pool filled for 40 creates that then went elsewhere.
    const ahead = new AddressPool(await connect(), { Tron: wallet.Tron.xpub, Ethereum: wallet.Ethereum.xpub });
    cleanups.push(() => ahead.close());
    await ahead.fill('Tron', 40);
    // The busy instance: 40 creates in bursts of 10.
    for (let round = 0; round < 4; round++) await Promise.all(Array.from({ length: 10 }, (_, i) => create(`busy-${round}-${i}`)));

    const [tron] = await networkIndexes(busy.db, 'Tron');
    console.log(`3 instances, 1 busy: Tron ${tron!.usedIndexes} used, highest ${tron!.highestIndex}, largest gap ${tron!.largestGap?.size ?? 0}`);
    expect(tron).toEqual({ network: 'Tron', usedIndexes: 42, highestIndex: 41, largestGap: undefined });
  });

  it('fill one at a time: an instance that asks while another fills derives nothing and adds nothing', { timeout: 60_000 }, async () => {
    const database = await freshDatabase('postgres', TEST_DATABASE_URL, 'migrated');
    cleanups.push(() => database.drop(), () => database.db.close());
    let fillStatements = 0;
    /** An instance's own connections, its fills' writes counted (a fill runs in a transaction on PostgreSQL). */
    const instance = async () => {
      const db = await openPostgres(database.url!);
      cleanups.push(() => db.close());
      const counted = observedStatements(db, (text) => {
        if (text.includes('INSERT INTO address_pool')) fillStatements++;
      });
      const pool = new AddressPool({ ...db, ...counted }, { Tron: wallet.Tron.xpub, Ethereum: wallet.Ethereum.xpub });
      cleanups.push(() => pool.close());
      return pool;
    };
    const [first, second] = await Promise.all([instance(), instance()]);
    // Both find the pool empty at once. Without the lock both derived a pool's worth, and the one that
    // lost the counter threw its addresses away.
    await Promise.all([first.fill('Tron', 1), second.fill('Tron', 1)]);
    expect(fillStatements).toBe(1);
    const [{ ready, next }] = (await database.db.query<{ ready: number; next: bigint }>(
      `SELECT (SELECT count(*)::int FROM address_pool WHERE network = 'Tron') AS ready, (SELECT next_index FROM address_counters WHERE network = 'Tron') AS next`,
    )) as [{ ready: number; next: bigint }];
    expect(ready).toBe(POOL_TARGET + 1);
    expect(next).toBe(BigInt(POOL_TARGET + 1));
  });
});
