// Deposits, the order lifecycle and signed callbacks, through the sandbox helper's crediting path and
// the real dispatcher to a receiver on loopback.
import { readFileSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyCallback, type DepositOrder, type DepositOrderCallback } from '../../../src/client/index.js';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import { isNonPublicAddress } from '../../../src/server/callbacks/destinations.js';
import { nextAttemptDelayMs } from '../../../src/server/callbacks/outbox.js';
import { CallbackInFlightError, redeliverCallback } from '../../../src/server/callbacks/redelivery.js';
import { enqueueCallback } from '../../../src/server/callbacks/outbox.js';
import type { Database } from '../../../src/server/db/database.js';
import { createContractAjv } from '../../../src/server/http/contract-ajv.js';
import { expireOrders } from '../../../src/server/orders/expiry.js';
import { startCallbackPlatform, T0, type CallbackPlatform } from '../../support/callback-platform.js';
import { startReceiver, type Receiver } from '../../support/receiver.js';
import { DATABASES, type TestPlatform } from '../../support/platform.js';
import { orderRequest } from '../../fixtures/orders.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
/** A time as the platform writes it (UTC, "YYYY-MM-DD HH:mm:ss"). */
const timeOf = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
const validCallback = createContractAjv().compile({ $ref: 'contract.json#/components/schemas/DepositOrderCallback' });
const contract = JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, { description: string }> } };

describe.each(DATABASES)('deposits and callbacks on %s', (kind) => {
  let c: CallbackPlatform;
  let t: TestPlatform;
  let receiver: Receiver;
  let clock = T0;

  beforeAll(async () => {
    c = await startCallbackPlatform(kind, () => clock);
    ({ t, receiver } = c);
  });
  afterAll(() => c?.close());
  afterEach(() => {
    clock = T0;
  });

  async function deposit(uuid: string, amount: number) {
    const response = await t.signed('POST', `/sandbox/v1/orders/${uuid}/deposits`, { body: JSON.stringify({ amount }), headers: JSON_TYPE });
    return { status: response.status, body: (await response.json()) as DepositOrder & { code?: string } };
  }

  /** Time passing for the outbox, whose due times and leases are the database's clock: all of them move back. */
  async function elapse(ms: number) {
    await t.db.query('UPDATE callback_outbox SET next_attempt_at = next_attempt_at - make_interval(secs => $1::double precision / 1000)', [ms]);
  }

  it('credits exact sums, moves NEW → DONE at minAmount, and calls back once per deposit, signed', async () => {
    const order = await c.createOrder('dep-1');
    const steps = [
      [400_000, 400_000, 'NEW'],
      [600_001, 1_000_001, 'DONE'],
      [1, 1_000_002, 'DONE'],
    ] as const;
    for (const [amount, received, status] of steps) {
      const { status: code, body } = await deposit(order.uuid, amount);
      expect(code).toBe(201);
      expect(body).toMatchObject({ uuid: order.uuid, receivedAmount: received, status });
    }
    await c.drain();
    const deliveries = await receiver.waitFor(3, (d) => d.path === '/ok/dep-1');
    const { merchant } = t;
    const events: DepositOrderCallback[] = [];
    for (const delivery of deliveries) {
      const event = await verifyCallback(delivery.body, delivery.headers as Record<string, string>, merchant.callbackSecret, { now: () => clock });
      expect(new Webhook(merchant.callbackSecret).verify(delivery.body, delivery.headers as Record<string, string>)).toEqual(JSON.parse(delivery.body));
      expect(validCallback(event), JSON.stringify(validCallback.errors)).toBe(true);
      events.push(event);
    }
    expect(events.map((e) => [e.event, e.amount, e.receivedAmount, e.status])).toEqual([
      ['order.deposit', 400_000, 400_000, 'NEW'],
      ['order.deposit', 600_001, 1_000_001, 'DONE'],
      ['order.deposit', 1, 1_000_002, 'DONE'],
    ]);
    expect(events.every((e) => /^[0-9a-f]{64}$/.test(e.txId!))).toBe(true); // Tron writes tx ids without 0x
    expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(3);
    const read = await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } });
    expect(read.data).toMatchObject({ receivedAmount: 1_000_002, status: 'DONE' });
    // The last callback is the order as read, less exactly the two fields the contract's description
    // names, plus the event's own (issue 49: the description left out unconfirmedDeposits).
    const body = JSON.parse(deliveries[2]!.body) as Record<string, unknown>;
    const asRead = read.data as unknown as Record<string, unknown>;
    const EVENT_FIELDS = ['event', 'occurredAt', 'sequence', 'amount', 'txId'];
    const leftOut = Object.keys(asRead).filter((key) => !(key in body));
    expect(leftOut.sort()).toEqual(['paymentUrl', 'unconfirmedDeposits']);
    for (const key of Object.keys(body).filter((k) => !EVENT_FIELDS.includes(k))) expect(body[key], key).toEqual(asRead[key]);
    const description = contract.components.schemas.DepositOrderCallback!.description.replace(/\s+/g, ' ');
    expect(description).toContain('as the read endpoint returns them but for the two it adds at each read: `paymentUrl`');
    expect(description).toContain('and `unconfirmedDeposits`');
  });

  it('expires an unpaid order with a callback, honours a late payment, and stops at the watch window', async () => {
    const order = await c.createOrder('exp-1');
    await deposit(order.uuid, 999_999);
    clock = T0 + 3600 * 1000 - 1000;
    expect(await expireOrders(t.db, new Date(clock))).toBe(0);
    clock = T0 + 3600 * 1000;
    expect(await expireOrders(t.db, new Date(clock))).toBe(1);
    expect(await expireOrders(t.db, new Date(clock))).toBe(0); // each order expires once
    const late = await deposit(order.uuid, 1);
    expect(late.body).toMatchObject({ status: 'DONE', receivedAmount: 1_000_000 });
    clock = T0 + (3600 + 7 * 86_400 + 1) * 1000;
    const outside = await deposit(order.uuid, 5);
    expect(outside.status).toBe(409);
    expect(outside.body.code).toBe('order_not_watched');
    await c.drain();
    const deliveries = await receiver.waitFor(3, (d) => d.path === '/ok/exp-1');
    expect(deliveries.map((d) => [JSON.parse(d.body).event, JSON.parse(d.body).status])).toEqual([
      ['order.deposit', 'NEW'],
      ['order.expired', 'EXPIRED'],
      ['order.deposit', 'DONE'],
    ]);
  });

  it('answers 404 for another merchant\'s order and 422 for a non-positive amount, crediting nothing', async () => {
    const order = await c.createOrder('dep-2');
    const other = await t.createMerchant();
    const foreign = await t.signed('POST', `/sandbox/v1/orders/${order.uuid}/deposits`, { body: '{"amount":5}', headers: JSON_TYPE, credentials: other });
    expect(foreign.status).toBe(404);
    for (const amount of [0, -1, 1.5, '5']) {
      const response = await t.signed('POST', `/sandbox/v1/orders/${order.uuid}/deposits`, { body: JSON.stringify({ amount }), headers: JSON_TYPE });
      expect(response.status).toBe(422);
    }
    expect(await t.count("deposits")).toBe(5);
    // A total past 2^53 − 1 could not be written exactly: a 422, not a 500, and nothing changes.
    expect((await deposit(order.uuid, Number.MAX_SAFE_INTEGER - 10)).status).toBe(201);
    const over = await deposit(order.uuid, 11);
    expect(over.status).toBe(422);
    expect((await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } })).data!.receivedAmount).toBe(Number.MAX_SAFE_INTEGER - 10);
  });

  async function attempts(webhookPath: string) {
    return t.db.query<{ state: string; attempts: number; due_in_ms: number; status_code: number | null; error: string | null; error_kind: string | null }>(
      `SELECT o.state, o.attempts, extract(epoch FROM o.next_attempt_at - now())::float8 * 1000 AS due_in_ms, a.status_code, a.error, a.error_kind FROM callback_outbox o
         JOIN callback_attempts a ON a.outbox_id = o.id WHERE o.url LIKE $1 ORDER BY a.id`,
      [`%${webhookPath}`],
    );
  }

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

  it('records why an attempt got no answer: nothing listening is connection_refused, a 2xx no error', async () => {
    const closed = await startReceiver();
    const closedUrl = closed.url;
    await closed.close();
    const { data } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('refused-1', { callbackUrl: `${closedUrl}/gone-away` }) });
    await deposit(data!.uuid, 5);
    const ok = await c.createOrder('kind-ok');
    await deposit(ok.uuid, 5);
    await c.drain();
    expect(await attempts('/gone-away')).toMatchObject([{ state: 'pending', status_code: null, error_kind: 'connection_refused', error: expect.stringContaining('ECONNREFUSED') }]);
    expect(await attempts('/ok/kind-ok')).toMatchObject([{ state: 'delivered', status_code: 200, error: null, error_kind: null }]);
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

  it('does not follow a redirect, and retries it', async () => {
    const order = await c.createOrder('r302', '/redirect');
    await deposit(order.uuid, 5);
    await c.drain();
    const rows = await attempts('/redirect/r302');
    expect(rows[0]).toMatchObject({ state: 'pending', status_code: 302 });
    expect(receiver.deliveries.filter((d) => d.path === '/ok')).toHaveLength(0);
  });

  it('records a receiver that does not answer within the timeout, and retries it', async () => {
    const slow = await startReceiver({ slowMs: 3000 });
    try {
      const { data } = await t.client().POST('/partner/v1/platforms/orders', {
        body: orderRequest('slow-1', { callbackUrl: `${slow.url}/slow` }),
      });
      await deposit(data!.uuid, 5);
      const started = Date.now();
      await c.drain();
      expect(Date.now() - started).toBeLessThan(2500);
      const [row] = await t.db.query<{ state: string; error: string; latency_ms: number }>(
        "SELECT o.state, a.error, a.error_kind, a.latency_ms FROM callback_outbox o JOIN callback_attempts a ON a.outbox_id = o.id WHERE o.url LIKE '%/slow'",
      );
      expect(row).toMatchObject({ state: 'pending', error: 'no answer within 1 s', error_kind: 'timeout' });
      expect(row!.latency_ms).toBeGreaterThanOrEqual(900);
    } finally {
      await slow.close();
    }
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

  it('refuses private and loopback receivers in live mode, after resolving the name', async () => {
    const order = await c.createOrder('live-private');
    const live = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: { ...t.platform.config.callbacks, allowPrivate: false }, mode: 'live', now: () => clock });
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    await t.db.transaction((tx) =>
      enqueueCallback(tx, { merchantId: t.merchant.merchantId, orderUuid: order.uuid, url: receiver.url.replace('http://127.0.0.1', `https://${hostname()}`) + '/ok/live-private', occurredAt: new Date(clock), payload: { event: 'order.expired', ...order, receivedAmount: 0 } }),
    );
    const before = receiver.deliveries.length;
    await live.runOnce();
    const [row] = await t.db.query<{ error: string; error_kind: string }>("SELECT a.error, a.error_kind FROM callback_attempts a JOIN callback_outbox o ON o.id = a.outbox_id WHERE o.url LIKE '%live-private'");
    // The machine's own name: refused once resolved (a loopback or private address), or before, when it is
    // one label (`vm`), which live mode never takes for a public host; never delivered either way.
    const singleLabel = !hostname().includes('.');
    expect(row!.error).toMatch(singleLabel ? /must not name a private, loopback, link-local or reserved address/ : /^callback host \S+ has no public address$/);
    expect(row!.error_kind).toBe(singleLabel ? 'destination_refused' : 'dns');
    expect(receiver.deliveries.length).toBe(before);
  });

  it('records no address a name resolved to (issue 50, item 6): a name with no public address reads as one that does not resolve', async () => {
    // The machine's own name resolves to loopback here (/etc/hosts), never leaving the machine.
    const own = hostname();
    const addresses = await lookup(own, { all: true });
    expect(addresses.every((a) => isNonPublicAddress(a.address)), `${own} must resolve to this machine`).toBe(true);
    // allowLoopback off: the test platform is a loopback-only sandbox, whose callbacks may reach this machine (issue 49).
    const sandbox = (allowPrivate: boolean) => new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: { ...t.platform.config.callbacks, allowPrivate, allowLoopback: false }, mode: 'sandbox', now: () => clock });
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const attempt = async (name: string, url: string, allowPrivate: boolean) => {
      const order = await c.createOrder(name);
      await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
      await t.db.transaction((tx) => enqueueCallback(tx, { merchantId: t.merchant.merchantId, orderUuid: order.uuid, url, occurredAt: new Date(clock), payload: { event: 'order.expired', ...order, receivedAmount: 0 } }));
      await sandbox(allowPrivate).runOnce();
      const [row] = await t.db.query<{ error: string; error_kind: string }>('SELECT a.error, a.error_kind FROM callback_attempts a JOIN callback_outbox o ON o.id = a.outbox_id WHERE o.order_uuid = $1', [order.uuid]);
      return row!;
    };
    const internal = await attempt('resolves-inside', `http://${own}:${closedPort}/cb`, false);
    // The same words as a name that does not resolve at all (delivery-errors.test.ts: no test asks a resolver about one).
    expect(internal).toEqual({ error: `callback host ${own} has no public address`, error_kind: 'dns' });
    // With private destinations allowed, a refused connection names the URL's host and port, not the address connected to.
    const refused = await attempt('refused-by-name', `http://${own}:${closedPort}/cb`, true);
    expect(refused).toEqual({ error: `connect ECONNREFUSED ${own}:${closedPort}`, error_kind: 'connection_refused' });
    for (const row of [internal, refused]) for (const { address } of addresses) expect(row.error).not.toContain(address);
  });
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

describe('the retry schedule', () => {
  it('adds ±10 % jitter to each delay and ends after the last', () => {
    const schedule = [5, 300, 1800];
    expect(nextAttemptDelayMs(1, schedule, () => 0)).toBe(4500);
    expect(nextAttemptDelayMs(1, schedule, () => 1)).toBe(5500);
    expect(nextAttemptDelayMs(2, schedule, () => 0.5)).toBe(300_000);
    expect(nextAttemptDelayMs(4, schedule)).toBeUndefined();
  });
});
