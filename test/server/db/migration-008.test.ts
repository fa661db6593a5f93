// Migration 008 on a database migrated by the code before it: the indexes a process had reserved and
// not used (it crashed, or another still held them) become rows of the shared pool still to derive,
// and the next creates take them first, so the upgrade leaves no gap in the wallet's used indexes.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { migrate, migrationFiles } from '../../../src/server/db/migrate.js';
import { openPlatform } from '../../../src/server/platform.js';
import { createAddressDeriver } from '../../../src/server/addresses/derivation.js';
import { orderRequest } from '../../fixtures/orders.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { DATABASES, testConfig } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

const MIGRATION = '008_shared_address_pool';
const deriveTron = createAddressDeriver('Tron', hdVectors.wallets[0]!.Tron.xpub);

describe.each(DATABASES)(`migration ${MIGRATION} on existing data, on %s`, (kind) => {
  let db: Database;

  useDatabase(kind, { before: MIGRATION }, async (opened) => {
    db = opened;
    // Tron indexes 0..7 drawn: 5 and 6 reserved by a process that died before using them, the others used.
    await db.query(`UPDATE address_counters SET next_index = 8 WHERE network = 'Tron'`);
    await db.query(`INSERT INTO address_reservations (network, address_index, holder, expires_at) VALUES ('Tron', 5, gen_random_uuid(), now() + interval '1 hour'), ('Tron', 6, gen_random_uuid(), now() - interval '1 hour')`);
  });

  it('makes the unused reservations rows to derive, and the next creates use them first', async () => {
    expect(await migrate(db)).toEqual(migrationFiles().map((m) => m.version).filter((version) => version >= MIGRATION));
    expect(await db.query('SELECT network, address_index, wallet, address FROM address_pool ORDER BY address_index')).toEqual([
      { network: 'Tron', address_index: 5n, wallet: null, address: null },
      { network: 'Tron', address_index: 6n, wallet: null, address: null },
    ]);
    const platform = await openPlatform(testConfig(), { db, logger: false });
    try {
      const merchant = await platform.merchants.create('upgraded');
      const created = [];
      for (let i = 0; i < 3; i++) {
        const result = await platform.orders.create(merchant.merchantId, orderRequest(`after-upgrade-${i}`));
        if (!('order' in result)) throw new Error(`unexpected ${result.outcome}`);
        created.push(result.order.address);
      }
      expect(created).toEqual([deriveTron(5), deriveTron(6), deriveTron(8)]);
    } finally {
      await platform.close();
    }
  });
});
