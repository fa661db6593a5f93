// The expiry job's clock (issue 23): the database's, one for every instance; and orders of a network that
// has a scan cursor expire by its chain time even in an instance without that network's RPC URL.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { expireOrders } from '../../../src/server/orders/expiry.js';
import { orderRequest } from '../../fixtures/orders.js';
import { T0, useCallbackPlatform, type CallbackPlatform } from '../../support/callback-platform.js';
import type { Receiver } from '../../support/receiver.js';
import { DATABASES, type TestPlatform } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

describe.each(DATABASES)('order expiry on %s', (kind) => {
  let database: { db: Database };
  let merchant: string;
  const status = async (uuid: string) => (await database.db.query<{ status: string }>('SELECT status FROM deposit_orders WHERE uuid = $1', [uuid]))[0]!.status;
  let index = 0;
  async function order(blockchain: 'Tron' | 'Ethereum', expiresIn: string): Promise<string> {
    const uuid = randomUUID();
    index++;
    await database.db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
       VALUES ($1, $2, $3, $4, 'USDT', 'c', 'https://x.example/', $5, $6, 'qr', 1, now() + $7::interval)`,
      [uuid, merchant, `e-${index}`, blockchain, index, `a-${index}`, expiresIn],
    );
    return uuid;
  }

  useDatabase(kind, 'all', async (db) => {
    database = { db };
    merchant = randomUUID();
    await database.db.query("INSERT INTO merchants (id, name, api_key) VALUES ($1, 'm', 'pk_test_expiry')", [merchant]);
  });

  it('expires by the database clock when given no time', async () => {
    const past = await order('Tron', '-1 second');
    const future = await order('Tron', '1 hour');
    expect(await expireOrders(database.db)).toBe(1);
    expect(await status(past)).toBe('EXPIRED');
    expect(await status(future)).toBe('NEW');
  });

  it('never expires the orders of a scanned network by the clock alone, in an instance that does not scan it', async () => {
    const ethereum = await order('Ethereum', '-1 minute');
    await database.db.query("INSERT INTO chain_cursors (network, next_block, scanned_block_time) VALUES ('Ethereum', 10, now() - interval '1 hour')");
    // The expiry job of an instance without ETHEREUM_RPC_URL: no scanned network of its own. Neither the
    // database's clock nor a wall clock past expiredAt expires the order.
    expect(await expireOrders(database.db, undefined, [])).toBe(0);
    expect(await expireOrders(database.db, new Date(Date.now() + 30_000), [])).toBe(0);
    expect(await status(ethereum)).toBe('NEW'); // a payment mined before expiredAt may still be confirmed
    await database.db.query("UPDATE chain_cursors SET scanned_block_time = now() WHERE network = 'Ethereum'");
    expect(await expireOrders(database.db, undefined, [])).toBe(1);
    expect(await status(ethereum)).toBe('EXPIRED');
  });
});

// Through the platform and the real dispatcher to a receiver on loopback: the expiry's callbacks too, a
// late payment after it, and the end of the watch window.
describe.each(DATABASES)('order expiry through the platform on %s', (kind) => {
  let c: CallbackPlatform, t: TestPlatform, receiver: Receiver, clock = T0;
  const { deposit } = useCallbackPlatform(kind, { now: () => clock, started: (started) => ({ t, receiver } = c = started), resetClock: () => (clock = T0) });

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

  it('expires the orders of a scanned network by its chain time, the others by the clock', async () => {
    const status = async (uuid: string) => (await c.t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } })).data!.status;
    const tron = await c.createOrder('chain-time-1');
    const ethereum = (await c.t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('chain-time-2', { blockchain: 'Ethereum', callbackUrl: `${c.receiver.url}/ok/chain-time-2` }) })).data!;
    const expiry = new Date(tron.expiredAt.replace(' ', 'T') + 'Z');
    clock = expiry.getTime() + 60_000;
    await c.t.db.query('INSERT INTO chain_cursors (network, next_block, scanned_block_time) VALUES ($1, 1, $2)', ['Tron', new Date(expiry.getTime() - 1000)]);
    try {
      await expireOrders(c.t.db, new Date(clock), ['Tron']);
      expect(await status(tron.uuid)).toBe('NEW'); // a payment mined before expiredAt may still be confirmed
      expect(await status(ethereum.uuid)).toBe('EXPIRED'); // Ethereum is not scanned here: the clock
      await c.t.db.query("UPDATE chain_cursors SET scanned_block_time = $1 WHERE network = 'Tron'", [expiry]);
      await expireOrders(c.t.db, new Date(clock), ['Tron']);
      expect(await status(tron.uuid)).toBe('EXPIRED');
    } finally {
      await c.t.db.query("DELETE FROM chain_cursors WHERE network = 'Tron'");
    }
    await c.drain();
    const [expired] = await c.receiver.waitFor(1, (d) => d.path === '/ok/chain-time-1');
    expect(JSON.parse(expired!.body)).toMatchObject({ event: 'order.expired', occurredAt: tron.expiredAt, sequence: 1 });
  });
});
