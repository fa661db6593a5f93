// The dispatcher (src/server/callbacks/dispatcher.ts): several share the outbox, a hanging receiver holds
// one slot only, deliveries in flight never pass its concurrency, and a refill asked for during a claim
// runs when it ends; through the real dispatcher to receivers on loopback.
import { describe, expect, it } from 'vitest';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import type { Database } from '../../../src/server/db/database.js';
import { startReceiver } from '../../support/receiver.js';
import { orderRequest } from '../../fixtures/orders.js';
import { T0, useCallbackPlatform, type CallbackPlatform } from '../../support/callback-platform.js';
import type { Receiver } from '../../support/receiver.js';
import { DATABASES, type TestPlatform } from '../../support/platform.js';

describe.each(DATABASES)('the callback dispatcher on %s', (kind) => {
  let c: CallbackPlatform, t: TestPlatform, receiver: Receiver, clock = T0;
  const { deposit } = useCallbackPlatform(kind, { now: () => clock, started: (started) => ({ t, receiver } = c = started), resetClock: () => (clock = T0) });

  it('lets several dispatchers share the outbox: each event is delivered once', async () => {
    const orders = await Promise.all(Array.from({ length: 12 }, (_, i) => c.createOrder(`share-${i}`, '/ok/share')));
    for (const order of orders) await deposit(order.uuid, 3);
    const others = Array.from({ length: 3 }, () => new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: t.platform.config.callbacks, mode: 'sandbox', now: () => clock, concurrency: 2 }));
    await Promise.all(others.map(async (d) => { while ((await d.runOnce()) > 0); }));
    const deliveries = await receiver.waitFor(12, (d) => d.path.startsWith('/ok/share'));
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.deliveries.filter((d) => d.path.startsWith('/ok/share'))).toHaveLength(12);
    expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(12);
  });

  it('keeps delivering to others while one receiver hangs (the running dispatcher refills free slots)', async () => {
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    const hanging = await startReceiver({ slowMs: 4000 });
    const running = new CallbackDispatcher({
      db: t.db, secrets: t.platform.secrets, config: { ...t.platform.config.callbacks, timeoutSeconds: 10, dispatchIntervalMs: 50 }, mode: 'sandbox', now: () => clock, concurrency: 2,
      fairness: { perMerchant: 2 }, // one merchant here: the slots, not the merchant's share, are under test (fairness.test.ts)
    });
    try {
      const { data: stuck } = await t.client().POST('/partner/v1/platforms/orders', {
        body: orderRequest('hang-1', { callbackUrl: `${hanging.url}/slow` }),
      });
      await deposit(stuck!.uuid, 5);
      const fast = [];
      for (let i = 0; i < 8; i++) fast.push(await c.createOrder(`flow-${i}`, '/ok/flow'));
      running.start();
      await hanging.waitFor(1, () => true, 5000); // the hanging delivery holds one of the two slots
      for (const order of fast) await deposit(order.uuid, 5);
      const started = Date.now();
      await receiver.waitFor(8, (d) => d.path.startsWith('/ok/flow'), 3000);
      expect(Date.now() - started).toBeLessThan(3000); // well before the hanging receiver answers
    } finally {
      await running.stop();
      await hanging.close();
    }
  });

  it('never has more deliveries in flight than its concurrency', async () => {
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    const slow = await startReceiver({ slowMs: 150 });
    const running = new CallbackDispatcher({
      db: t.db, secrets: t.platform.secrets, config: { ...t.platform.config.callbacks, dispatchIntervalMs: 20 }, mode: 'sandbox', now: () => clock, concurrency: 3,
      fairness: { perMerchant: 3, perDestination: 3 }, // one merchant and one receiver: the concurrency bound is under test
    });
    try {
      for (let i = 0; i < 12; i++) {
        const { data } = await t.client().POST('/partner/v1/platforms/orders', {
          body: orderRequest(`bound-${i}`, { callbackUrl: `${slow.url}/slow/${i}` }),
        });
        await deposit(data!.uuid, 5);
      }
      running.start();
      await slow.waitFor(12, () => true, 10_000);
      expect(slow.maxOpen()).toBe(3);
    } finally {
      await running.stop();
      await slow.close();
    }
  });

  it('runs a refill asked for while a claim was under way as soon as that claim ends, not an interval later', async () => {
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    const slow = await startReceiver({ slowMs: 100 });
    const intervalMs = 3000;
    const first = await c.createOrder('refill-first', '/ok/refill');
    const { data: held } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('refill-held', { callbackUrl: `${slow.url}/slow/refill` }) });
    await deposit(held!.uuid, 5);
    // The second claim (it starts when the slow delivery ends) is held past the idle timer the first claim
    // left: that timer's refill finds the claim under way. An event falls due meanwhile.
    let claims = 0;
    let released = 0;
    const db: Database = {
      kind: t.db.kind,
      query: async (text, params, options) => {
        const result = await t.db.query(text, params, options);
        // The claim (outbox.ts claimDue): one statement.
        if (text.startsWith('WITH candidates') && ++claims === 2) {
          expect(result).toHaveLength(0);
          await deposit(first.uuid, 5);
          await new Promise((r) => setTimeout(r, intervalMs + 500));
          released = Date.now();
        }
        return result as never;
      },
      queryBytes: (text, params, bytes, options) => t.db.queryBytes(text, params, bytes, options),
      exec: (text) => t.db.exec(text),
      session: (work) => t.db.session(work),
      close: () => t.db.close(),
      transaction: (work) => t.db.transaction(work),
    };
    const running = new CallbackDispatcher({
      db, secrets: t.platform.secrets, config: { ...t.platform.config.callbacks, dispatchIntervalMs: intervalMs }, mode: 'sandbox', now: () => clock, concurrency: 2,
      fairness: { perMerchant: 2, perDestination: 2 }, // one merchant: the slots are under test
    });
    try {
      running.start();
      await slow.waitFor(1, () => true, 5000);
      const [delivery] = await receiver.waitFor(1, (d) => d.path === '/ok/refill/refill-first', 2 * intervalMs + 2000);
      expect(released).toBeGreaterThan(0);
      expect(delivery!.at - released).toBeLessThan(intervalMs / 2); // the idle timer would have taken intervalMs
    } finally {
      await running.stop();
      await slow.close();
    }
  });
});
