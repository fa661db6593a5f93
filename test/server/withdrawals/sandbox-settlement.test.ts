// Issue 46, the sandbox: a withdrawal asked for through the API settles by itself after
// SANDBOX_WITHDRAWAL_SECONDS, DONE with a made-up txId, its event in the feed and a signed callback that a
// Standard Webhooks library verifies, delivered by the platform's own jobs (as `npm start` runs them).
// One awaiting approval settles only once approved; one the helper failed never settles.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWithdrawalCallback } from '../../../src/client/index.js';
import { changePolicy } from '../../../src/server/withdrawals/policy.js';
import { SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { startReceiver, type Receiver } from '../../support/receiver.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };

describe.each(DATABASES)('sandbox withdrawals settling by themselves, on %s', (kind) => {
  let t: TestPlatform;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestPlatform(kind, { env: { SANDBOX_WITHDRAWAL_SECONDS: '1', ALLOW_PRIVATE_CALLBACKS: 'true' } });
    await t.fund('Tron', 100_000_000n);
    await t.platform.startJobs();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  async function create(externalId: string, amount = 12.5) {
    const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', {
      headers: JSON_TYPE,
      body: JSON.stringify({ externalId, blockchain: 'Tron', currency: 'USDT', amount, destinationAddress: SAMPLE_TRON_DESTINATION, callbackUrl: `${receiver.url}/ok/${externalId}` }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { uuid: string; status: string; stage: string };
  }

  it('reaches DONE with a txId, an event in the feed and a callback that verifies', async () => {
    const created = await create('settles-1');
    expect(created).toMatchObject({ status: 'PENDING', stage: 'queued' });
    const [delivery] = await receiver.waitFor(1, (d) => d.path === '/ok/settles-1', 15_000);
    const headers = delivery!.headers as Record<string, string>;
    const body = new Webhook(t.merchant.callbackSecret).verify(delivery!.body, headers) as { event: string; sequence: number; withdrawal: { txId: string; status: string } };
    expect(body).toMatchObject({ event: 'withdrawal.done', sequence: 1, withdrawal: { uuid: created.uuid, status: 'DONE', txId: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(await verifyWithdrawalCallback(delivery!.body, headers, t.merchant.callbackSecret)).toEqual(body);

    const read = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: created.uuid } } });
    expect(read.data).toEqual(body.withdrawal);
    const feed = await t.client().GET('/partner/v2/platforms/events', { params: { query: { withdrawalUuid: created.uuid } } });
    expect(feed.data!.data).toEqual([expect.objectContaining({ id: headers['webhook-id'], type: 'withdrawal.done', withdrawalUuid: created.uuid })]);
    // The feed's data is the callback's body, byte for byte.
    const raw = await (await t.signed('GET', `/partner/v2/platforms/events?withdrawalUuid=${created.uuid}`)).text();
    expect(raw).toContain(`"data":${delivery!.body}`);
    const balances = await t.client().GET('/partner/v1/platforms/balances');
    expect(balances.data!.data[0]).toMatchObject({ blockchain: 'Tron', held: 0, withdrawn: 13_500_000 });
  });

  it('settles one awaiting approval only once approved, and never one the helper failed', async () => {
    await changePolicy(t.db, t.merchant.merchantId, { approveAbove: 20_000_000n });
    const large = await create('needs-approval', 25);
    expect(large.stage).toBe('awaiting_approval');
    const failed = await create('helper-fails');
    const helper = await t.signed('POST', `/sandbox/v1/withdrawals/${failed.uuid}/status`, { headers: JSON_TYPE, body: '{"status":"FAILED"}' });
    expect(await helper.json()).toMatchObject({ status: 'FAILED', failureReason: 'Failed by the sandbox helper.' });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const waiting = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: large.uuid } } });
    expect(waiting.data).toMatchObject({ status: 'PENDING', stage: 'awaiting_approval' });

    expect(await t.platform.withdrawals.move(large.uuid, { to: 'approved' })).toMatchObject({ stage: 'queued' });
    const events = await receiver.waitFor(2, (d) => d.path === '/ok/needs-approval', 15_000);
    expect(events.map((d) => JSON.parse(d.body) as { event: string; sequence: number }).map((e) => [e.event, e.sequence])).toEqual([
      ['withdrawal.updated', 1],
      ['withdrawal.done', 2],
    ]);
    const after = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: failed.uuid } } });
    expect(after.data).toMatchObject({ status: 'FAILED' });
    expect(after.data).not.toHaveProperty('txId');
  });
});
