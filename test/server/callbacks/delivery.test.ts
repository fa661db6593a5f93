// One attempt at a callback (src/server/callbacks/delivery.ts): what is recorded when the receiver is not
// listening, redirects or does not answer in time, and the destinations refused once a name is resolved;
// through the real dispatcher to receivers on loopback.
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import { isNonPublicAddress } from '../../../src/server/callbacks/destinations.js';
import { enqueueCallback } from '../../../src/server/callbacks/outbox.js';
import { startReceiver } from '../../support/receiver.js';
import { orderRequest } from '../../fixtures/orders.js';
import { T0, useCallbackPlatform, type CallbackPlatform } from '../../support/callback-platform.js';
import type { Receiver } from '../../support/receiver.js';
import { DATABASES, type TestPlatform } from '../../support/platform.js';

describe.each(DATABASES)('callback delivery on %s', (kind) => {
  let c: CallbackPlatform, t: TestPlatform, receiver: Receiver, clock = T0;
  const { deposit, attempts } = useCallbackPlatform(kind, { now: () => clock, started: (started) => ({ t, receiver } = c = started), resetClock: () => (clock = T0) });

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
});
