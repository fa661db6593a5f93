// Issue 23 (1): one anonymous client cannot lock merchants out. Failed authentications are charged to
// the caller's address only after the lookup or the signature check failed, so a correctly signed
// request of an existing merchant is never refused for others' failures; behind the operator's
// reverse proxies (TRUSTED_PROXIES) the address is the client's, taken from X-Forwarded-For.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../../src/server/config.js';
import { orderRequest } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const ORDER_PATH = '/partner/v2/platforms/orders/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';

/** A request with a made-up API key (well-formed, so it reaches the lookup), from `forwardedFor` if given. */
function madeUp(t: TestPlatform, n: number, forwardedFor?: string) {
  return t.fetch(ORDER_PATH, {
    headers: {
      'X-Api-Key': `pk_test_made_up_${n}`,
      'X-Timestamp': String(Math.floor(Date.now() / 1000)),
      'X-Signature': 'a'.repeat(64),
      ...(forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {}),
    },
  });
}

/**
 * The platform's clock stopped at the test's start: the quotas are fixed windows, so a test that runs
 * across a window's end (a busy machine, a minute boundary) would see its counts start again.
 */
function stoppedClock(): () => number {
  const start = Date.now();
  return () => start;
}

async function statuses(responses: Promise<Response>[]): Promise<number[]> {
  return (await Promise.all(responses)).map((r) => r.status);
}

describe.each(DATABASES)('101 made-up keys from one address, on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind, { env: { RATE_LIMIT: '100/60' }, now: stoppedClock() });
  });
  afterAll(() => t?.close());

  it("spend that address's failure budget, and a real merchant's signed requests from it still succeed", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 101; i++) seen.push((await madeUp(t, i)).status);
    expect(seen.slice(0, 100)).toEqual(Array(100).fill(401));
    expect(seen[100]).toBe(429);
    // A merchant whose key no cache holds yet: its lookup is not charged, and it is not refused.
    const merchant = await t.createMerchant('never locked out');
    const created = await t.client(merchant).POST('/partner/v1/platforms/orders', { body: orderRequest('after-the-flood') });
    expect(created.response.status).toBe(201);
    const read = await t.client(merchant).GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: created.data!.uuid } } });
    expect(read.response.status).toBe(200);
    // Failures stay refused from that address, a real key with a wrong signature included.
    expect((await madeUp(t, 1000)).status).toBe(429);
    const forged = await t.signed('GET', ORDER_PATH, { credentials: { ...merchant, apiSecret: 'sk_test_wrong' } });
    expect(forged.status).toBe(429);
    // The merchant's own mistake, a clock 10 minutes off, is answered precisely (its budget, not the address's).
    const skewed = await t.signed('GET', ORDER_PATH, { credentials: merchant, timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(skewed.status).toBe(401);
    expect(((await skewed.json()) as { code: string }).code).toBe('timestamp_out_of_window');
    // A stale timestamp with a signature that is not the merchant's stays the address's failure.
    const staleForged = await t.signed('GET', ORDER_PATH, { credentials: { ...merchant, apiSecret: 'sk_test_wrong' }, timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(staleForged.status).toBe(429);
  });
});

describe('behind a trusted proxy (TRUSTED_PROXIES=127.0.0.1)', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('pglite', { env: { RATE_LIMIT: '100/60', TRUSTED_PROXIES: '127.0.0.1' }, now: stoppedClock() });
  });
  afterAll(() => t?.close());

  it('charges the client X-Forwarded-For names, not the proxy every client shares', async () => {
    const attacker = '203.0.113.7';
    const seen = await statuses(Array.from({ length: 101 }, (_, i) => madeUp(t, i, attacker)));
    expect(seen.filter((s) => s === 401)).toHaveLength(100);
    expect(seen.filter((s) => s === 429)).toHaveLength(1);
    // Another client behind the same proxy has a budget of its own.
    expect((await madeUp(t, 500, '198.51.100.20')).status).toBe(401);
    // A real merchant, even from the attacker's own address: 2xx.
    const merchant = await t.createMerchant('behind the proxy');
    const created = await t.signed('POST', '/partner/v1/platforms/orders', {
      body: JSON.stringify(orderRequest('via-proxy')),
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': attacker },
      credentials: merchant,
    });
    expect(created.status).toBe(201);
  });

  it('takes the nearest untrusted address: an address the client wrote to the left does not escape the budget', async () => {
    const client = '192.0.2.44';
    const seen = await statuses(Array.from({ length: 101 }, (_, i) => madeUp(t, 2000 + i, `10.9.${i}.1, ${client}`)));
    expect(seen.filter((s) => s === 429)).toHaveLength(1);
    expect((await madeUp(t, 3000, `10.9.250.1, ${client}`)).status).toBe(429);
  });
});

describe('without a trusted proxy (the default)', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('pglite', { env: { RATE_LIMIT: '5/60' }, now: stoppedClock() });
  });
  afterAll(() => t?.close());

  it('ignores X-Forwarded-For: a caller cannot name a new address for each attempt', async () => {
    const seen = await statuses(Array.from({ length: 6 }, (_, i) => madeUp(t, i, `198.51.100.${i + 1}`)));
    expect(seen.filter((s) => s === 429)).toHaveLength(1);
    expect((await madeUp(t, 99, '198.51.100.99')).status).toBe(429);
  });
});

describe('the TRUSTED_PROXIES setting', () => {
  it('takes IP addresses and CIDR ranges, and refuses anything else by name', () => {
    expect(readConfig({ TRUSTED_PROXIES: '10.0.0.5, 192.168.0.0/16,::1,fd00::/8' }, {}).trustedProxies).toEqual(['10.0.0.5', '192.168.0.0/16', '::1', 'fd00::/8']);
    expect(readConfig({}, { 'trusted-proxies': '127.0.0.1' }).trustedProxies).toEqual(['127.0.0.1']);
    expect(readConfig({}, {}).trustedProxies).toEqual([]);
    for (const bad of ['proxy.internal', '10.0.0.0/33', '::/129', '10.0.0.1/8/8', '10.0.0.0/']) {
      expect(() => readConfig({ TRUSTED_PROXIES: bad }, {}), bad).toThrow(ConfigError);
      expect(() => readConfig({ TRUSTED_PROXIES: bad }, {}), bad).toThrow(/TRUSTED_PROXIES/);
    }
  });
});
