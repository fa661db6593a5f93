// Withdrawals, created and advanced through the sandbox helpers (drawing on a balance funded first): read
// back exactly, a status moved once, a repeated externalId replayed or refused, a bad amount or address and another merchant refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const withdrawal = { externalId: 'sb-wd-1', amount: 12.5, blockchain: 'Tron', destinationAddress: SAMPLE_TRON_DESTINATION };

describe.each(DATABASES)('withdrawals on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
    await t.fund('Tron', 100_000_000n);
  });
  afterAll(() => t?.close());

  it('creates a test withdrawal, reads it back exactly and advances it once', async () => {
    const created = await t.signed('POST', '/sandbox/v1/withdrawals', { body: JSON.stringify({ ...withdrawal, amount: 1.000001 }), headers: JSON_TYPE });
    expect(created.status).toBe(201);
    const { uuid } = (await created.json()) as { uuid: string };
    const read = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid } } });
    expect(read.data).toMatchObject({ uuid, amount: 1.000001, fee: 1, status: 'PENDING', stage: 'queued', externalId: 'sb-wd-1' });

    const done = await t.signed('POST', `/sandbox/v1/withdrawals/${uuid}/status`, { body: '{"status":"DONE"}', headers: JSON_TYPE });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ status: 'DONE', txId: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const again = await t.signed('POST', `/sandbox/v1/withdrawals/${uuid}/status`, { body: '{"status":"FAILED"}', headers: JSON_TYPE });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe('invalid_status_transition');
  });

  it('replays the same request, refuses its externalId with another amount, too many decimals, a foreign address and another merchant', async () => {
    const body = JSON.stringify({ ...withdrawal, externalId: 'sb-wd-2' });
    expect((await t.signed('POST', '/sandbox/v1/withdrawals', { body, headers: JSON_TYPE })).status).toBe(201);
    // Since 1.5.0 as the create answers: the same request again is the same withdrawal, another amount a 409.
    expect((await t.signed('POST', '/sandbox/v1/withdrawals', { body, headers: JSON_TYPE })).status).toBe(200);
    const changed = JSON.stringify({ ...withdrawal, externalId: 'sb-wd-2', amount: 13 });
    expect((await t.signed('POST', '/sandbox/v1/withdrawals', { body: changed, headers: JSON_TYPE })).status).toBe(409);
    const before = await t.count('withdrawals');
    for (const bad of [{ amount: 1.0000001 }, { amount: 1e-7 }, { destinationAddress: '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0' }]) {
      const response = await t.signed('POST', '/sandbox/v1/withdrawals', { body: JSON.stringify({ ...withdrawal, externalId: 'sb-wd-3', ...bad }), headers: JSON_TYPE });
      expect(response.status).toBe(422);
    }
    expect(await t.count('withdrawals')).toBe(before);
    const other = await t.createMerchant();
    const [row] = await t.db.query<{ uuid: string }>("SELECT uuid FROM withdrawals WHERE external_id = 'sb-wd-2'");
    const foreign = await t.signed('POST', `/sandbox/v1/withdrawals/${row!.uuid}/status`, { body: '{"status":"DONE"}', headers: JSON_TYPE, credentials: other });
    expect(foreign.status).toBe(404);
  });

  // Issue 53 (9): the amount as written, not as the double JSON.parse reads it as.
  it('reads the amount as written: 1.9999999999999999 refused (the double 2), 1.999999 stored exactly', async () => {
    const withdraw = (externalId: string, amountJson: string) =>
      t.signed('POST', '/sandbox/v1/withdrawals', { body: `{"externalId":"${externalId}","amount":${amountJson},"blockchain":"Tron","destinationAddress":"${SAMPLE_TRON_DESTINATION}"}`, headers: JSON_TYPE });
    const before = await t.count('ledger_entries');
    const refused = await withdraw('sb-written-1', '1.9999999999999999');
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/amount', detail: 'must be a positive amount of whole USDT with at most 6 decimals' }] });
    expect(await t.db.query("SELECT 1 FROM withdrawals WHERE external_id = 'sb-written-1'")).toEqual([]);
    expect(await t.count('ledger_entries')).toBe(before);
    const created = await withdraw('sb-written-2', '1.999999');
    expect({ status: created.status, body: await created.json() }).toMatchObject({ status: 201, body: { amount: 1.999999 } });
    expect(await t.db.query<{ amount_units: bigint }>("SELECT amount_units FROM withdrawals WHERE external_id = 'sb-written-2'")).toEqual([{ amount_units: 1_999_999n }]);
  });
});
