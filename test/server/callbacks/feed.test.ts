// The events feed with a long transaction open on the PostgreSQL server (issue 50, item 5): the events
// written after it wait until it ends, as before, but a read no longer spends a second and about 50
// statements finding so, again at every poll: once a read has waited a transaction out, the reads after
// it answer at once, one statement each, while that transaction stays open.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFeed } from '../../../src/server/callbacks/feed.js';
import type { Database } from '../../../src/server/db/database.js';
import { orderRequest } from '../../fixtures/orders.js';
import { observedStatements } from '../../support/statements.js';
import { T0, useCallbackPlatform, type CallbackPlatform } from '../../support/callback-platform.js';
import type { Receiver } from '../../support/receiver.js';
import { DATABASES, startTestPlatform, TEST_DATABASE_URL, type TestPlatform } from '../../support/platform.js';

describe.runIf(TEST_DATABASE_URL)('the events feed with a long transaction open on PostgreSQL', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('postgres');
  });
  afterAll(() => t?.close());

  let statements = 0;
  let counted: Database;
  /** One read of the merchant's feed from its start: its events, its statements and how long it took. */
  async function read(db: Database, merchantId: string) {
    counted ??= { ...db, ...observedStatements(db, () => statements++) }; // one database, as the platform's routes have
    statements = 0;
    const started = performance.now();
    const page = await readFeed(counted, merchantId, 'orders', {}, undefined, 100);
    page.release();
    return { events: page.events.length, statements, ms: performance.now() - started };
  }

  it('waits a long transaction out once, then answers each read at once with what is certain; all shows once it ends', async () => {
    const { data: order } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('held-back-1') });
    const deposit = (amount: number) => t.signed('POST', `/sandbox/v1/orders/${order!.uuid}/deposits`, { body: JSON.stringify({ amount }), headers: { 'Content-Type': 'application/json' } });
    expect((await deposit(100_000)).status).toBe(201);
    // Another session (any database of the server would do) opens a transaction and keeps it open.
    const other = new pg.Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      expect((await deposit(200_000)).status).toBe(201); // committed after it began: held back
      const first = await read(t.db, t.merchant.merchantId);
      expect(first.events).toBe(1);
      expect(first.ms).toBeLessThan(2000);
      expect(first.statements, 'the first read waits it out with few statements').toBeLessThanOrEqual(8);
      const later = [await read(t.db, t.merchant.merchantId), await read(t.db, t.merchant.merchantId), await read(t.db, t.merchant.merchantId)];
      for (const poll of later) expect(poll).toMatchObject({ events: 1, statements: 1 });
      expect(Math.max(...later.map((poll) => poll.ms)), 'no wait while the same transaction holds the events back').toBeLessThan(300);
    } finally {
      await other.query('COMMIT');
      await other.end();
    }
    const after = await read(t.db, t.merchant.merchantId);
    expect(after).toMatchObject({ events: 2, statements: 1 });
  });
});

// Through the platform and the real dispatcher to a receiver on loopback: the feed's item is the callback as sent.
describe.each(DATABASES)('the events feed and its callbacks on %s', (kind) => {
  let c: CallbackPlatform, t: TestPlatform, receiver: Receiver, clock = T0;
  const { deposit } = useCallbackPlatform(kind, { now: () => clock, started: (started) => ({ t, receiver } = c = started), resetClock: () => (clock = T0) });

  it("shows each delivered callback in the events feed under its webhook-id, its body the same bytes, and redelivers it under that id", async () => {
    const order = await c.createOrder('feed-bytes');
    await deposit(order.uuid, 1_500_000); // DONE: it does not expire in the tests after this one
    await c.drain();
    const [delivered] = await receiver.waitFor(1, (d) => d.path === '/ok/feed-bytes');
    const webhookId = delivered!.headers['webhook-id'] as string;
    const feed = await t.signed('GET', `/partner/v1/platforms/events?orderUuid=${order.uuid}`);
    const text = await feed.text();
    // The feed's item for this event carries the callback's body as it was POSTed, byte for byte.
    expect(text).toContain(`"id":${JSON.stringify(webhookId)},"type":"order.deposit","orderUuid":"${order.uuid}"`);
    expect(text).toContain(`"data":${delivered!.body},"delivery":{"state":"delivered"`);
    // A redelivery asked for through the API goes out again under the same webhook-id, with the same body.
    expect((await t.signed('POST', `/partner/v1/platforms/events/${webhookId}/redeliver`)).status).toBe(202);
    await c.drain();
    const again = await receiver.waitFor(2, (d) => d.path === '/ok/feed-bytes');
    expect(again.map((d) => d.headers['webhook-id'])).toEqual([webhookId, webhookId]);
    expect(again[1]!.body).toBe(delivered!.body);
    const deliveries = await t.signed('GET', `/partner/v1/platforms/events/${webhookId}/deliveries`);
    expect(await deliveries.json()).toMatchObject({ eventId: webhookId, delivery: { state: 'delivered', attempts: 2 }, data: [{ statusCode: 200 }, { statusCode: 200 }] });
  });
});
