// The sandbox test helpers: deposits a merchant can simulate (its withdrawals: test/server/withdrawals/), only in sandbox mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { startReceiver } from '../../support/receiver.js';

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

  // Issue 53 (9): the amount as written, not as the double JSON.parse reads it as.
  it('reads a deposit amount as written: whole smallest units, an exponent where exact', async () => {
    const client = t.client();
    const { data: order } = await client.POST('/partner/v1/platforms/orders', { body: orderRequest('sb-written', { blockchain: 'Tron' }) });
    const deposit = (amountJson: string) => t.signed('POST', `/sandbox/v1/orders/${order!.uuid}/deposits`, { body: `{"amount":${amountJson}}`, headers: JSON_TYPE });
    const before = await t.count('deposits');
    const refused = await deposit('1.0000000000000001'); // the double 1
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/amount', detail: 'must be a whole number of smallest units (2500000 is 2.5 USDT)' }] });
    expect(await t.count('deposits')).toBe(before);
    expect((await deposit('2.5e7')).status).toBe(201);
    const { data: read } = await client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order!.uuid } } });
    expect(read!.receivedAmount).toBe(25_000_000);
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

// Issue 49 (1): a sandbox that only its own machine reaches (it listens on loopback, and no
// TRUSTED_PROXIES or PUBLIC_URL says it is served to others: npm start's default) accepts receivers on
// that machine, as a merchant testing on a laptop needs. One that others reach keeps refusing them
// (issue 23 (6): a callbackUrl aimed at the host's own services would be a blind SSRF) unless its
// operator sets ALLOW_PRIVATE_CALLBACKS. These URLs are only validated (a 422 at creation), never
// contacted, but for the receiver below.
describe('receivers on the sandbox\'s own machine', () => {
  const shared = {} as { loopbackOnly: TestPlatform; exposed: TestPlatform; allowed: TestPlatform; switchedOff: TestPlatform };
  beforeAll(async () => {
    [shared.loopbackOnly, shared.exposed, shared.allowed, shared.switchedOff] = await Promise.all([
      startTestPlatform('pglite'), // HOST 127.0.0.1, the default
      startTestPlatform('pglite', { env: { HOST: '0.0.0.0' } }),
      startTestPlatform('pglite', { env: { HOST: '0.0.0.0', ALLOW_PRIVATE_CALLBACKS: 'true' } }),
      startTestPlatform('pglite', { env: { ALLOW_PRIVATE_CALLBACKS: 'false' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all(Object.values(shared).map((t) => t?.close()));
  });

  // Loopback only: the suite names no other address in a callbackUrl, not even one meant to be refused.
  // The private, link-local and metadata ranges (10/8, 172.16/12, 169.254.169.254, fd00::/8, …) are the
  // same classification, tested address by address in test/server/callbacks/destinations.test.ts.
  const onThisMachine = [
    'http://127.0.0.1:2375/v1.41/containers/create', // Docker's API
    'http://localhost:9200/_cluster/settings', // Elasticsearch
    'http://es.localhost:9200/_all', // Elasticsearch, a localhost subdomain
    'http://127.0.0.1:8080/admin/shutdown?confirm=yes', // a local service's admin endpoint
    'http://127.0.0.2:9200/', // anywhere in 127.0.0.0/8
    'http://[::ffff:127.0.0.1]:9200/', // loopback, IPv4-mapped
    'http://[::1]:9200/',
  ];
  const create = (t: TestPlatform, externalId: string, callbackUrl: string) => t.client().POST('/partner/v1/platforms/orders', { body: orderRequest(externalId, { callbackUrl }) });

  it.each(onThisMachine)('accepts %s in a loopback-only sandbox; refuses it with 422 in one others reach, or with the switch off, unless ALLOW_PRIVATE_CALLBACKS is set', async (callbackUrl) => {
    const id = `local-${onThisMachine.indexOf(callbackUrl)}`;
    expect((await create(shared.loopbackOnly, id, callbackUrl)).response.status).toBe(201);
    for (const refusing of [shared.exposed, shared.switchedOff]) {
      const refused = await create(refusing, id, callbackUrl);
      expect(refused.response.status).toBe(422);
      expect(refused.error?.errors?.map((e) => e.pointer)).toEqual(['/callbackUrl']);
      expect(await refusing.count('deposit_orders')).toBe(0);
    }
    expect((await create(shared.allowed, id, callbackUrl)).response.status).toBe(201);
  });

  it('names the way out in the 422: a loopback-only sandbox, or ALLOW_PRIVATE_CALLBACKS', async () => {
    const refused = await create(shared.exposed, 'local-message', 'http://127.0.0.1:9000/cb');
    expect(refused.error?.errors).toEqual([
      {
        pointer: '/callbackUrl',
        detail:
          'must not name a private, loopback, link-local or reserved address; a sandbox that listens on loopback only accepts receivers on its own machine (127.0.0.1, localhost); otherwise its operator sets ALLOW_PRIVATE_CALLBACKS=true, for tests on one machine',
      },
    ]);
  });

  it('still refuses loopback in SIIT form in a loopback-only sandbox: it is translated off the machine', async () => {
    const refused = await create(shared.loopbackOnly, 'siit', 'http://[::ffff:0:7f00:1]/latest/meta-data/');
    expect(refused.response.status).toBe(422);
  });

  it('delivers the callback of a loopback-only sandbox to a receiver on 127.0.0.1 and on localhost', async () => {
    const receiver = await startReceiver();
    const t = shared.loopbackOnly;
    const dispatcher = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: t.platform.config.callbacks, mode: 'sandbox', now: Date.now });
    try {
      for (const [externalId, url] of [['cb-ip', `${receiver.url}/ok/ip`], ['cb-name', `${receiver.url.replace('127.0.0.1', 'localhost')}/ok/name`]] as const) {
        const { data: order } = await create(t, externalId, url);
        await t.client().POST('/sandbox/v1/orders/{uuid}/deposits', { params: { path: { uuid: order!.uuid } }, body: { amount: 2_500_000 } });
      }
      while ((await dispatcher.runOnce()) > 0);
      const delivered = await receiver.waitFor(2);
      expect(delivered.map((d) => d.path).sort()).toEqual(['/ok/ip', '/ok/name']);
      expect(delivered.map((d) => JSON.parse(d.body).event)).toEqual(['order.deposit', 'order.deposit']);
    } finally {
      await receiver.close();
    }
  });

  it('keeps plain http to a public host allowed in the sandbox, on any address', async () => {
    expect((await create(shared.exposed, 'sb-public', 'http://merchant.example/cb')).response.status).toBe(201);
    expect((await create(shared.loopbackOnly, 'sb-public', 'http://merchant.example/cb')).response.status).toBe(201);
  });
});
