// The sandbox's withdrawal helper, POST /sandbox/v1/withdrawals (contract 1.5.0, issue 54 item 11): on the
// create's own path, it answers and refuses as POST /partner/v1/platforms/withdrawals does for the same
// body, and differs in exactly the three ways its description names: no callbackUrl, no policy of the
// operator, no settlement by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changePolicy } from '../../../src/server/withdrawals/policy.js';
import { SAMPLE_ETHEREUM_DESTINATION, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import type { MerchantCredentials } from '../../../src/server/merchants/secrets.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const HELPER = '/sandbox/v1/withdrawals';
const CREATE = '/partner/v1/platforms/withdrawals';
/** A Tron address that is none of the sandbox wallet's deposit addresses. */
const OTHER_TRON_DESTINATION = 'TByNqmoBHifuCyU3JU774enPZ59SZrdqko';

describe.each(DATABASES)('the sandbox withdrawal helper on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    // The jobs run as `npm start` runs them, the sandbox's settlement after 1 s.
    t = await startTestPlatform(kind, { env: { SANDBOX_WITHDRAWAL_SECONDS: '1' } });
    await t.platform.startJobs();
  });
  afterAll(() => t?.close());

  const post = async (path: string, body: Record<string, unknown>, credentials: MerchantCredentials) => {
    const response = await t.signed('POST', path, { body: JSON.stringify(body), headers: JSON_TYPE, credentials });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const withdrawal = (externalId: string, fields: Record<string, unknown> = {}) =>
    ({ externalId, blockchain: 'Tron', currency: 'USDT', amount: 5, destinationAddress: SAMPLE_TRON_DESTINATION, ...fields });
  /** What changes when a withdrawal is taken: its rows and the books. */
  const books = async () => [await t.count('withdrawals'), await t.count('ledger_entries'), await t.count('callback_outbox')];

  it('takes currency, or leaves it out; answers 201, the same withdrawal with 200 for the same request, 409 for other fields', async () => {
    const merchant = await t.createMerchant('helper answers');
    await t.fund('Tron', 50_000_000n, merchant);
    const created = await post(HELPER, withdrawal('h-1'), merchant);
    expect(created).toMatchObject({ status: 201, body: { externalId: 'h-1', currencyCode: 'USDT', amount: 5, fee: 1, status: 'PENDING', stage: 'queued' } });
    const { currency: _, ...withoutCurrency } = withdrawal('h-1');
    expect(await post(HELPER, withoutCurrency, merchant)).toEqual({ status: 200, body: created.body });
    expect(await post(HELPER, withdrawal('h-1', { amount: 6 }), merchant)).toMatchObject({ status: 409, body: { code: 'external_id_conflict' } });
    expect(await post(HELPER, withdrawal('h-2', { currency: 'BTC' }), merchant)).toMatchObject({ status: 422, body: { code: 'validation_failed', errors: [{ pointer: '/currency' }] } });
    const balances = (await t.client(merchant).getBalances())[0]!;
    expect(balances).toMatchObject({ available: 44_000_000, held: 6_000_000 }); // one withdrawal of 5 + 1 held
  });

  it('refuses as the create refuses the same body, with the same status, code and fields, and changes nothing', async () => {
    const merchant = await t.createMerchant('helper refusals');
    await t.fund('Tron', 3_000_000n, merchant);
    const { data: order } = await t.client(merchant).POST('/partner/v1/platforms/orders', {
      body: { externalId: 'to-itself', blockchain: 'Ethereum', currency: 'USDT', customerId: 'c-1', callbackUrl: 'https://merchant.example/callbacks/deposits' },
    });
    const depositAddress = order!.address;
    const refusals: [string, Record<string, unknown>, number, string][] = [
      ['a low balance', { amount: 2.5 }, 422, 'insufficient_balance'],
      ['under the minimum', { amount: 0.999999 }, 422, 'validation_failed'],
      ['too many decimals', { amount: 1.0000001 }, 422, 'validation_failed'],
      ['a wrong EIP-55 checksum', { blockchain: 'Ethereum', amount: 10, destinationAddress: SAMPLE_ETHEREUM_DESTINATION.replace('C9DF', 'c9DF') }, 422, 'validation_failed'],
      ['a deposit address of the platform', { blockchain: 'Ethereum', amount: 10, destinationAddress: depositAddress }, 422, 'validation_failed'],
    ];
    for (const [name, fields, status, code] of refusals) {
      const before = await books();
      const helper = await post(HELPER, withdrawal(`bad-${name}`, fields), merchant);
      const create = await post(CREATE, withdrawal(`bad-${name}`, fields), merchant);
      expect(helper, name).toMatchObject({ status, body: { code } });
      expect(helper.body, name).toEqual(create.body);
      expect(await books(), name).toEqual(before);
    }
    expect(await post(HELPER, withdrawal('low', { amount: 2.5 }), merchant)).toMatchObject({ body: { available: 3_000_000 } });
    const own = await post(HELPER, withdrawal('own', { blockchain: 'Ethereum', amount: 10, destinationAddress: depositAddress }), merchant);
    expect(own.body.errors).toEqual([{ pointer: '/destinationAddress', detail: "is one of the platform's own deposit addresses" }]);
    expect(own.body.detail).toBe("The withdrawal is refused: destinationAddress is one of the platform's own deposit addresses.");
  });

  it('differs: takes no callbackUrl', async () => {
    const merchant = await t.createMerchant('helper without callbacks');
    await t.fund('Tron', 10_000_000n, merchant);
    const before = await books();
    const refused = await post(HELPER, withdrawal('cb', { callbackUrl: 'https://merchant.example/callbacks/withdrawals' }), merchant);
    expect(refused).toMatchObject({ status: 422, body: { code: 'validation_failed', errors: [{ pointer: '/callbackUrl', detail: 'is not a field of this request' }] } });
    expect(await books()).toEqual(before);
  });

  it("differs: the operator's policy does not apply to it, where the create is refused", async () => {
    const merchant = await t.createMerchant('helper without policy');
    await t.fund('Tron', 50_000_000n, merchant);
    await changePolicy(t.db, merchant.merchantId, { maxAmount: 3_000_000n, dailyLimit: 4_000_000n, approveAbove: 1_000_000n, allowedAddresses: [SAMPLE_TRON_DESTINATION] });
    const body = withdrawal('policy', { amount: 5, destinationAddress: OTHER_TRON_DESTINATION });
    expect(await post(CREATE, body, merchant)).toMatchObject({ status: 422, body: { code: 'validation_failed', errors: [{ pointer: '/amount' }, { pointer: '/destinationAddress' }] } });
    expect(await post(HELPER, body, merchant)).toMatchObject({ status: 201, body: { amount: 5, stage: 'queued' } }); // over maxAmount and approveAbove, not allowed
    // Past the daily limit now (its 5 count): the create is refused for it, the helper is not.
    expect(await post(CREATE, withdrawal('policy-2', { amount: 1 }), merchant)).toMatchObject({ status: 422, body: { code: 'daily_limit_exceeded', available: 0 } });
    expect(await post(HELPER, withdrawal('policy-2', { amount: 1 }), merchant)).toMatchObject({ status: 201 });
  });

  it('differs: it never settles by itself, where a withdrawal of the create does, and waits for the status helper', async () => {
    const merchant = await t.createMerchant('helper that waits');
    await t.fund('Tron', 50_000_000n, merchant);
    const client = t.client(merchant);
    const helper = await post(HELPER, withdrawal('wait-helper'), merchant);
    const created = await post(CREATE, withdrawal('wait-create'), merchant);
    const read = async (uuid: unknown) => (await client.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: uuid as string } } })).data!;
    await expect.poll(async () => (await read(created.body.uuid)).status, { timeout: 20_000, interval: 250 }).toBe('DONE');
    // A few settlement rounds later still: the helper's is where it started.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await read(helper.body.uuid)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    const moved = await t.signed('POST', `${HELPER}/${helper.body.uuid as string}/status`, { body: '{"status":"DONE"}', headers: JSON_TYPE, credentials: merchant });
    expect(await moved.json()).toMatchObject({ status: 'DONE', txId: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(t.errorLogs()).toEqual([]);
  });
});
