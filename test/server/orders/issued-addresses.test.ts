// The operator's view of the HD indexes: a gap counts from index 0, since a wallet restored from the
// seed scans from there and gives up after its gap limit (20) of unused indexes.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { networkIndexes } from '../../../src/server/orders/issued-addresses.js';
import { DATABASES } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

describe.each(DATABASES)('each network\'s used indexes, on %s', (kind) => {
  let db: Database;

  useDatabase(kind, 'all', async (opened) => {
    db = opened;
    const merchant = randomUUID();
    await db.query("INSERT INTO merchants (id, name, api_key) VALUES ($1, 'm', 'pk_test_gaps')", [merchant]);
    for (const index of [32, 40]) {
      await db.query(
        `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
         VALUES ($1, $2, $3, 'Tron', 'USDT', 'c', 'https://x.example/', $4, $5, 'qr', 1, now())`,
        [randomUUID(), merchant, `e-${index}`, index, `T-${index}`],
      );
    }
  });

  it('counts the run of unused indexes before the lowest used one as a gap', async () => {
    const [tron] = await networkIndexes(db, 'Tron');
    expect(tron).toMatchObject({ network: 'Tron', usedIndexes: 2, highestIndex: 40, largestGap: { after: -1, before: 32, size: 32 } });
  });
});
