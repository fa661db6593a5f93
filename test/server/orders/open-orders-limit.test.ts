// A merchant's open orders are bounded (MAX_OPEN_ORDERS_PER_MERCHANT): one merchant cannot fill the
// platform's watch list (and its RPC load) for everyone; past the bound a create answers 429
// too_many_open_orders, other merchants are not affected, and a paid order frees its place.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

describe.each(DATABASES)('open orders per merchant on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind, { env: { MAX_OPEN_ORDERS_PER_MERCHANT: '3' } });
  });
  afterAll(() => t?.close());

  it('refuses a create past the bound with 429 too_many_open_orders, for that merchant only', async () => {
    const client = t.client();
    const created = [];
    for (let i = 0; i < 3; i++) {
      const { data, response } = await client.POST('/partner/v1/platforms/orders', { body: orderRequest(`open-${i}`) });
      expect(response.status).toBe(201);
      created.push(data!);
    }
    const refused = await t.signed('POST', '/partner/v1/platforms/orders', { body: JSON.stringify(orderRequest('open-3')), headers: { 'Content-Type': 'application/json' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await refused.json()) as { code: string }).code).toBe('too_many_open_orders');
    expect(await t.count('deposit_orders')).toBe(3);

    // A replay of an existing order is still answered; another merchant creates as before.
    expect((await client.POST('/partner/v1/platforms/orders', { body: orderRequest('open-0') })).response.status).toBe(200);
    const other = await t.createMerchant('other merchant');
    expect((await t.client(other).POST('/partner/v1/platforms/orders', { body: orderRequest('open-0') })).response.status).toBe(201);

    // A paid order is no longer open: its place is free again.
    const paid = await t.signed('POST', `/sandbox/v1/orders/${created[0]!.uuid}/deposits`, { body: JSON.stringify({ amount: created[0]!.minAmount }), headers: { 'Content-Type': 'application/json' } });
    expect(paid.status).toBe(201);
    expect((await client.POST('/partner/v1/platforms/orders', { body: orderRequest('open-3') })).response.status).toBe(201);
  });

  it('holds exactly under concurrency on one instance: 64 creates at once from a fresh merchant, 3 succeed', async () => {
    const merchant = await t.createMerchant('a burst');
    const statuses = await Promise.all(
      Array.from({ length: 64 }, (_, i) => t.client(merchant).POST('/partner/v1/platforms/orders', { body: orderRequest(`burst-${i}`) }).then((r) => r.response.status)),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(61);
    const [row] = await t.db.query<{ n: bigint }>("SELECT count(*)::bigint AS n FROM deposit_orders WHERE merchant_id = $1 AND status = 'NEW'", [merchant.merchantId]);
    expect(Number(row!.n)).toBe(3);
  });
});
