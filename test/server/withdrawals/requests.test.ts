// Money out, part one (issue 46): balances, and withdrawals a merchant asks for through the API. Each
// refusal changes nothing (no withdrawal, no entry, no event, the balances as they were); a replay is the
// same withdrawal; the books recomputed from the entries always agree; a merchant never sees another's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Balance } from '../../../src/client/index.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { changePolicy, type PolicyChange } from '../../../src/server/withdrawals/policy.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { orderRequest, SAMPLE_ETHEREUM_DESTINATION, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import type { MerchantCredentials } from '../../../src/server/merchants/secrets.js';

const request = (externalId: string, overrides: Record<string, unknown> = {}) => ({
  externalId,
  blockchain: 'Tron',
  currency: 'USDT',
  amount: 12.5,
  destinationAddress: SAMPLE_TRON_DESTINATION,
  ...overrides,
});
const JSON_TYPE = { 'Content-Type': 'application/json' };
/** A valid Tron address of no wallet the tests know, beside SAMPLE_TRON_DESTINATION. */
const OTHER_TRON_DESTINATION = 'TByNqmoBHifuCyU3JU774enPZ59SZrdqko';

/** What a refusal must leave as it was. */
async function books(t: TestPlatform, credentials?: MerchantCredentials) {
  const balances = await t.client(credentials).GET('/partner/v1/platforms/balances');
  return {
    balances: balances.data!.data,
    withdrawals: await t.count('withdrawals'),
    entries: await t.count('ledger_entries'),
    events: await t.count('callback_outbox'),
  };
}

const balanceOf = (balances: Balance[], network: string) => balances.find((b) => b.blockchain === network)!;

describe.each(DATABASES)('withdrawals through the API on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
  });
  afterAll(async () => {
    // Whatever each test did, the books agree with their entries.
    if (t) expect(await checkLedger(t.db)).toMatchObject({ problems: [] });
    await t?.close();
  });

  async function post(body: unknown, credentials?: MerchantCredentials) {
    const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', { body: JSON.stringify(body), headers: JSON_TYPE, ...(credentials ? { credentials } : {}) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('shows a new merchant a zero balance on each network, then what its orders received', async () => {
    const merchant = await t.createMerchant('balances');
    const zero = { currency: 'USDT', available: 0, held: 0, received: 0, withdrawn: 0, owed: 0 };
    expect((await t.client(merchant).GET('/partner/v1/platforms/balances')).data).toEqual({
      data: [{ blockchain: 'Tron', ...zero }, { blockchain: 'Ethereum', ...zero }],
    });
    await t.fund('Tron', 2_500_000n, merchant);
    await t.fund('Tron', 1_000_001n, merchant);
    const { data } = await t.client(merchant).GET('/partner/v1/platforms/balances');
    expect(balanceOf(data!.data, 'Tron')).toEqual({ blockchain: 'Tron', ...zero, available: 3_500_001, received: 3_500_001 });
    expect(balanceOf(data!.data, 'Ethereum')).toEqual({ blockchain: 'Ethereum', ...zero });
  });

  it('holds amount plus fee at once, spends it when DONE and gives it back when FAILED', async () => {
    const merchant = await t.createMerchant('holder');
    await t.fund('Tron', 50_000_000n, merchant);
    const created = await post(request('hold-1', { amount: 12.5, callbackUrl: 'https://merchant.example/callbacks/withdrawals' }), merchant);
    expect(created).toMatchObject({ status: 201, body: { amount: 12.5, fee: 1, status: 'PENDING', stage: 'queued', externalId: 'hold-1', callbackUrl: 'https://merchant.example/callbacks/withdrawals' } });
    let tron = balanceOf((await books(t, merchant)).balances, 'Tron');
    expect(tron).toMatchObject({ available: 36_500_000, held: 13_500_000, received: 50_000_000, withdrawn: 0 });

    const uuid = created.body.uuid as string;
    const done = await t.platform.withdrawals.move(uuid, { to: 'DONE', txId: 'ab'.repeat(32) });
    expect(done).toMatchObject({ status: 'DONE', txId: 'ab'.repeat(32) });
    expect(done).not.toHaveProperty('stage');
    tron = balanceOf((await books(t, merchant)).balances, 'Tron');
    expect(tron).toMatchObject({ available: 36_500_000, held: 0, withdrawn: 13_500_000 });

    const second = await post(request('hold-2', { amount: 20 }), merchant);
    expect(second.status).toBe(201);
    expect(balanceOf((await books(t, merchant)).balances, 'Tron')).toMatchObject({ available: 15_500_000, held: 21_000_000 });
    expect(await t.platform.withdrawals.move(second.body.uuid as string, { to: 'FAILED', reason: 'The destination refused it.' })).toMatchObject({ status: 'FAILED', failureReason: 'The destination refused it.' });
    expect(balanceOf((await books(t, merchant)).balances, 'Tron')).toMatchObject({ available: 36_500_000, held: 0, withdrawn: 13_500_000 });
    // Final is final: nothing moves twice.
    expect(await t.platform.withdrawals.move(second.body.uuid as string, { to: 'DONE', txId: undefined })).toMatchObject({ refused: 'it is FAILED, which is final' });
    expect(balanceOf((await books(t, merchant)).balances, 'Tron')).toMatchObject({ available: 36_500_000, held: 0 });
  });

  it('answers the same request again with the same withdrawal (200), another body with 409, and holds once', async () => {
    const merchant = await t.createMerchant('replayer');
    await t.fund('Ethereum', 100_000_000n, merchant);
    const body = request('again-1', { blockchain: 'Ethereum', amount: 10.000001, destinationAddress: SAMPLE_ETHEREUM_DESTINATION });
    const first = await post(body, merchant);
    expect(first.status).toBe(201);
    const before = await books(t, merchant);
    const replay = await post(body, merchant);
    expect(replay).toEqual({ status: 200, body: first.body });
    for (const changed of [{ amount: 11 }, { destinationAddress: SAMPLE_ETHEREUM_DESTINATION.toLowerCase() }, { callbackUrl: 'https://merchant.example/w' }, { blockchain: 'Tron', destinationAddress: SAMPLE_TRON_DESTINATION }]) {
      const conflict = await post({ ...body, ...changed }, merchant);
      expect(conflict.status, JSON.stringify(changed)).toBe(409);
      expect(conflict.body.code).toBe('external_id_conflict');
    }
    expect(await books(t, merchant)).toEqual(before);
  });

  it('refuses each bad withdrawal with its 422, saying why, and changes nothing', async () => {
    const merchant = await t.createMerchant('refused');
    await t.fund('Tron', 10_000_000n, merchant);
    await t.fund('Ethereum', 100_000_000n, merchant);
    const order = await t.client(merchant).POST('/partner/v1/platforms/orders', { body: orderRequest('own-address', { blockchain: 'Ethereum' }) });
    const [pooled] = await t.db.query<{ address: string }>("SELECT address FROM address_pool WHERE network = 'Tron' AND address IS NOT NULL LIMIT 1");
    const tronChars = SAMPLE_TRON_DESTINATION.split('');
    tronChars[5] = tronChars[5] === 'a' ? 'b' : 'a';
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['more than the balance', { amount: 9.5 }, 'insufficient_balance', ''],
      ['a bad EIP-55 checksum', { blockchain: 'Ethereum', destinationAddress: SAMPLE_ETHEREUM_DESTINATION.replace('C9DF', 'c9DF') }, 'validation_failed', '/destinationAddress'],
      ['a bad base58check', { destinationAddress: tronChars.join('') }, 'validation_failed', '/destinationAddress'],
      ["another network's address", { destinationAddress: SAMPLE_ETHEREUM_DESTINATION }, 'validation_failed', '/destinationAddress'],
      ['the Ethereum zero address', { blockchain: 'Ethereum', destinationAddress: '0x0000000000000000000000000000000000000000' }, 'validation_failed', '/destinationAddress'],
      ['the Tron zero address', { destinationAddress: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb' }, 'validation_failed', '/destinationAddress'],
      ['an issued deposit address (any case)', { blockchain: 'Ethereum', destinationAddress: order.data!.address.toLowerCase() }, 'validation_failed', '/destinationAddress'],
      ['a deposit address in the pool', { destinationAddress: pooled!.address }, 'validation_failed', '/destinationAddress'],
      ['under the network minimum', { amount: 0.999999 }, 'validation_failed', '/amount'],
      ['seven decimals', { amount: 1.0000001 }, 'validation_failed', '/amount'],
      ['over the largest amount', { amount: 1_000_000_001 }, 'validation_failed', '/amount'],
      ['a callback URL with a password in it', { callbackUrl: 'https://user:secret@merchant.example/x' }, 'validation_failed', '/callbackUrl'],
      ['an unknown field', { fee: 0 }, 'validation_failed', '/fee'],
      ['an unknown currency', { currency: 'USDC' }, 'validation_failed', '/currency'],
    ];
    const before = await books(t, merchant);
    for (const [what, change, code, pointer] of cases) {
      const refused = await post(request(`bad-${what}`, change), merchant);
      expect(refused.status, what).toBe(422);
      expect(refused.body.code, what).toBe(code);
      if (pointer) expect((refused.body.errors as { pointer: string }[]).map((e) => e.pointer), what).toContain(pointer);
    }
    const short = await post(request('short', { amount: 9.5 }), merchant);
    expect(short.body).toMatchObject({
      type: '/docs#/section/errors/insufficient_balance',
      title: 'Insufficient balance',
      available: 10_000_000,
      detail: 'The withdrawal needs 10.5 USDT (amount 9.5 + fee 1) on Tron; 10 USDT is available.',
    });
    expect(await books(t, merchant)).toEqual(before);
    expect(t.errorLogs()).toEqual([]);
    // Exactly the balance is enough.
    expect((await post(request('exact', { amount: 9 }), merchant)).status).toBe(201);
    expect(balanceOf((await books(t, merchant)).balances, 'Tron')).toMatchObject({ available: 0, held: 10_000_000 });
  });

  // Issue 53 (9): the amount is read from the body's text as written, never from the double JSON.parse made of it.
  it('reads the amount as written: more than 6 decimals refused though a double rounds them away, exponents taken where exact', async () => {
    const merchant = await t.createMerchant('written amounts');
    await t.fund('Tron', 1_000_000_000n, merchant);
    let made = 0;
    /** The body's text with the amount's JSON written by hand (JSON.stringify would write the double). */
    const postText = async (amountJson: string, key = 'amount') => {
      const externalId = `written-${++made}`;
      const body = `{"externalId":"${externalId}","blockchain":"Tron","currency":"USDT","${key}":${amountJson},"destinationAddress":"${SAMPLE_TRON_DESTINATION}"}`;
      const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', { body, headers: JSON_TYPE, credentials: merchant });
      return { externalId, status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as Record<string, unknown> };
    };
    const stored = async (externalId: string) => (await t.db.query<{ amount_units: bigint }>('SELECT amount_units FROM withdrawals WHERE external_id = $1', [externalId])).map((r) => r.amount_units);

    const before = await books(t, merchant);
    for (const amount of ['1.9999999999999999', '1.0000000000000001', '2.0000001', '1e-7', '1.5e-6', '10.1234567e0']) {
      const refused = await postText(amount);
      expect(refused.status, amount).toBe(422);
      expect(refused.type, amount).toMatch(/^application\/problem\+json/);
      expect(refused.body, amount).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/amount', detail: 'must be a positive amount of whole USDT with at most 6 decimals' }] });
      expect(await stored(refused.externalId), amount).toEqual([]);
    }
    expect(await books(t, merchant)).toEqual(before);
    expect(t.errorLogs()).toEqual([]);

    // Stored exactly as written, in smallest units: trailing zeros, exponents and an escaped key alike.
    const accepted: [string, bigint, number][] = [
      ['1.999999', 1_999_999n, 1.999999],
      ['12.50000000', 12_500_000n, 12.5],
      ['1.5e2', 150_000_000n, 150],
      ['2E0', 2_000_000n, 2],
      ['125e-2', 1_250_000n, 1.25],
    ];
    for (const [amount, units, wire] of accepted) {
      const created = await postText(amount);
      expect(created, amount).toMatchObject({ status: 201, body: { amount: wire, fee: 1 } });
      expect(await stored(created.externalId), amount).toEqual([units]);
    }
    const escaped = await postText('3.000001', '\\u0061mount');
    expect(escaped.body.amount).toBe(3.000001);
    expect(await stored(escaped.externalId)).toEqual([3_000_001n]);
    const held = [...accepted.map(([, units]) => units), 3_000_001n].reduce((sum, units) => sum + units + 1_000_000n, 0n);
    expect(balanceOf((await books(t, merchant)).balances, 'Tron')).toMatchObject({ held: Number(held), available: 1_000_000_000 - Number(held) });
  });

  it("keeps each merchant's balance, withdrawals and events its own", async () => {
    const [a, b] = [await t.createMerchant('merchant a'), await t.createMerchant('merchant b')];
    await t.fund('Tron', 30_000_000n, a);
    const mine = await post(request('shared-id', { callbackUrl: 'https://merchant.example/a' }), a);
    expect(mine.status).toBe(201);
    // B has nothing to spend, sees nothing of A's, and its own externalIds are its own.
    expect(balanceOf((await books(t, b)).balances, 'Tron')).toMatchObject({ available: 0, received: 0, held: 0 });
    expect((await post(request('shared-id'), b)).body.code).toBe('insufficient_balance');
    expect((await t.client(b).GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: mine.body.uuid as string } } })).response.status).toBe(404);
    expect((await t.client(b).GET('/partner/v1/platforms/withdrawals')).data!.data).toEqual([]);
    await t.platform.withdrawals.move(mine.body.uuid as string, { to: 'DONE', txId: undefined });
    expect((await t.client(b).GET('/partner/v2/platforms/events')).data!.data).toEqual([]);
    const events = (await t.client(a).GET('/partner/v2/platforms/events', { params: { query: { withdrawalUuid: mine.body.uuid as string } } })).data!.data;
    expect(events.map((e) => [e.type, e.withdrawalUuid])).toEqual([['withdrawal.done', mine.body.uuid]]);
    const eventId = events[0]!.id;
    expect((await t.signed('GET', `/partner/v1/platforms/events/${eventId}/deliveries`, { credentials: b })).status).toBe(404);
    expect((await t.signed('POST', `/partner/v1/platforms/events/${eventId}/redeliver`, { credentials: b })).status).toBe(404);
    expect((await t.signed('POST', `/sandbox/v1/withdrawals/${mine.body.uuid}/status`, { credentials: b, headers: JSON_TYPE, body: '{"status":"FAILED"}' })).status).toBe(404);
  });

  it("reports each change as an event of the v2 feed, in sequence, and keeps them out of the orders' feed", async () => {
    const merchant = await t.createMerchant('events');
    await t.fund('Tron', 40_000_000n, merchant);
    const withCallback = await post(request('ev-1', { callbackUrl: 'https://merchant.example/callbacks/withdrawals' }), merchant);
    const without = await post(request('ev-2'), merchant);
    await t.platform.withdrawals.move(withCallback.body.uuid as string, { to: 'sent', txId: 'cd'.repeat(32) });
    await t.platform.withdrawals.move(withCallback.body.uuid as string, { to: 'confirmed', txId: 'cd'.repeat(32) });
    await t.platform.withdrawals.move(without.body.uuid as string, { to: 'FAILED', reason: 'Rejected by the operator.' });
    const feed = (await t.client(merchant).GET('/partner/v2/platforms/events')).data!;
    const withdrawalEvents = feed.data.filter((e) => e.withdrawalUuid);
    expect(withdrawalEvents.map((e) => [e.type, e.withdrawalUuid, (e.data as { sequence: number }).sequence, e.delivery?.state])).toEqual([
      ['withdrawal.updated', withCallback.body.uuid, 1, 'pending'],
      ['withdrawal.done', withCallback.body.uuid, 2, 'pending'],
      ['withdrawal.failed', without.body.uuid, 1, undefined],
    ]);
    expect(withdrawalEvents[1]!.data).toMatchObject({ event: 'withdrawal.done', withdrawal: { uuid: withCallback.body.uuid, status: 'DONE', txId: 'cd'.repeat(32) } });
    expect(withdrawalEvents[0]!.data).toMatchObject({ withdrawal: { status: 'PENDING', stage: 'sent', txId: 'cd'.repeat(32) } });
    // The orders' feed keeps to orders' events, as its contract says.
    const orders = (await t.client(merchant).GET('/partner/v1/platforms/events')).data!;
    expect(orders.data.every((e) => e.orderUuid && e.type.startsWith('order.'))).toBe(true);
    expect(orders.data).toHaveLength(1); // the funding deposit
    // An event without a callback has no deliveries to show or send again.
    const silent = withdrawalEvents[2]!.id;
    const deliveries = await t.signed('GET', `/partner/v1/platforms/events/${silent}/deliveries`, { credentials: merchant });
    expect(deliveries.status).toBe(404);
    expect(((await deliveries.json()) as { detail: string }).detail).toMatch(/without a callbackUrl/);
    expect((await t.signed('POST', `/partner/v1/platforms/events/${silent}/redeliver`, { credentials: merchant })).status).toBe(404);
    // A v2 cursor is not a v1 cursor.
    const v1 = await t.signed('GET', `/partner/v1/platforms/events?cursor=${feed.nextCursor}`, { credentials: merchant });
    expect(v1.status).toBe(422);
  });

  it('carries the order\'s externalId in the create, the read, the list and the callback', async () => {
    const merchant = await t.createMerchant('external ids');
    const created = await t.client(merchant).POST('/partner/v1/platforms/orders', { body: orderRequest('shop-order-77') });
    expect(created.data).toMatchObject({ externalId: 'shop-order-77' });
    const uuid = created.data!.uuid;
    expect((await t.client(merchant).GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } })).data).toMatchObject({ externalId: 'shop-order-77' });
    expect((await t.client(merchant).GET('/partner/v1/platforms/orders')).data!.data[0]).toMatchObject({ uuid, externalId: 'shop-order-77' });
    await t.signed('POST', `/sandbox/v1/orders/${uuid}/deposits`, { credentials: merchant, headers: JSON_TYPE, body: '{"amount":1000000}' });
    const event = (await t.client(merchant).GET('/partner/v1/platforms/events')).data!.data[0]!;
    expect(event.data).toMatchObject({ uuid, externalId: 'shop-order-77', event: 'order.deposit' });
  });

  it("refuses every withdrawal on a halted network, the API's with 503 network_halted, and changes nothing; the other network and a replay are answered", async () => {
    const merchant = await t.createMerchant('halted network');
    await t.fund('Tron', 50_000_000n, merchant);
    await t.fund('Ethereum', 30_000_000n, merchant);
    const accepted = await post(request('halt-before'), merchant);
    expect(accepted.status).toBe(201);
    await t.db.query("INSERT INTO chain_cursors (network, next_block, halted_at, halt_reason) VALUES ('Tron', 100, now(), 'a deep reorg')");
    try {
      const before = await books(t, merchant);
      const refused = await post(request('halt-1'), merchant);
      expect(refused).toMatchObject({ status: 503, body: { code: 'network_halted', title: 'Network halted', type: '/docs#/section/errors/network_halted' } });
      expect(refused.body.detail).toMatch(/^Withdrawals on Tron are paused .*send the same request again later\.$/);
      const operator = await t.platform.withdrawals.request({
        merchantId: merchant.merchantId, externalId: 'halt-operator', network: 'Tron', currency: 'USDT', amountUnits: 1_000_000n,
        destinationAddress: SAMPLE_TRON_DESTINATION, callbackUrl: undefined, source: 'operator',
      });
      expect(operator).toMatchObject({ outcome: 'refused', refusal: { code: 'network_halted' } });
      const sandbox = await t.signed('POST', '/sandbox/v1/withdrawals', { credentials: merchant, headers: JSON_TYPE, body: JSON.stringify({ externalId: 'halt-sandbox', amount: 1, blockchain: 'Tron', destinationAddress: SAMPLE_TRON_DESTINATION }) });
      expect(sandbox.status).toBe(503); // the create's answer since 1.5.0
      expect(await sandbox.json()).toMatchObject({ code: 'network_halted' });
      expect(await books(t, merchant)).toEqual(before);
      // A replay of a request accepted before the halt is the same withdrawal; the other network is not halted.
      expect(await post(request('halt-before'), merchant)).toMatchObject({ status: 200, body: { uuid: accepted.body.uuid } });
      expect((await post(request('halt-ethereum', { blockchain: 'Ethereum', destinationAddress: SAMPLE_ETHEREUM_DESTINATION, amount: 10 }), merchant)).status).toBe(201);
    } finally {
      await t.db.query("DELETE FROM chain_cursors WHERE network = 'Tron'"); // this platform scans no chain
    }
    expect((await post(request('halt-after'), merchant)).status).toBe(201);
  });

  it('lets a sandbox helper make a PENDING withdrawal fail, its hold back in the balance', async () => {
    const merchant = await t.createMerchant('sandbox failer');
    await t.fund('Tron', 20_000_000n, merchant);
    const created = await post(request('sb-fail'), merchant);
    const failed = await t.signed('POST', `/sandbox/v1/withdrawals/${created.body.uuid}/status`, {
      credentials: merchant, headers: JSON_TYPE, body: JSON.stringify({ status: 'FAILED', failureReason: 'The destination refused the transfer.' }),
    });
    expect(failed.status).toBe(200);
    expect(await failed.json()).toMatchObject({ status: 'FAILED', failureReason: 'The destination refused the transfer.' });
    expect(balanceOf((await books(t, merchant)).balances, 'Tron')).toMatchObject({ available: 20_000_000, held: 0 });
    for (const body of ['{"status":"PENDING"}', '{"status":"DONE","failureReason":"x"}']) {
      const wrong = await t.signed('POST', `/sandbox/v1/withdrawals/${created.body.uuid}/status`, { credentials: merchant, headers: JSON_TYPE, body });
      expect(wrong.status, body).toBe(422);
    }
  });
});

describe('withdrawals through the API in live mode', () => {
  let t: TestPlatform;
  let merchant: MerchantCredentials;
  beforeAll(async () => {
    t = await startTestPlatform('pglite', {
      env: { PARTNER_API_MODE: 'live', PUBLIC_URL: 'https://pay.partner.example', TRON_XPUB: hdVectors.wallets[1]!.Tron.xpub, ETHEREUM_XPUB: hdVectors.wallets[1]!.Ethereum.xpub },
    });
    merchant = t.merchant;
    await t.fund('Tron', 100_000_000n);
  });
  afterAll(async () => {
    if (t) expect(await checkLedger(t.db)).toMatchObject({ problems: [] });
    await t?.close();
  });

  async function post(body: unknown) {
    const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', { body: JSON.stringify(body), headers: JSON_TYPE });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }
  const setPolicy = (change: PolicyChange) => changePolicy(t.db, merchant.merchantId, change);

  it('refuses every withdrawal until the operator enables them, then applies the limits, destinations and approval', async () => {
    const before = await books(t);
    const disabled = await post(request('live-1'));
    expect(disabled).toMatchObject({ status: 422, body: { code: 'withdrawals_disabled', title: 'Withdrawals disabled' } });
    expect(await books(t)).toEqual(before);

    await setPolicy({ enabled: true, maxAmount: 30_000_000n, dailyLimit: 50_000_000n, approveAbove: 20_000_000n, allowedAddresses: [SAMPLE_TRON_DESTINATION] });
    const tooLarge = await post(request('live-2', { amount: 30.000001 }));
    expect(tooLarge.body).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/amount', detail: 'is over your largest withdrawal, 30 USDT' }] });
    const elsewhere = await post(request('live-3', { destinationAddress: OTHER_TRON_DESTINATION }));
    expect(elsewhere.body).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/destinationAddress' }] });
    expect(await books(t)).toEqual(before);

    const small = await post(request('live-4', { amount: 20 }));
    expect(small.body).toMatchObject({ status: 'PENDING', stage: 'queued' });
    const large = await post(request('live-5', { amount: 25 }));
    expect(large.body).toMatchObject({ status: 'PENDING', stage: 'awaiting_approval' });
    // 45 of the 50 a day are taken: 5 are left.
    const overDaily = await post(request('live-6', { amount: 6 }));
    expect(overDaily.body).toMatchObject({ code: 'daily_limit_exceeded', available: 5_000_000 });

    expect(await t.platform.withdrawals.move(large.body.uuid as string, { to: 'DONE', txId: undefined })).toMatchObject({ refused: "it awaits the operator's approval" });
    expect(await t.platform.withdrawals.move(large.body.uuid as string, { to: 'approved' })).toMatchObject({ status: 'PENDING', stage: 'queued' });
    // A FAILED withdrawal no longer counts against the day.
    await t.platform.withdrawals.move(small.body.uuid as string, { to: 'FAILED', reason: 'Rejected by the operator.' });
    expect((await post(request('live-7', { amount: 6 }))).status).toBe(201);
  });
});
