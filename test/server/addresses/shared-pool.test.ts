// The gap limit across processes (issue 23 #5). Several instances on one PostgreSQL database, only one
// of them busy: one served a single create and then no more, one filled the pool far ahead and went
// quiet. The busy one's creates still take the lowest ready indexes, so the used indexes run without a
// hole and a wallet restored from the seed with the standard gap limit (20) finds every deposit.
// Before, each process reserved up to 16 indexes of its own ahead: with two idle instances the busy
// one's first index was 32 past the last used one.
import { afterEach, describe, expect, it } from 'vitest';
import { AddressPool } from '../../../src/server/addresses/pool.js';
import { openPostgres, type Database } from '../../../src/server/db/database.js';
import { networkIndexes } from '../../../src/server/orders/issued-addresses.js';
import { openPlatform, type Platform } from '../../../src/server/platform.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { orderRequest } from '../../fixtures/orders.js';
import { startTestPlatform, testConfig, TEST_DATABASE_URL } from '../../support/platform.js';

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
});
