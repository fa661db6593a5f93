// The fuzz run (issue 50) on every database: lists, both feeds, deliveries and redelivery, the reads, and
// the money-out endpoints (balances, a withdrawal asked for, the books' invariants after them),
// with real ids and cursors of the run among junk and edge values (test/support/fuzz.ts, a table of
// endpoints: adding one is adding an entry). No 5xx, a problem for each refusal, the contract's shapes,
// no refused write changing anything, no error logged, and the data's invariants after it.
// FUZZ_REQUESTS sets the number per database (`npm run fuzz`: 20,000); the suite sends a bounded number.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MerchantCredentials } from '../../../src/server/merchants/secrets.js';
import { orderRequest, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { fuzz, INVARIANTS, type FuzzPool } from '../../support/fuzz.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 1200);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
const JSON_TYPE = { 'Content-Type': 'application/json' };

describe.each(DATABASES)('the fuzz run on %s', (kind) => {
  let t: TestPlatform;
  let other: MerchantCredentials;
  const pool: FuzzPool = { orderUuids: [], withdrawalUuids: [], eventIds: [], cursors: [] };

  beforeAll(async () => {
    t = await startTestPlatform(kind, { env: { RATE_LIMIT: '1000000/60', REDELIVERY_RATE_LIMIT: '1000000/60' } });
    other = await t.createMerchant('the other merchant');
    // Each merchant: orders on both networks (some paid, so that they have events), withdrawals.
    for (const [credentials, prefix] of [[t.merchant, 'fuzz'], [other, 'other']] as const) {
      for (let i = 1; i <= 6; i++) {
        const { data } = await t.client(credentials).POST('/partner/v1/platforms/orders', { body: orderRequest(`${prefix}-order-${i}`, { blockchain: i % 2 ? 'Tron' : 'Ethereum', customerId: `cust-${i % 3}` }) });
        pool.orderUuids.push(data!.uuid);
        if (i <= 3) await t.signed('POST', `/sandbox/v1/orders/${data!.uuid}/deposits`, { body: JSON.stringify({ amount: 400_000 * i }), headers: JSON_TYPE, credentials });
      }
      // A balance to withdraw from on each network: the run's withdrawals are accepted too, not only refused.
      await t.fund('Tron', 50_000_000n, credentials);
      await t.fund('Ethereum', 50_000_000n, credentials);
      const withdrawal = await t.signed('POST', '/sandbox/v1/withdrawals', { credentials, headers: JSON_TYPE, body: JSON.stringify({ externalId: `${prefix}-wd-1`, amount: 12.5, blockchain: 'Tron', destinationAddress: SAMPLE_TRON_DESTINATION }) });
      pool.withdrawalUuids.push(((await withdrawal.json()) as { uuid: string }).uuid);
    }
  });
  afterAll(() => t?.close());

  it(`answers ${REQUESTS} requests without a 5xx, each refusal a problem that changed nothing, and keeps the invariants`, { timeout: 120_000 + REQUESTS * 50 }, async () => {
    const started = performance.now();
    const outcome = await fuzz(t, other, pool, { count: REQUESTS, seed: SEED });
    const seconds = (performance.now() - started) / 1000;
    console.log(`fuzz on ${kind}: ${outcome.requests} requests in ${seconds.toFixed(1)} s (seed ${SEED}), by status ${JSON.stringify(outcome.byStatus)}, 5xx ${outcome.serverErrors.length}, ${pool.cursors.length} cursors and ${pool.eventIds.length} event ids seen`);
    expect(outcome.serverErrors).toEqual([]);
    expect(outcome.failures).toEqual([]);
    expect(outcome.requests).toBe(REQUESTS);
    // The run reached past the refusals: pages, empty and not, and real events' deliveries.
    expect(outcome.byStatus['200']).toBeGreaterThan(REQUESTS / 10);
    expect(pool.cursors.length).toBeGreaterThan(5);
    for (const invariant of INVARIANTS) expect(await invariant.violations(t.db), invariant.name).toEqual([]);
    expect(t.errorLogs()).toEqual([]);
  });
});
