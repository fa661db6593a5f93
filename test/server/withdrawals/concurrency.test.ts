// Issue 46: 100 concurrent withdrawal requests against a balance that covers 10 accept exactly 10, the
// balance ends at zero, the books recomputed from their entries agree, and nothing else changed: on
// PGlite (one process) and on PostgreSQL behind three `partner-api serve` instances. The database keeps
// the balance from going below zero; the requests race through every instance at once.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PartnerClient } from '../../../src/client/index.js';
import { openPostgres, type Sql } from '../../../src/server/db/database.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { orderRequest, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';
import { freshDatabase, startTestPlatform, TEST_DATABASE_URL } from '../../support/platform.js';

const REQUESTS = 100;
const COVERED = 10;
/** 12.5 USDT and the Tron fee of 1 USDT: what each accepted withdrawal holds. */
const AMOUNT = 12.5;
const HELD_EACH = 13_500_000n;

const body = (i: number) => ({ externalId: `race-${i}`, blockchain: 'Tron' as const, currency: 'USDT' as const, amount: AMOUNT, destinationAddress: SAMPLE_TRON_DESTINATION });

/** What must not change but by the ten accepted: the counts of every table the books touch. */
async function counts(sql: Sql) {
  const [row] = await sql.query<Record<string, bigint>>(
    `SELECT (SELECT count(*) FROM withdrawals) AS withdrawals, (SELECT count(*) FROM ledger_entries) AS entries,
            (SELECT count(*) FROM callback_outbox) AS events, (SELECT count(*) FROM deposits) AS deposits, (SELECT count(*) FROM deposit_orders) AS orders`,
  );
  return row!;
}

/** Fires the requests all at once, round-robin over the clients; the statuses and problem codes. */
async function race(clients: PartnerClient[]) {
  const results = await Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const { response, error } = await clients[i % clients.length]!.POST('/partner/v1/platforms/withdrawals', { body: body(i) });
      return { status: response.status, code: error?.code };
    }),
  );
  return {
    accepted: results.filter((r) => r.status === 201).length,
    refused: results.filter((r) => r.status === 422 && r.code === 'insufficient_balance').length,
    other: results.filter((r) => r.status !== 201 && !(r.status === 422 && r.code === 'insufficient_balance')),
  };
}

async function expectBooks(sql: Sql, before: Record<string, bigint>, merchantId: string) {
  const after = await counts(sql);
  expect(after).toEqual({ ...before, withdrawals: before.withdrawals! + BigInt(COVERED), entries: before.entries! + BigInt(COVERED) });
  const [balance] = await sql.query<{ available: bigint; held: bigint }>("SELECT available, held FROM balances WHERE merchant_id = $1 AND blockchain = 'Tron'", [merchantId]);
  expect(balance).toEqual({ available: 0n, held: HELD_EACH * BigInt(COVERED) });
  expect(await checkLedger(sql)).toMatchObject({ problems: [] });
}

describe('concurrent withdrawals against a balance that covers ten', () => {
  it('on PGlite: exactly ten accepted, the balance at zero, the books agreeing', async () => {
    const t = await startTestPlatform('pglite');
    try {
      await t.fund('Tron', HELD_EACH * BigInt(COVERED));
      const before = await counts(t.db);
      const outcome = await race([t.client()]);
      expect(outcome).toEqual({ accepted: COVERED, refused: REQUESTS - COVERED, other: [] });
      await expectBooks(t.db, before, t.merchant.merchantId);
      expect(t.errorLogs()).toEqual([]);
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(!TEST_DATABASE_URL)('on PostgreSQL behind three instances: exactly ten accepted, the balance at zero, the books agreeing', async () => {
    const database = await freshDatabase('postgres');
    await database.db.close();
    const secretKey = randomBytes(32).toString('base64');
    const dataDirs: string[] = [];
    const instances: RunningPartnerApi[] = [];
    try {
      // One after another: the first makes the sandbox merchant the others find.
      for (let i = 0; i < 3; i++) {
        dataDirs.push(mkdtempSync(join(tmpdir(), 'partner-withdrawals-')));
        instances.push(await startPartnerApi({ DATA_DIR: dataDirs[i]!, DATABASE_URL: database.url!, SECRET_KEY: secretKey, RATE_LIMIT: '100000/60', LOG_LEVEL: 'silent', SANDBOX_WITHDRAWAL_SECONDS: '3600' }));
      }
      const clients = instances.map((instance) => instance.client());
      // The balance: a deposit of exactly ten withdrawals to an order of the sandbox merchant.
      const order = await clients[0]!.POST('/partner/v1/platforms/orders', { body: orderRequest('funding') });
      const credited = await clients[1]!.POST('/sandbox/v1/orders/{uuid}/deposits', { params: { path: { uuid: order.data!.uuid } }, body: { amount: Number(HELD_EACH) * COVERED } });
      expect(credited.response.status).toBe(201);

      const sql = await openPostgres(database.url!);
      try {
        const [merchant] = await sql.query<{ merchant_id: string }>('SELECT merchant_id FROM deposit_orders WHERE uuid = $1', [order.data!.uuid]);
        const before = await counts(sql);
        const outcome = await race(clients);
        expect(outcome).toEqual({ accepted: COVERED, refused: REQUESTS - COVERED, other: [] });
        await expectBooks(sql, before, merchant!.merchant_id);
      } finally {
        await sql.close();
      }
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()));
      for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
      await database.drop();
    }
  }, 240_000);
});
