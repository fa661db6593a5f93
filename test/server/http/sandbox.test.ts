// The sandbox test helpers: deposits a merchant can simulate (its withdrawals: test/server/withdrawals/), only in sandbox mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const withdrawal = { externalId: 'sb-wd-1', amount: 12.5, blockchain: 'Tron', destinationAddress: 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK' };

describe.each(DATABASES)('sandbox helpers on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
  });
  afterAll(() => t?.close());

  it('credits a deposit once per Idempotency-Key, and a replayed signed request once', async () => {
    const client = t.client();
    const { data: order } = await client.POST('/partner/v1/platforms/orders', { body: orderRequest('sb-idem', { blockchain: 'Ethereum' }) });
    const path = `/sandbox/v1/orders/${order!.uuid}/deposits`;
    const deposit = (amount: number, headers: Record<string, string> = {}, timestamp?: number) =>
      t.signed('POST', path, { body: JSON.stringify({ amount }), headers: { ...JSON_TYPE, ...headers }, ...(timestamp ? { timestamp } : {}) });
    const received = async () => (await client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order!.uuid } } })).data!.receivedAmount;

    const first = await deposit(1_000_000, { 'Idempotency-Key': 'dep-1' });
    expect(first.status).toBe(201);
    const retries = await Promise.all([1, 2, 3].map(() => deposit(1_000_000, { 'Idempotency-Key': 'dep-1' })));
    expect(retries.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(((await retries[0]!.json()) as { receivedAmount: number }).receivedAmount).toBe(1_000_000);
    const reused = await deposit(2_000_000, { 'Idempotency-Key': 'dep-1' });
    expect(reused.status).toBe(409);
    expect(((await reused.json()) as { code: string }).code).toBe('idempotency_key_reused');
    expect((await deposit(1_000_000, { 'Idempotency-Key': 'dep-2' })).status).toBe(201);
    expect(await received()).toBe(2_000_000);

    // Concurrent first requests with one key: one credit.
    const racing = await Promise.all(Array.from({ length: 5 }, () => deposit(500_000, { 'Idempotency-Key': 'dep-race' })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(await received()).toBe(2_500_000);

    // Without a key: the same signed request replayed credits once; a new signature is a new deposit.
    const timestamp = Math.floor(Date.now() / 1000);
    expect((await deposit(100, {}, timestamp)).status).toBe(201);
    expect((await deposit(100, {}, timestamp)).status).toBe(200);
    expect((await deposit(100, {}, timestamp - 1)).status).toBe(201);
    expect(await received()).toBe(2_500_200);
    expect((await deposit(1, { 'Idempotency-Key': 'has space' })).status).toBe(422);
    expect(await received()).toBe(2_500_200);
  });
});

describe('in live mode', () => {
  it('the sandbox helpers do not exist', async () => {
    const live = await startTestPlatform('pglite', {
      env: { PARTNER_API_MODE: 'live', PUBLIC_URL: 'https://pay.partner.example', TRON_XPUB: hdVectors.wallets[1]!.Tron.xpub, ETHEREUM_XPUB: hdVectors.wallets[1]!.Ethereum.xpub },
    });
    try {
      const response = await live.signed('POST', '/sandbox/v1/withdrawals', { body: JSON.stringify(withdrawal), headers: JSON_TYPE });
      expect(response.status).toBe(404);
      expect(await live.count('withdrawals')).toBe(0);
    } finally {
      await live.close();
    }
  });
});

// Issue 23 (6): a sandbox on loopback may be served to others through a proxy, so listening on
// loopback turns nothing on; the operator's ALLOW_PRIVATE_CALLBACKS alone does. These URLs are only
// validated (a 422 at creation), never contacted.
describe('a sandbox on loopback (the default HOST)', () => {
  const shared = {} as { loopback: TestPlatform; allowed: TestPlatform };
  beforeAll(async () => {
    shared.loopback = await startTestPlatform('pglite', { env: { HOST: '127.0.0.1' } });
    shared.allowed = await startTestPlatform('pglite', { env: { HOST: '127.0.0.1', ALLOW_PRIVATE_CALLBACKS: 'true' } });
  });
  afterAll(async () => {
    await shared.loopback?.close();
    await shared.allowed?.close();
  });

  // Loopback only: the suite names no other address in a callbackUrl, not even one meant to be refused.
  // The private, link-local and metadata ranges (10/8, 172.16/12, 169.254.169.254, fd00::/8, …) are the
  // same classification, tested address by address in test/server/callbacks/destinations.test.ts.
  const internal = [
    'http://127.0.0.1:2375/v1.41/containers/create', // Docker's API
    'http://localhost:9200/_cluster/settings', // Elasticsearch
    'http://es.localhost:9200/_all', // Elasticsearch, a localhost subdomain
    'http://127.0.0.1:8080/admin/shutdown?confirm=yes', // a local service's admin endpoint
    'http://127.0.0.2:9200/', // anywhere in 127.0.0.0/8
    'http://[::ffff:0:7f00:1]/latest/meta-data/', // loopback in SIIT form
    'http://[::ffff:127.0.0.1]:9200/', // loopback, IPv4-mapped
    'http://[::1]:9200/',
  ];

  it.each(internal)('refuses %s with 422 and stores nothing, unless ALLOW_PRIVATE_CALLBACKS is set', async (callbackUrl) => {
    const response = await shared.loopback.client().POST('/partner/v1/platforms/orders', { body: orderRequest(`ssrf-${internal.indexOf(callbackUrl)}`, { callbackUrl }) });
    expect(response.response.status).toBe(422);
    expect(response.error?.errors?.map((e) => e.pointer)).toEqual(['/callbackUrl']);
    expect(await shared.loopback.count('deposit_orders')).toBe(0);
    expect((await shared.allowed.client().POST('/partner/v1/platforms/orders', { body: orderRequest(`ssrf-${internal.indexOf(callbackUrl)}`, { callbackUrl }) })).response.status).toBe(201);
  });

  it('keeps plain http to a public host allowed in the sandbox, on any address', async () => {
    const exposed = await startTestPlatform('pglite', { env: { HOST: '0.0.0.0' } });
    try {
      expect((await exposed.client().POST('/partner/v1/platforms/orders', { body: orderRequest('sb-public', { callbackUrl: 'http://merchant.example/cb' }) })).response.status).toBe(201);
      expect((await shared.loopback.client().POST('/partner/v1/platforms/orders', { body: orderRequest('sb-public', { callbackUrl: 'http://merchant.example/cb' }) })).response.status).toBe(201);
    } finally {
      await exposed.close();
    }
  });
});
