// GET /partner/v1/platforms/withdrawals/terms (contract 1.5.0, issue 54 item 10): the terms a merchant
// reads are the ones the create applies, at their edges: the minimum and the maximum accepted exactly
// and refused one smallest unit beyond, the approval level, the daily limit's remainder across networks
// going down with each withdrawal (the sandbox helper's too) and up again when one fails, the allowed
// destinations; in whole units as withdrawal amounts are written. Bad input is a problem that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changePolicy } from '../../../src/server/withdrawals/policy.js';
import { SAMPLE_ETHEREUM_DESTINATION, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, livePlatform, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const TERMS = '/partner/v1/platforms/withdrawals/terms';
const USDT = 1_000_000n;
/** A Tron address that is none of the sandbox wallet's deposit addresses, and not on the allowed list below. */
const OTHER_TRON_DESTINATION = 'TByNqmoBHifuCyU3JU774enPZ59SZrdqko';

describe.each(DATABASES)('withdrawal terms on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
  });
  afterAll(() => t?.close());

  /** A merchant of its own, funded on Tron, with the client that reads its terms and asks for withdrawals. */
  async function merchant(name: string, funds = 2_000n * USDT) {
    const credentials = await t.createMerchant(name);
    if (funds > 0n) await t.fund('Tron', funds, credentials);
    const client = t.client(credentials);
    const terms = async () => {
      const list = await client.getWithdrawalTerms();
      return Object.fromEntries(list.map((entry) => [entry.blockchain, entry]));
    };
    const withdraw = async (externalId: string, amount: string, fields: Record<string, string> = {}) => {
      const body = `{"externalId":"${externalId}","blockchain":"Tron","currency":"USDT","amount":${amount},"destinationAddress":"${SAMPLE_TRON_DESTINATION}"${Object.entries(fields).map(([k, v]) => `,"${k}":"${v}"`).join('')}}`;
      const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', { body, headers: JSON_TYPE, credentials });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    return { credentials, client, terms, withdraw };
  }

  it("answers the network's fee and minimum and no limit of the merchant's own in the sandbox, per network in order", async () => {
    const { client } = await merchant('no limits', 0n);
    expect(await client.getWithdrawalTerms()).toEqual([
      { blockchain: 'Tron', currency: 'USDT', enabled: true, fee: 1, minimum: 1, maximum: null, dailyLimit: null, dailyLeft: null, approvalAbove: null, allowedDestinations: [] },
      { blockchain: 'Ethereum', currency: 'USDT', enabled: true, fee: 5, minimum: 10, maximum: null, dailyLimit: null, dailyLeft: null, approvalAbove: null, allowedDestinations: [] },
    ]);
  });

  it('holds the create to them at every edge, dailyLeft going down with each withdrawal and up when one fails', async () => {
    const m = await merchant('limited');
    await changePolicy(t.db, m.credentials.merchantId, { maxAmount: 500n * USDT, dailyLimit: 900n * USDT, approveAbove: 100n * USDT, allowedAddresses: [SAMPLE_TRON_DESTINATION] });
    expect(await m.terms()).toEqual({
      Tron: { blockchain: 'Tron', currency: 'USDT', enabled: true, fee: 1, minimum: 1, maximum: 500, dailyLimit: 900, dailyLeft: 900, approvalAbove: 100, allowedDestinations: [SAMPLE_TRON_DESTINATION] },
      // The allowed destinations name no Ethereum address: nothing can be paid there.
      Ethereum: { blockchain: 'Ethereum', currency: 'USDT', enabled: false, fee: 5, minimum: 10, maximum: 500, dailyLimit: 900, dailyLeft: 900, approvalAbove: 100, allowedDestinations: [] },
    });
    const ethereum = await t.signed('POST', '/partner/v1/platforms/withdrawals', {
      credentials: m.credentials, headers: JSON_TYPE,
      body: JSON.stringify({ externalId: 'eth-1', blockchain: 'Ethereum', currency: 'USDT', amount: 10, destinationAddress: SAMPLE_ETHEREUM_DESTINATION }),
    });
    expect(await ethereum.json()).toMatchObject({ status: 422, code: 'validation_failed', errors: [{ pointer: '/destinationAddress' }] });

    // The minimum: one smallest unit under it refused, itself accepted.
    expect(await m.withdraw('min-under', '0.999999')).toMatchObject({ status: 422, body: { code: 'validation_failed', errors: [{ pointer: '/amount' }] } });
    expect(await m.withdraw('min', '1')).toMatchObject({ status: 201, body: { amount: 1, fee: 1, stage: 'queued' } });
    expect((await m.terms()).Tron!.dailyLeft).toBe(899);

    // The maximum: one smallest unit over it refused, itself accepted (waiting for approval: above approvalAbove).
    // Its detail names the rule, not "does not match the contract" (issue 57).
    expect(await m.withdraw('max-over', '500.000001')).toMatchObject({
      status: 422,
      body: { code: 'validation_failed', detail: 'The withdrawal is refused: amount is over your largest withdrawal, 500 USDT.', errors: [{ pointer: '/amount', detail: 'is over your largest withdrawal, 500 USDT' }] },
    });
    expect((await m.terms()).Tron!.dailyLeft).toBe(899); // a refusal takes nothing
    expect(await m.withdraw('max', '500')).toMatchObject({ status: 201, body: { amount: 500, stage: 'awaiting_approval' } });
    expect((await m.terms()).Tron!.dailyLeft).toBe(399);

    // approvalAbove itself is queued at once; one smallest unit more waits.
    expect(await m.withdraw('approval', '100')).toMatchObject({ status: 201, body: { stage: 'queued' } });
    expect(await m.withdraw('approval-over', '100.000001')).toMatchObject({ status: 201, body: { stage: 'awaiting_approval' } });
    const terms = await m.terms();
    expect([terms.Tron!.dailyLeft, terms.Ethereum!.dailyLeft]).toEqual([198.999999, 198.999999]); // one limit across networks

    // dailyLeft: one smallest unit more refused, with what is left in the smallest unit; itself accepted.
    expect(await m.withdraw('daily-over', '199')).toMatchObject({ status: 422, body: { code: 'daily_limit_exceeded', available: 198_999_999 } });
    expect(await m.withdraw('daily', '198.999999')).toMatchObject({ status: 201 });
    expect((await m.terms()).Tron!.dailyLeft).toBe(0);

    // A FAILED withdrawal frees its share.
    const failed = await m.withdraw('approval', '100');
    expect(failed.status).toBe(200);
    const moved = await t.signed('POST', `/sandbox/v1/withdrawals/${failed.body.uuid as string}/status`, { credentials: m.credentials, headers: JSON_TYPE, body: '{"status":"FAILED"}' });
    expect(moved.status).toBe(200);
    expect((await m.terms()).Tron!.dailyLeft).toBe(100);
    // The sandbox helper's withdrawals take their share, though the policy does not apply to them: a
    // destination not allowed, then more than the maximum and than what is left.
    const helper = (externalId: string, amount: number) => t.signed('POST', '/sandbox/v1/withdrawals', {
      credentials: m.credentials, headers: JSON_TYPE,
      body: JSON.stringify({ externalId, amount, blockchain: 'Tron', destinationAddress: OTHER_TRON_DESTINATION }),
    });
    expect((await helper('helper-1', 60)).status).toBe(201);
    expect((await m.terms()).Tron!.dailyLeft).toBe(40);
    expect((await helper('helper-2', 600)).status).toBe(201);
    expect((await m.terms()).Tron!.dailyLeft).toBe(0);
  });

  it('writes limits exactly in whole units, and one above the largest amount the contract writes as that amount', async () => {
    const m = await merchant('exact limits', 0n);
    await changePolicy(t.db, m.credentials.merchantId, { maxAmount: 123_456_789n, dailyLimit: 5_000_000_000n * USDT, approveAbove: 1n });
    const { Tron: tron } = await m.terms();
    expect(tron).toMatchObject({ maximum: 123.456789, dailyLimit: 1_000_000_000, dailyLeft: 1_000_000_000, approvalAbove: 0.000001 });
  });

  it('refuses a query parameter, another method and a missing signature with a problem, and changes nothing', async () => {
    const m = await merchant('bad input', 0n);
    const before = await t.count('withdrawals');
    for (const query of ['?blockchain=Tron', '?limit=1', '?x', '?%C3%A9=%00']) {
      const response = await t.signed('GET', TERMS + query, { credentials: m.credentials });
      expect(response.status, query).toBe(422);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({ code: 'validation_failed', errors: [{ detail: 'is not a parameter of this operation' }] });
    }
    const unsigned = await t.fetch(TERMS);
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({ code: 'missing_credentials' });
    // No operation of the contract: fetched as is, not checked against it.
    const post = await fetch(t.baseUrl + TERMS, { method: 'POST', headers: JSON_TYPE, body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await t.count('withdrawals')).toBe(before);
    expect(t.errorLogs()).toEqual([]);
  });
});

describe('withdrawal terms in live mode', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await livePlatform(DATABASES[0]!, {});
  });
  afterAll(() => t?.close());

  it('say enabled only once the operator enabled withdrawals, as the create refuses them before', async () => {
    await changePolicy(t.db, t.merchant.merchantId, { enabled: false });
    const client = t.client();
    expect((await client.getWithdrawalTerms()).map((terms) => terms.enabled)).toEqual([false, false]);
    const refused = await client.POST('/partner/v1/platforms/withdrawals', {
      body: { externalId: 'live-1', blockchain: 'Tron', currency: 'USDT', amount: 5, destinationAddress: SAMPLE_TRON_DESTINATION },
    });
    expect(refused.error).toMatchObject({ code: 'withdrawals_disabled' });
    await changePolicy(t.db, t.merchant.merchantId, { enabled: true });
    expect((await client.getWithdrawalTerms()).map((terms) => terms.enabled)).toEqual([true, true]);
  });
});
