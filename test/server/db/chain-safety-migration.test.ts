// Migration 003_chain_safety on a database that already holds deposits: every existing row stays,
// gets its ordinal within its transaction to its order, and the new identity refuses a re-mined copy.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { migrate } from '../../../src/server/db/migrate.js';
import { DATABASES } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

const MIGRATION = '003_chain_safety';

describe.each(DATABASES)('migration %s on existing data, on %s'.replace('%s', MIGRATION), (kind) => {
  let db: Database;
  const order = randomUUID();

  useDatabase(kind, 'none', async (opened) => {
    db = opened;
    // The schema as it was before this migration (the earlier ones applied, as migrate() records them).
    await migrate(db, { before: MIGRATION });
    const merchant = randomUUID();
    await db.query("INSERT INTO merchants (id, name, api_key) VALUES ($1, 'm', 'pk_test_x')", [merchant]);
    await db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
       VALUES ($1, $2, 'e', 'Ethereum', 'USDT', 'c', 'https://x.example/', 0, '0xabc', 'qr', 1, now())`,
      [order, merchant],
    );
    // Two transfers of one transaction to the order (log 7 and 3), and one of another transaction.
    for (const [tx, logIndex] of [['0xaa', 7], ['0xaa', 3], ['0xbb', 0]] as const) {
      await db.query("INSERT INTO deposits (network, tx_hash, log_index, block_number, order_uuid, amount, source) VALUES ('Ethereum', $1, $2, 10, $3, 5, 'chain')", [tx, logIndex, order]);
    }
    await db.query("INSERT INTO chain_cursors (network, next_block) VALUES ('Ethereum', 11)");
  });

  it('keeps every row, numbers each transaction\'s transfers to an order in log order, and refuses a re-mined copy', async () => {
    expect((await migrate(db))[0]).toEqual(MIGRATION);
    const rows = await db.query<{ tx_hash: string; log_index: number; transfer_ordinal: number; block_hash: string | null }>(
      'SELECT tx_hash, log_index, transfer_ordinal, block_hash FROM deposits ORDER BY tx_hash, log_index',
    );
    expect(rows).toEqual([
      { tx_hash: '0xaa', log_index: 3, transfer_ordinal: 0, block_hash: null },
      { tx_hash: '0xaa', log_index: 7, transfer_ordinal: 1, block_hash: null },
      { tx_hash: '0xbb', log_index: 0, transfer_ordinal: 0, block_hash: null },
    ]);
    const [cursor] = await db.query('SELECT next_block, last_block_hash, halted_at FROM chain_cursors');
    expect(cursor).toEqual({ next_block: 11n, last_block_hash: null, halted_at: null });
    // The same log again is the same deposit (since 006 the identity is the log; a re-mined copy at
    // another log index is recognised by the crediting code: orders/deposits.ts).
    const again = await db.query(
      `INSERT INTO deposits (network, tx_hash, log_index, transfer_ordinal, block_number, order_uuid, amount, source)
       VALUES ('Ethereum', '0xbb', 0, 0, 12, $1, 5, 'chain') ON CONFLICT DO NOTHING RETURNING id`,
      [order],
    );
    expect(again).toEqual([]);
  });
});
