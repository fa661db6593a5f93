// Redelivery (src/server/callbacks/redelivery.ts) is refused beside an attempt under way, and the result
// of an attempt that outlived its lease never overwrites the newer claim's.
import { describe, expect, it } from 'vitest';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import { CallbackInFlightError, redeliverCallback } from '../../../src/server/callbacks/redelivery.js';
import { T0, useCallbackPlatform, type CallbackPlatform } from '../../support/callback-platform.js';
import type { Receiver } from '../../support/receiver.js';
import { DATABASES, type TestPlatform } from '../../support/platform.js';

describe.each(DATABASES)('redelivery on %s', (kind) => {
  let c: CallbackPlatform, t: TestPlatform, receiver: Receiver, clock = T0;
  const { deposit, elapse, attempts } = useCallbackPlatform(kind, { now: () => clock, started: (started) => ({ t, receiver } = c = started), resetClock: () => (clock = T0) });

  it('guards each record by its claim: a result that outlived its lease never overwrites the newer one', async () => {
    const config = { ...t.platform.config.callbacks, timeoutSeconds: 10 };
    const warnings: string[] = [];
    const first = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config, mode: 'sandbox', now: () => clock, log: { warn: (_o, msg) => warnings.push(msg), error: (_o, msg) => warnings.push(msg) } });
    const second = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config, mode: 'sandbox', now: () => clock });
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    const order = await c.createOrder('stale-1', '/held-first');
    await deposit(order.uuid, 5);
    const late = first.runOnce(); // its delivery hangs at the receiver
    await receiver.waitFor(1, (d) => d.path === '/held-first/stale-1');
    const [{ webhook_id: webhookId }] = (await t.db.query<{ webhook_id: string }>("SELECT webhook_id FROM callback_outbox WHERE url LIKE '%/held-first/stale-1'")) as [{ webhook_id: string }];
    await expect(redeliverCallback(t.db, webhookId)).rejects.toThrow(CallbackInFlightError); // never beside an attempt under way
    await elapse(25_000); // past the lease (2 × 10 s + 1 s): the first dispatcher counts as dead
    expect(await second.runOnce()).toBe(1);
    receiver.release(); // the first attempt's late 500
    expect(await late).toBe(1);
    const rows = await attempts('/held-first/stale-1');
    expect(rows.map((r) => r.status_code)).toEqual([200, 500]);
    expect(rows[0]).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(warnings).toContain('callback attempt outlived its lease: recorded as history, the state left to the newer claim');
    await c.drain();
    expect(receiver.deliveries.filter((d) => d.path === '/held-first/stale-1')).toHaveLength(2); // not sent a third time
    expect((await redeliverCallback(t.db, webhookId))?.state).toBe('pending'); // no attempt under way now
  });
});
