// The three operations exactly as contracted, on every database; every response is checked against
// generated/openapi.json by the harness.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signRequest } from '../../../src/signing/index.js';
import { orderRequest, SAMPLE_ETHEREUM_DESTINATION, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';


const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);

describe.each(DATABASES)('the partner API on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind, { now: () => NOW });
  });
  afterAll(() => t?.close());

  describe('create a deposit order', () => {
    it('creates a Tron order (201) with a fresh address, its QR code and the contract defaults', async () => {
      const { data, response } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('create-1') });
      expect(response.status).toBe(201);
      expect(data).toMatchObject({
        blockchain: 'Tron',
        currency: 'USDT',
        targetCurrency: 'USDT',
        customerId: 'cust-42',
        rate: 1,
        status: 'NEW',
        minAmount: 1_000_000,
        expiredAt: '2026-11-21 11:00:00',
      });
      expect(data!.address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
      expect(data).not.toHaveProperty('receivedAmount');
    });

    it('creates an Ethereum order with an EIP-55 address and a 10 USDT minimum', async () => {
      const { data, response } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('create-eth', { blockchain: 'Ethereum' }) });
      expect(response.status).toBe(201);
      expect(data!.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(data!.minAmount).toBe(10_000_000);
    });

    it('replays the same request (200) with the same order and address', async () => {
      const first = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('replay-1') });
      const again = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('replay-1') });
      expect([first.response.status, again.response.status]).toEqual([201, 200]);
      expect(again.data).toEqual(first.data);
    });

    it('refuses the same externalId with other fields (409) and stores nothing', async () => {
      await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('conflict-1') });
      const before = await t.count('deposit_orders');
      for (const change of [{ customerId: 'other' }, { blockchain: 'Ethereum' as const }, { callbackUrl: 'https://merchant.example/other' }]) {
        const { error, response } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('conflict-1', change) });
        expect(response.status).toBe(409);
        expect(error?.code).toBe('external_id_conflict');
      }
      expect(await t.count('deposit_orders')).toBe(before);
    });

    it('keeps externalIds apart per merchant', async () => {
      const other = await t.createMerchant();
      const mine = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('shared-id') });
      const theirs = await t.client(other).POST('/partner/v1/platforms/orders', { body: orderRequest('shared-id') });
      expect([mine.response.status, theirs.response.status]).toEqual([201, 201]);
      expect(theirs.data!.address).not.toBe(mine.data!.address);
    });

    it('never issues an address twice', async () => {
      // Its own creates, side by side on both networks, so that the check has rows to compare when
      // the test runs alone (before, with no other test's orders, it compared 0 with 0).
      const created = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          t.client().POST('/partner/v1/platforms/orders', { body: orderRequest(`unique-address-${i}`, { blockchain: i % 2 ? 'Ethereum' : 'Tron' }) }),
        ),
      );
      expect(created.map((c) => c.response.status)).toEqual(Array(8).fill(201));
      expect(new Set(created.map((c) => c.data!.address)).size).toBe(8);
      const rows = await t.db.query<{ n: bigint; d: bigint }>('SELECT count(*)::bigint AS n, count(DISTINCT address)::bigint AS d FROM deposit_orders');
      expect(rows[0]!.n).toBeGreaterThanOrEqual(8n);
      expect(rows[0]!.n).toBe(rows[0]!.d);
    });
  });

  describe('read a deposit order', () => {
    it('returns the order with receivedAmount', async () => {
      const created = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('read-1') });
      const { data, response } = await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: created.data!.uuid } } });
      expect(response.status).toBe(200);
      expect(data).toEqual({ ...created.data, receivedAmount: 0, unconfirmedDeposits: [] }); // on every read, empty when none (issue 33)
    });

    it('answers 404 for an unknown uuid and for another merchant\'s order', async () => {
      const created = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('read-2') });
      const other = await t.createMerchant();
      for (const [client, uuid] of [
        [t.client(), '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b'],
        [t.client(other), created.data!.uuid],
      ] as const) {
        const { error, response } = await client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } });
        expect(response.status).toBe(404);
        expect(error?.code).toBe('not_found');
      }
    });

    it('answers 422 for a malformed uuid', async () => {
      for (const uuid of ['abc', '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1', "1' OR '1'='1", 'x'.repeat(300)]) {
        const { error, response } = await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } });
        expect(response.status, uuid).toBe(422);
        expect(error?.code).toBe('validation_failed');
      }
    });
  });

  describe('read a withdrawal', () => {
    it('returns every field, the amount exact in whole units', async () => {
      const merchantId = t.merchant.merchantId;
      await t.fund('Tron', 20_000_000n);
      const requested = await t.platform.withdrawals.request({
        merchantId, externalId: 'wd-1', network: 'Tron', currency: 'USDT', amountUnits: 12_500_001n, destinationAddress: SAMPLE_TRON_DESTINATION, callbackUrl: undefined, source: 'operator',
      });
      const created = requested.outcome === 'created' ? requested.row : expect.unreachable(requested.outcome);
      const { data, response } = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: created.uuid } } });
      expect(response.status).toBe(200);
      expect(data).toEqual({
        uuid: created.uuid,
        amount: 12.500001,
        blockchain: 'Tron',
        currencyCode: 'USDT',
        destinationAddress: SAMPLE_TRON_DESTINATION,
        status: 'PENDING',
        stage: 'queued',
        createAt: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        externalId: 'wd-1',
        fee: 1,
      });
      expect(await t.platform.withdrawals.move(created.uuid, { to: 'DONE', txId: undefined })).toMatchObject({ status: 'DONE' });
      expect(await t.platform.withdrawals.move(created.uuid, { to: 'FAILED', reason: 'late' })).toMatchObject({ refused: 'it is DONE, which is final' });
      const after = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: created.uuid } } });
      expect(after.data?.status).toBe('DONE');
    });

    it('answers 404 for another merchant\'s withdrawal', async () => {
      await t.fund('Ethereum', 20_000_000n);
      const requested = await t.platform.withdrawals.request({
        merchantId: t.merchant.merchantId, externalId: 'wd-2', network: 'Ethereum', currency: 'USDT', amountUnits: 10_000_000n, destinationAddress: SAMPLE_ETHEREUM_DESTINATION, callbackUrl: undefined, source: 'operator',
      });
      const created = requested.outcome === 'created' ? requested.row : expect.unreachable(requested.outcome);
      const other = await t.createMerchant();
      const { response } = await t.client(other).GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: created.uuid } } });
      expect(response.status).toBe(404);
    });
  });

  describe('authentication (docs/design.md, Request authentication)', () => {
    const path = '/partner/v2/platforms/orders/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';

    async function problem(response: Response) {
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      return (await response.json()) as { code: string; serverTime?: number };
    }

    it('names a missing or malformed header', async () => {
      const incomplete: Record<string, string>[] = [{}, { 'X-Api-Key': t.merchant.apiKey }, { 'X-Api-Key': 'k', 'X-Timestamp': 'soon', 'X-Signature': 'a'.repeat(64) }];
      for (const headers of incomplete) {
        const response = await t.fetch(path, { headers });
        expect(response.status).toBe(401);
        expect((await problem(response)).code).toBe('missing_credentials');
      }
      const malformed = await t.signed('GET', path, { headers: { 'X-Signature': 'A'.repeat(64) } });
      expect((await problem(malformed)).code).toBe('missing_credentials');
    });

    it('refuses an unknown API key', async () => {
      const response = await t.signed('GET', path, { credentials: { ...t.merchant, apiKey: 'pk_test_nobody' } });
      expect(response.status).toBe(401);
      expect((await problem(response)).code).toBe('unknown_api_key');
    });

    it('refuses a signature by another secret, over another target or another body', async () => {
      const wrongSecret = await t.signed('GET', path, { credentials: { ...t.merchant, apiSecret: 'sk_test_wrong' } });
      expect((await problem(wrongSecret)).code).toBe('invalid_signature');
      const signature = (await signRequest({ secret: t.merchant.apiSecret, timestamp: NOW / 1000, method: 'GET', target: path + '?x=1' }));
      const otherTarget = await t.fetch(path, { headers: { 'X-Api-Key': t.merchant.apiKey, 'X-Timestamp': String(NOW / 1000), 'X-Signature': signature } });
      expect((await problem(otherTarget)).code).toBe('invalid_signature');
    });

    it('refuses a timestamp outside ±300 s and tells the server time', async () => {
      for (const skew of [-301, 301]) {
        const response = await t.signed('GET', path, { timestamp: NOW / 1000 + skew });
        expect(response.status).toBe(401);
        expect(await problem(response)).toMatchObject({ code: 'timestamp_out_of_window', serverTime: NOW / 1000 });
      }
      expect((await t.signed('GET', path, { timestamp: NOW / 1000 - 300 })).status).toBe(404);
    });

    it('verifies the raw body bytes: a re-serialized body fails', async () => {
      const body = JSON.stringify(orderRequest('raw-1'));
      const spaced = JSON.stringify(orderRequest('raw-1'), null, 1);
      const signature = await signRequest({ secret: t.merchant.apiSecret, timestamp: NOW / 1000, method: 'POST', target: '/partner/v1/platforms/orders', body });
      const response = await t.fetch('/partner/v1/platforms/orders', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': t.merchant.apiKey, 'X-Timestamp': String(NOW / 1000), 'X-Signature': signature },
        body: spaced,
      });
      expect((await problem(response)).code).toBe('invalid_signature');
      expect((await t.signed('POST', '/partner/v1/platforms/orders', { body: spaced, headers: { 'Content-Type': 'application/json' } })).status).toBe(201);
    });

    it('announces the rate limit on every response', async () => {
      const response = await t.signed('GET', path);
      expect(response.headers.get('ratelimit-policy')).toBe('"default";q=100000;w=60');
      expect(response.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
    });
  });
});

describe('rate limits per API key', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('pglite', { env: { RATE_LIMIT: '3/60' }, now: () => NOW });
  });
  afterAll(() => t?.close());

  it('refuses the request over the quota with 429, Retry-After and the RateLimit fields', async () => {
    const path = '/partner/v2/platforms/orders/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      const response = await t.signed('GET', path);
      expect(response.status).toBe(404);
      remaining.push(response.headers.get('ratelimit'));
    }
    expect(remaining).toEqual(['"default";r=2;t=60', '"default";r=1;t=60', '"default";r=0;t=60']);
    const refused = await t.signed('GET', path);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
    expect(((await refused.json()) as { code: string }).code).toBe('rate_limited');
    const other = await t.createMerchant();
    expect((await t.signed('GET', path, { credentials: other })).status).toBe(404); // quotas are per key
  });
});

describe('failed authentication', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('pglite', { env: { RATE_LIMIT: '3/60' }, now: () => NOW });
  });
  afterAll(() => t?.close());

  it("is charged to the caller's address once the lookup has failed, and an unknown key is looked up once", async () => {
    const path = '/partner/v2/platforms/orders/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';
    const lookups = vi.spyOn(t.platform.merchants, 'byApiKey');
    const guess = (apiKey: string) => t.fetch(path, { headers: { 'X-Api-Key': apiKey, 'X-Timestamp': String(NOW / 1000), 'X-Signature': 'a'.repeat(64) } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await guess('pk_guess')).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(lookups).toHaveBeenCalledTimes(1); // the miss is remembered
    // Made-up keys once the address's budget is spent: refused, each looked up once (the same key
    // asked for at once shares one lookup), since an existing merchant's key must still get through.
    const flood = await Promise.all(Array.from({ length: 20 }, (_, i) => guess(`pk_made_up_${i % 10}`)));
    expect(flood.map((r) => r.status)).toEqual(Array(20).fill(429));
    expect(lookups).toHaveBeenCalledTimes(11);
    await Promise.all(Array.from({ length: 10 }, (_, i) => guess(`pk_made_up_${i}`)));
    expect(lookups).toHaveBeenCalledTimes(11);
  });
});
