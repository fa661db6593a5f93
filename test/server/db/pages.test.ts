// A page's statement (pages.ts) is prepared once and then planned once: its LIMIT is in its text, so
// PostgreSQL keeps a generic plan instead of planning it at every call (with `LIMIT $n` it cannot tell a
// page from a tenth of the table, and planned each call afresh: bench/README.md). And the texts pages
// make, one per filter set and limit, are prepared under a budget of their own (database.ts), so a
// merchant who asks for many shapes never leaves the platform's own statements unprepared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Sql } from '../../../src/server/db/database.js';
import { limitClause } from '../../../src/server/db/pages.js';
import { listOrders } from '../../../src/server/orders/order-list.js';
import { orderRequest } from '../../fixtures/orders.js';
import { DATABASES, freshDatabase, inOneSession, PLANS_SQL, startTestPlatform, type TestPlatform } from '../../support/platform.js';

describe.each(DATABASES)('a page on %s', (kind) => {
  let t: TestPlatform;
  let merchantId: string;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
    merchantId = (await t.createMerchant('pages')).merchantId;
    const created = await t.platform.orders.create(merchantId, orderRequest('page-0'));
    if (!('order' in created)) throw new Error(`create: ${created.outcome}`);
    // Enough rows that a tenth of them (what PostgreSQL assumes of `LIMIT $n`) costs more than a page.
    await t.db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at, created_at)
       SELECT gen_random_uuid(), merchant_id, 'bulk-' || i, blockchain, currency, customer_id, callback_url, 1000000 + i, address || i, address_qr, min_amount, expired_at, created_at - i * interval '1 ms'
         FROM deposit_orders, generate_series(1, 3000) AS i WHERE uuid = $1`,
      [created.order.uuid],
    );
    await t.db.query('ANALYZE deposit_orders');
  });
  afterAll(() => t?.close());

  it('keeps one generic plan after its first runs, and gives the same pages', async () => {
    const { texts, pages, plans } = await inOneSession(kind, t.db, async (sql) => {
      const texts = new Set<string>();
      const spy: Sql = { query: (text, params, options) => (texts.add(text), sql.query(text, params, options)) };
      const pages = [];
      for (let i = 0; i < 8; i++) pages.push((await listOrders(spy, merchantId, {}, undefined, 20)).orders.map((order) => order.uuid));
      const plans = await sql.query<{ generic_plans: bigint; custom_plans: bigint }>(PLANS_SQL, [[...texts][0]]);
      return { texts, pages, plans };
    });
    expect(texts.size).toBe(1);
    expect([...texts][0]).toContain('LIMIT 21');
    expect(pages[0]).toHaveLength(20);
    for (const page of pages) expect(page).toEqual(pages[0]);
    // PostgreSQL plans a prepared statement for its values five times, then compares.
    expect(plans).toEqual([{ name: expect.stringMatching(/^partner_shaped_/), custom_plans: 5n, generic_plans: 3n }]);
  });
});

describe('a LIMIT written into a statement', () => {
  it('is a positive integer, and nothing else is written', () => {
    expect(limitClause(21)).toBe('LIMIT 21');
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => limitClause(bad)).toThrow(RangeError);
  });
});

describe.each(DATABASES)('statements shaped by requests on %s', (kind) => {
  it('are prepared under a budget of their own: past it they run unprepared, and the platform’s are still prepared', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      await inOneSession(kind, db, async (sql) => {
        for (let i = 0; i < 70; i++) expect(await sql.query<{ n: number }>(`SELECT ${i}::int AS n`, [], { shaped: true })).toEqual([{ n: i }]);
        const shaped = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'partner\\_shaped\\_%'");
        expect(shaped).toEqual([{ n: 64 }]);
        const platforms = 'SELECT $1::int + 1 AS n';
        expect(await sql.query(platforms, [1])).toEqual([{ n: 2 }]);
        expect(await sql.query(PLANS_SQL, [platforms])).toEqual([expect.objectContaining({ name: expect.stringMatching(/^partner_fixed_/) })]);
      });
    } finally {
      await drop();
    }
  });
});
