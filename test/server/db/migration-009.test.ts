// Migration 009 on a database migrated by the code before it: existing orders get the time of their
// last change (their last event's, or their creation), existing events a feed position in their id
// order, and the lists and the feed serve them at once.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { migrate } from '../../../src/server/db/migrate.js';
import { readFeed } from '../../../src/server/callbacks/feed.js';
import { listOrders } from '../../../src/server/orders/order-list.js';
import { DATABASES } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';
import { textOf } from '../../support/utf8.js';

const MIGRATION = '009_reconciliation';
const MERCHANT = '11111111-1111-4111-8111-111111111111';
const ORDERS = ['22222222-2222-4222-8222-000000000001', '22222222-2222-4222-8222-000000000002'];

describe.each(DATABASES)(`migration ${MIGRATION} on existing data, on %s`, (kind) => {
  let db: Database;

  useDatabase(kind, { before: MIGRATION }, async (opened) => {
    db = opened;
    await db.query(`INSERT INTO merchants (id, name, api_key) VALUES ($1, 'before 009', 'pk_test_before009')`, [MERCHANT]);
    for (const [i, uuid] of ORDERS.entries()) {
      await db.query(
        `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at, created_at)
         VALUES ($1, $2, $3, 'Tron', 'USDT', 'c', 'https://merchant.example/cb', $4, $5, 'data:image/png;base64,iVBORw0KGgo=', 1000000, now(), $6)`,
        [uuid, MERCHANT, `old-${i}`, i, `TJRabPrwbZy45sbavfcjinPJC18kjpRTv${i}`, `2026-11-0${i + 1} 10:00:00+00`],
      );
    }
    // The first order had an event on 2026-11-05; two events in id order.
    for (const [sequence, at] of [[1, '2026-11-05 12:00:00+00'], [2, '2026-11-05 13:00:00+00']] as const) {
      await db.query(
        `INSERT INTO callback_outbox (webhook_id, merchant_id, order_uuid, event, url, body, next_attempt_at, sequence, created_at, state)
         VALUES ($1, $2, $3, 'order.deposit', 'https://merchant.example/cb', '{}', now(), $4, $5, 'delivered')`,
        [`msg_old${sequence}`, MERCHANT, ORDERS[0], sequence, at],
      );
    }
  });

  it('dates each order by its last change and serves the lists and the feed at once', async () => {
    expect((await migrate(db))[0]).toBe(MIGRATION); // and any later ones
    const updated = await db.query<{ uuid: string; updated_at: Date }>('SELECT uuid, updated_at FROM deposit_orders ORDER BY uuid');
    expect(updated.map((row) => row.updated_at.toISOString())).toEqual(['2026-11-05T13:00:00.000Z', '2026-11-02T10:00:00.000Z']);
    const page = await listOrders(db, MERCHANT, { updatedSince: '2026-11-03 00:00:00' }, undefined, 10);
    expect(page.rows.map((o) => o.uuid)).toEqual([ORDERS[0]]);
    page.release();
    const feed = await readFeed(db, MERCHANT, 'orders', {}, undefined, 10);
    expect(feed.events.map((e) => JSON.parse(textOf(e)).id)).toEqual(['msg_old1', 'msg_old2']);
    feed.release();
  });
});
