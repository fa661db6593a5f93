// Crediting deposits through the sandbox helper (src/server/orders/deposits.ts, sandbox-deposits.ts): exact
// sums, the order's status, and one signed callback a deposit, through the real dispatcher to a receiver
// on loopback; and what is refused, crediting nothing.
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyCallback, type DepositOrderCallback } from '../../../src/client/index.js';
import { createContractAjv } from '../../../src/server/http/contract-ajv.js';
import { T0, useCallbackPlatform, type CallbackPlatform } from '../../support/callback-platform.js';
import type { Receiver } from '../../support/receiver.js';
import { DATABASES, type TestPlatform } from '../../support/platform.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const validCallback = createContractAjv().compile({ $ref: 'contract.json#/components/schemas/DepositOrderCallback' });
const contract = JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, { description: string }> } };

describe.each(DATABASES)('crediting deposits on %s', (kind) => {
  let c: CallbackPlatform, t: TestPlatform, receiver: Receiver, clock = T0;
  const { deposit } = useCallbackPlatform(kind, { now: () => clock, started: (started) => ({ t, receiver } = c = started), resetClock: () => (clock = T0) });

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

  it('answers 404 for another merchant\'s order and 422 for a non-positive amount, crediting nothing', async () => {
    const order = await c.createOrder('dep-2');
    const deposits = await t.count('deposits');
    const other = await t.createMerchant();
    const foreign = await t.signed('POST', `/sandbox/v1/orders/${order.uuid}/deposits`, { body: '{"amount":5}', headers: JSON_TYPE, credentials: other });
    expect(foreign.status).toBe(404);
    for (const amount of [0, -1, 1.5, '5']) {
      const response = await t.signed('POST', `/sandbox/v1/orders/${order.uuid}/deposits`, { body: JSON.stringify({ amount }), headers: JSON_TYPE });
      expect(response.status).toBe(422);
    }
    expect(await t.count('deposits')).toBe(deposits);
    // A total past 2^53 − 1 could not be written exactly: a 422, not a 500, and nothing changes.
    expect((await deposit(order.uuid, Number.MAX_SAFE_INTEGER - 10)).status).toBe(201);
    const over = await deposit(order.uuid, 11);
    expect(over.status).toBe(422);
    expect((await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } })).data!.receivedAmount).toBe(Number.MAX_SAFE_INTEGER - 10);
  });
});
