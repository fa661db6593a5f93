// The outbox (src/server/callbacks/outbox.ts): the retry schedule and its end, a receiver that says Gone,
// an order's events in sequence order, and leases by the database's clock; through the real dispatcher
// to a receiver on loopback.
import { describe, expect, it } from 'vitest';
import type { DepositOrderCallback } from '../../../src/client/index.js';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import { nextAttemptDelayMs } from '../../../src/server/callbacks/outbox.js';
import { createContractAjv } from '../../../src/server/http/contract-ajv.js';
import { T0, useCallbackPlatform, type CallbackPlatform } from '../../support/callback-platform.js';
import type { Receiver } from '../../support/receiver.js';
import { DATABASES, type TestPlatform } from '../../support/platform.js';

/** A time as the platform writes it (UTC, "YYYY-MM-DD HH:mm:ss"). */
const timeOf = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
const validCallback = createContractAjv().compile({ $ref: 'contract.json#/components/schemas/DepositOrderCallback' });

describe.each(DATABASES)('the outbox on %s', (kind) => {
  let c: CallbackPlatform, t: TestPlatform, receiver: Receiver, clock = T0;
  const { deposit, elapse, attempts } = useCallbackPlatform(kind, { now: () => clock, started: (started) => ({ t, receiver } = c = started), resetClock: () => (clock = T0) });

  it('retries a receiver that answers 500, with the first retry about 5 s later, then gives up at the end of the schedule', async () => {
    const order = await c.createOrder('r500', '/status/500');
    await deposit(order.uuid, 5);
    await c.drain();
    let rows = await attempts('/status/500/r500');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: 'pending', attempts: 1, status_code: 500, error: 'answered 500', error_kind: 'http_status' });
    const delay = rows[0]!.due_in_ms;
    expect(delay).toBeGreaterThanOrEqual(4000);
    expect(delay).toBeLessThanOrEqual(5500);
    await c.drain();
    expect(await attempts('/status/500/r500')).toHaveLength(1); // not due yet
    await elapse(6_000);
    await c.drain();
    await elapse(66_000);
    await c.drain();
    rows = await attempts('/status/500/r500');
    expect(rows.map((r) => r.status_code)).toEqual([500, 500, 500]);
    expect(rows.at(-1)!.state).toBe('failed');
  });

  it('stops at once when the receiver answers 410 Gone', async () => {
    const order = await c.createOrder('r410', '/status/410');
    await deposit(order.uuid, 5);
    await c.drain();
    await elapse(3_600_000);
    await c.drain();
    const rows = await attempts('/status/410/r410');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: 'gone', status_code: 410 });
  });

  it("numbers an order's events and delivers them in sequence order, a later one waiting while an earlier one is retried", async () => {
    const order = await c.createOrder('seq-1', '/fail-first');
    clock = T0 + 1000;
    await deposit(order.uuid, 400_000);
    clock = T0 + 2000;
    await deposit(order.uuid, 700_000);
    await c.drain(); // the first event is answered 500; the second must not overtake it
    expect(receiver.deliveries.filter((d) => d.path === '/fail-first/seq-1')).toHaveLength(1);
    await elapse(6_000);
    await c.drain();
    const deliveries = await receiver.waitFor(3, (d) => d.path === '/fail-first/seq-1');
    const events = deliveries.map((d) => JSON.parse(d.body) as DepositOrderCallback);
    expect(events.map((e) => [e.sequence, e.receivedAmount])).toEqual([[1, 400_000], [1, 400_000], [2, 1_100_000]]);
    expect(events.map((e) => e.occurredAt)).toEqual([timeOf(T0 + 1000), timeOf(T0 + 1000), timeOf(T0 + 2000)]);
    for (const event of events) expect(validCallback(event), JSON.stringify(validCallback.errors)).toBe(true);
  });

  // Issue 23 (7): with one dispatcher 12 s ahead (timeout 5 s, lease 11 s), an event under way went out
  // a second time at once. Due times and leases are now the database's clock.
  it('takes leases from the database: a dispatcher whose clock is 12 s ahead never sends an event under way again', async () => {
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    const config = { ...t.platform.config.callbacks, timeoutSeconds: 5 };
    const behind = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config, mode: 'sandbox', now: () => Date.now() });
    const ahead = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config, mode: 'sandbox', now: () => Date.now() + 12_000 });
    const order = await c.createOrder('clock-1', '/held-first');
    await deposit(order.uuid, 5);
    const first = behind.runOnce(); // held at the receiver
    await receiver.waitFor(1, (d) => d.path === '/held-first/clock-1');
    expect(await ahead.runOnce()).toBe(0);
    receiver.release();
    expect(await first).toBe(1);
    const sent = receiver.deliveries.filter((d) => d.path === '/held-first/clock-1');
    expect(sent).toHaveLength(1);
    expect(await ahead.runOnce()).toBe(0); // the 500's retry is due in about 5 s by the database's clock
  });
});

describe('the retry schedule', () => {
  it('adds ±10 % jitter to each delay and ends after the last', () => {
    const schedule = [5, 300, 1800];
    expect(nextAttemptDelayMs(1, schedule, () => 0)).toBe(4500);
    expect(nextAttemptDelayMs(1, schedule, () => 1)).toBe(5500);
    expect(nextAttemptDelayMs(2, schedule, () => 0.5)).toBe(300_000);
    expect(nextAttemptDelayMs(4, schedule)).toBeUndefined();
  });
});
