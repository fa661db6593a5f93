// Migration 006 on a database migrated by the code before it, holding orders and deposits: the address
// counters start past every index handed out (the sequence's and the orders'), the deposits keep their
// rows under the new identity (one log), and the new tables start empty.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { migrate } from '../../../src/server/db/migrate.js';
import { DATABASES } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

const MIGRATION = '006_deposit_identity_leases_reservations';

describe.each(DATABASES)(`migration ${MIGRATION} on existing data, on %s`, (kind) => {
  let db: Database;
  const order = randomUUID();

  useDatabase(kind, { before: MIGRATION }, async (opened) => {
    db = opened;
    const merchant = randomUUID();
    await db.query("INSERT INTO merchants (id, name, api_key) VALUES ($1, 'm', 'pk_test_006')", [merchant]);
    // Tron: the sequence handed out 0..19 (the pool held some unused); Ethereum: never used.
    await db.query("SELECT nextval('address_index_tron') FROM generate_series(1, 20)");
    await db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
       VALUES ($1, $2, 'e', 'Tron', 'USDT', 'c', 'https://x.example/', 12, 'T-12', 'qr', 1, now())`,
      [order, merchant],
    );
    for (const [logIndex, ordinal] of [[7, 1], [3, 0]] as const) {
      await db.query(
        "INSERT INTO deposits (network, tx_hash, log_index, transfer_ordinal, block_number, block_hash, order_uuid, amount, source) VALUES ('Tron', 'aa', $1, $2, 10, 'h10', $3, 5, 'chain')",
        [logIndex, ordinal, order],
      );
    }
  });

  it('starts the counters past every index handed out and keeps every deposit under the new identity', async () => {
    expect((await migrate(db))[0]).toBe(MIGRATION); // and any later ones
    expect(await db.query('SELECT network, next_index FROM address_counters ORDER BY network')).toEqual([
      { network: 'Ethereum', next_index: 0n },
      { network: 'Tron', next_index: 20n },
    ]);
    expect(await db.query('SELECT log_index FROM deposits ORDER BY log_index')).toEqual([{ log_index: 3 }, { log_index: 7 }]);
    // The same log again is refused by the database; another log of the transaction is a deposit of its own.
    const insert = (logIndex: number) =>
      db.query(
        `INSERT INTO deposits (network, tx_hash, log_index, transfer_ordinal, block_number, block_hash, order_uuid, amount, source)
         VALUES ('Tron', 'aa', $1, 0, 10, 'h10', $2, 5, 'chain') ON CONFLICT DO NOTHING RETURNING id`,
        [logIndex, order],
      );
    expect(await insert(7)).toEqual([]);
    expect(await insert(9)).toHaveLength(1);
    expect(await db.query('SELECT count(*)::int AS n FROM job_leases')).toEqual([{ n: 0 }]);
    expect(await db.query('SELECT count(*)::int AS n FROM address_pool')).toEqual([{ n: 0 }]);
  });
});
