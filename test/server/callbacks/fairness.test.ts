// Issue 23 (2): one merchant's receivers that never answer cost only that merchant. Measured before:
// a merchant's 100 orders whose callbackUrl was a TCP tarpit delayed another merchant's deposit
// callback by 86.7 s (16 slots and one queue for everyone).
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import { DeliveryFairness, fairnessFor } from '../../../src/server/callbacks/fairness.js';

const SIXTEEN_SLOTS = fairnessFor(16); // the dispatcher's default 16 slots: 4 per merchant and per destination
import { expireOrders } from '../../../src/server/orders/expiry.js';
import { orderRequest } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { startReceiver, type Receiver } from '../../support/receiver.js';

/** A loopback TCP server that accepts every connection and never answers. */
async function startTarpit() {
  const sockets = new Set<Socket>();
  let open = 0;
  let maxOpen = 0;
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    maxOpen = Math.max(maxOpen, ++open);
    sockets.add(socket);
    socket.on('close', () => {
      open--;
      sockets.delete(socket);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => open,
    maxOpen: () => maxOpen,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function until(condition: () => boolean, timeoutMs: number, what: string) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `count` once it has not changed for `quietMs` (at most `timeoutMs` in all). */
async function settled(count: () => number, quietMs: number, timeoutMs: number, what: string): Promise<number> {
  const end = Date.now() + timeoutMs;
  let last = count();
  let changedAt = Date.now();
  while (Date.now() - changedAt < quietMs) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} to settle`);
    await new Promise((r) => setTimeout(r, 20));
    if (count() !== last) [last, changedAt] = [count(), Date.now()];
  }
  return last;
}

const HOUR = 3_600_000;

describe.each(DATABASES)('fair callback delivery on %s', (kind) => {
  let t: TestPlatform;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    // The platform's clock is an hour behind: the orders it creates are past expiredAt by the real clock.
    t = await startTestPlatform(kind, { now: () => Date.now() - HOUR, env: { ALLOW_PRIVATE_CALLBACKS: 'true', CALLBACK_TIMEOUT_SECONDS: '5' } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it("a tarpit merchant's 100 expiring orders delay another merchant's deposit callback by at most 2 s", async () => {
    const tarpit = await startTarpit();
    const attacker = await t.createMerchant('tarpit merchant');
    for (let i = 0; i < 100; i++) {
      const { response } = await t.client(attacker).POST('/partner/v1/platforms/orders', { body: orderRequest(`tarpit-${i}`, { callbackUrl: `${tarpit.url}/cb/${i}` }) });
      expect(response.status).toBe(201);
    }
    expect(await expireOrders(t.db, new Date())).toBe(100);
    const { data: order } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('victim-1', { callbackUrl: `${receiver.url}/ok/victim-1` }) });
    const dispatcher = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: t.platform.config.callbacks, mode: 'sandbox', now: Date.now });
    dispatcher.start();
    try {
      await until(() => tarpit.open() >= SIXTEEN_SLOTS.perMerchant, 5000, 'the tarpit to hold its deliveries');
      const started = Date.now();
      const deposit = await t.signed('POST', `/sandbox/v1/orders/${order!.uuid}/deposits`, { body: '{"amount":5}', headers: { 'Content-Type': 'application/json' } });
      expect(deposit.status).toBe(201);
      const [delivered] = await receiver.waitFor(1, (d) => d.path === '/ok/victim-1', 10_000);
      const delayMs = delivered!.at - started;
      expect(delayMs).toBeLessThanOrEqual(2000);
      // The tarpit never held more than the merchant's share of the 16 slots.
      expect(tarpit.maxOpen()).toBeLessThanOrEqual(SIXTEEN_SLOTS.perMerchant);
      console.info(`tarpit: another merchant's deposit callback arrived ${delayMs} ms after the deposit; the tarpit held at most ${tarpit.maxOpen()} of 16 slots`);
    } finally {
      const stopping = dispatcher.stop();
      await tarpit.close();
      await stopping;
    }
  });

  // Issue 34 (3): four merchants with 100 orders each, calling back to 5 tarpit ports of their own,
  // delayed another merchant's callback by 28-43 s: each got 4 of the 16 slots, so four took all.
  it.each([
    [4, 100, undefined],
    [16, 25, undefined],
    // More colluding merchants than the dispatcher has sockets (here 24, where they would hold 64): the
    // slow delivery open the longest is cut short, and the merchant with nothing in flight goes first.
    [16, 25, 24],
  ])("%i colluding tarpit merchants (%i expiring orders each, 5 ports each; open deliveries at most %s) delay another merchant's callback by at most 2 s", async (gang, orders, maxOpen) => {
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    const tarpits = await Promise.all(Array.from({ length: gang * 5 }, () => startTarpit()));
    for (let m = 0; m < gang; m++) {
      const attacker = await t.createMerchant(`gang ${gang} member ${m}`);
      for (let i = 0; i < orders; i++) {
        const callbackUrl = `${tarpits[m * 5 + (i % 5)]!.url}/cb/${i}`;
        const { response } = await t.client(attacker).POST('/partner/v1/platforms/orders', { body: orderRequest(`gang-${gang}-${m}-${i}`, { callbackUrl }) });
        expect(response.status).toBe(201);
      }
    }
    expect(await expireOrders(t.db, new Date(), [], 10_000)).toBeGreaterThanOrEqual(gang * orders);
    const label = `victim-of-${gang}-${maxOpen ?? 'default'}`;
    const victim = await t.createMerchant(label);
    const { data: order } = await t.client(victim).POST('/partner/v1/platforms/orders', { body: orderRequest(label, { callbackUrl: `${receiver.url}/ok/${label}` }) });
    const dispatcher = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: t.platform.config.callbacks, mode: 'sandbox', now: Date.now, ...(maxOpen ? { maxOpen } : {}) });
    dispatcher.start();
    const held = () => tarpits.reduce((sum, tarpit) => sum + tarpit.open(), 0);
    try {
      // Every member holds its share of connections (more than the 16 slots in all), or the gang holds every socket.
      await until(() => held() >= Math.min(gang * SIXTEEN_SLOTS.perMerchant, maxOpen ?? Infinity), 10_000, 'the gang to hold its shares');
      const started = Date.now();
      const deposit = await t.signed('POST', `/sandbox/v1/orders/${order!.uuid}/deposits`, { body: '{"amount":5}', headers: { 'Content-Type': 'application/json' }, credentials: victim });
      expect(deposit.status).toBe(201);
      const [delivered] = await receiver.waitFor(1, (d) => d.path === `/ok/${label}`, 20_000);
      const delayMs = delivered!.at - started;
      console.info(`${gang} colluding merchants: another merchant's callback arrived ${delayMs} ms after its deposit; the gang held ${held()} connections`);
      expect(delayMs).toBeLessThanOrEqual(2000);
      // No member ever had more than its share open at once.
      const perMember = Array.from({ length: gang }, (_, m) => tarpits.slice(m * 5, m * 5 + 5).reduce((sum, tarpit) => sum + tarpit.maxOpen(), 0));
      expect(Math.max(...perMember)).toBeLessThanOrEqual(5 * SIXTEEN_SLOTS.perMerchant);
    } finally {
      const stopping = dispatcher.stop();
      await Promise.all(tarpits.map((tarpit) => tarpit.close()));
      await stopping;
    }
  });

  it('backs off a destination that keeps not answering: after 3 attempts without an answer its events wait', async () => {
    await t.db.query("UPDATE callback_outbox SET state = 'delivered' WHERE state = 'pending'");
    const tarpit = await startTarpit();
    const merchant = await t.createMerchant('silent receiver');
    for (let i = 0; i < 12; i++) {
      await t.client(merchant).POST('/partner/v1/platforms/orders', { body: orderRequest(`silent-${i}`, { callbackUrl: `${tarpit.url}/cb/${i}` }) });
    }
    await expireOrders(t.db, new Date()); // these 12 (and the earlier test's order)
    const dispatcher = new CallbackDispatcher({
      db: t.db, secrets: t.platform.secrets, config: { ...t.platform.config.callbacks, timeoutSeconds: 1, dispatchIntervalMs: 50 }, mode: 'sandbox', now: Date.now,
    });
    dispatcher.start();
    try {
      await until(() => tarpit.accepted() >= 3, 5000, 'three attempts');
      // Four at once (the destination's share); a slot freed by each of the first two timeouts may be
      // refilled before the third opens the breaker. Then nothing more is tried for its 30 s cooldown.
      // Counted once no attempt has come for 1.5 s, past the 1 s timeout: on a busy machine a refill
      // came after a fixed wait of 1.8 s (CI: 4 counted, then 6).
      const tried = await settled(() => tarpit.accepted(), 1500, 10_000, 'the attempts');
      const most = SIXTEEN_SLOTS.perDestination + SIXTEEN_SLOTS.breakerThreshold - 1;
      expect(tried).toBeGreaterThanOrEqual(SIXTEEN_SLOTS.perDestination);
      expect(tried).toBeLessThanOrEqual(most);
      await new Promise((r) => setTimeout(r, 2000));
      expect(tarpit.accepted()).toBe(tried);
      // This merchant's events only: an earlier test's tarpit may have listened on the same port.
      const [row] = await t.db.query<{ attempted: bigint; waiting: bigint }>(
        `SELECT count(*) FILTER (WHERE attempts > 0)::bigint AS attempted, count(*) FILTER (WHERE attempts = 0)::bigint AS waiting
           FROM callback_outbox WHERE merchant_id = $1 AND url LIKE $2`,
        [merchant.merchantId, `${tarpit.url}/%`],
      );
      expect(Number(row!.attempted)).toBe(tried);
      expect(Number(row!.waiting)).toBe(12 - tried);
      // The waiting events left the due index for the 30 s cooldown (the database's clock), not skipped by each claim.
      const [moved] = await t.db.query<{ later: bigint }>(
        `SELECT count(*)::bigint AS later FROM callback_outbox WHERE merchant_id = $1 AND url LIKE $2 AND attempts = 0 AND next_attempt_at > now() + interval '20 seconds'`,
        [merchant.merchantId, `${tarpit.url}/%`],
      );
      expect(Number(moved!.later)).toBe(12 - tried);
    } finally {
      const stopping = dispatcher.stop();
      await tarpit.close();
      await stopping;
    }
  });
});

describe('the breaker of a destination', () => {
  it('opens after 3 attempts in a row without an answer, lets one probe through after the cooldown, and doubles it after a failed probe', () => {
    let now = 0;
    const fairness = new DeliveryFairness(SIXTEEN_SLOTS, () => now);
    const free = () => fairness.capacity().destinations.free[fairness.capacity().destinations.keys.indexOf('http://silent')];
    for (let i = 0; i < 4; i++) fairness.started('m1', 'http://silent');
    expect(free()).toBe(0);
    expect(fairness.capacity().merchants).toEqual({ ids: ['m1'], free: [0] });
    fairness.finished('m1', 'http://silent', false);
    fairness.finished('m1', 'http://silent', false);
    expect(free()).toBe(2); // two failures: still closed
    fairness.finished('m1', 'http://silent', false);
    expect(free()).toBe(0); // open for 30 s
    fairness.finished('m1', 'http://silent', false); // begun before it opened: the cooldown stays 30 s
    now = 29_999;
    expect(free()).toBe(0);
    now = 30_000;
    expect(free()).toBe(1); // half-open: one probe
    fairness.started('m1', 'http://silent');
    expect(free()).toBe(0);
    fairness.finished('m1', 'http://silent', false);
    now = 30_000 + 59_999;
    expect(free()).toBe(0); // open again, for 60 s
    now = 90_000;
    fairness.started('m1', 'http://silent');
    fairness.finished('m1', 'http://silent', true); // an answer closes it
    expect(fairness.capacity()).toEqual({ merchants: { ids: [], free: [] }, destinations: { keys: [], free: [] } });
  });

  it('caps the cooldown at 10 minutes', () => {
    let now = 0;
    const fairness = new DeliveryFairness(SIXTEEN_SLOTS, () => now);
    const probeFails = () => {
      fairness.started('m', 'd');
      fairness.finished('m', 'd', false);
    };
    for (let i = 0; i < 3; i++) probeFails();
    for (let i = 0; i < 10; i++) {
      now += 600_000;
      probeFails();
    }
    now += 599_999;
    expect(fairness.capacity().destinations.free).toEqual([0]);
    now += 1;
    expect(fairness.capacity().destinations.free).toEqual([1]);
  });
});

describe('the fairness state', () => {
  const failOnce = (fairness: DeliveryFairness, destination: string) => {
    fairness.started('tarpit merchant', destination);
    return fairness.finished('tarpit merchant', destination, false);
  };

  it('sends a claim only the limited keys: a destination that failed once but has its full share is not sent', () => {
    const fairness = new DeliveryFairness(SIXTEEN_SLOTS, () => 0);
    failOnce(fairness, 'http://a.invalid');
    fairness.started('m2', 'http://busy');
    expect(fairness.capacity()).toEqual({ merchants: { ids: ['m2'], free: [3] }, destinations: { keys: ['http://busy'], free: [3] } });
  });

  it('forgets a breaker below the threshold after a cooldown, and an opened one unused for the longest cooldown', () => {
    let now = 0;
    const fairness = new DeliveryFairness(SIXTEEN_SLOTS, () => now);
    failOnce(fairness, 'http://once');
    for (let i = 0; i < 3; i++) failOnce(fairness, 'http://silent');
    now = 29_999;
    fairness.capacity();
    expect(fairness.breakerCount).toBe(2);
    now = 30_000;
    expect(fairness.capacity().destinations).toEqual({ keys: ['http://silent'], free: [1] }); // half-open
    expect(fairness.breakerCount).toBe(1);
    now = 30_000 + 599_999;
    fairness.capacity();
    expect(fairness.breakerCount).toBe(1);
    now = 630_000;
    expect(fairness.capacity().destinations).toEqual({ keys: [], free: [] });
    expect(fairness.breakerCount).toBe(0);
  });

  it('10,000 distinct destinations that never answer leave at most maxBreakers breakers, and a claim is sent no more keys', () => {
    const now = 0;
    const fairness = new DeliveryFairness(SIXTEEN_SLOTS, () => now);
    let opened = 0;
    for (let i = 0; i < 10_000; i++) {
      for (let attempt = 0; attempt < 3; attempt++) if (failOnce(fairness, `http://nx-${i}.invalid`) !== undefined) opened++;
    }
    expect(opened).toBe(10_000); // each one's breaker opened once: its events were moved past the cooldown
    expect(fairness.breakerCount).toBe(SIXTEEN_SLOTS.maxBreakers);
    const { destinations, merchants } = fairness.capacity();
    expect(destinations.keys).toHaveLength(SIXTEEN_SLOTS.maxBreakers);
    expect(destinations.keys[0]).toBe('http://nx-9000.invalid'); // the least recently used were forgotten
    expect(new Set(destinations.free)).toEqual(new Set([0]));
    expect(merchants.ids).toEqual([]);
  });

  it('10,000 distinct destinations that each failed once send a claim no keys', () => {
    const fairness = new DeliveryFairness(SIXTEEN_SLOTS, () => 0);
    for (let i = 0; i < 10_000; i++) expect(failOnce(fairness, `http://nx-${i}.invalid`)).toBeUndefined();
    expect(fairness.breakerCount).toBe(SIXTEEN_SLOTS.maxBreakers);
    expect(fairness.capacity()).toEqual({ merchants: { ids: [], free: [] }, destinations: { keys: [], free: [] } });
  });
});
