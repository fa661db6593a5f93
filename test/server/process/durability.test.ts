// SIGKILL in the middle of a burst of creates: after a restart every acknowledged order is there,
// unchanged, no address was issued twice, and the database opens cleanly; the same for withdrawals, each
// holding its amount and fee once, and the books agreeing with their entries.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Balance, CreatedDepositOrder, Withdrawal } from '../../../src/client/index.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { openPglite, openPostgres, type Database } from '../../../src/server/db/database.js';
import { startPartnerApi } from '../../support/partner-api.js';
import { DATABASES, freshDatabase, type DatabaseKind } from '../../support/platform.js';
import { orderRequest, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { copiedDataDirectory } from '../../support/database-templates.js';

async function serve(env: Record<string, string>) {
  // A public URL of its own: without one, payment links follow the listen port, which a restart changes.
  const platform = await startPartnerApi({ LOG_LEVEL: 'silent', RATE_LIMIT: '100000/60', PUBLIC_URL: 'https://pay.partner.example', ...env });
  return { server: platform.process, client: platform.client() };
}

/**
 * 16 workers send `request(w, i)`, each until the server is gone; it is killed (SIGKILL) once 60 were
 * acknowledged (201). Those, and how many were sent: more, some cut off in flight.
 */
async function burstUntilKilled<T>(
  server: Awaited<ReturnType<typeof serve>>['server'],
  request: (w: number, i: number) => Promise<{ response: Response; data?: T }>,
): Promise<{ acknowledged: T[]; sent: number }> {
  const acknowledged: T[] = [];
  let sent = 0;
  const worker = async (w: number) => {
    for (let i = 0; ; i++) {
      sent++;
      const result = await request(w, i).catch(() => undefined);
      if (!result) return; // the server is gone
      if (result.response.status === 201) acknowledged.push(result.data!);
    }
  };
  const burst = Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
  while (acknowledged.length < 60) await new Promise((r) => setTimeout(r, 20));
  server.process.kill('SIGKILL');
  await burst;
  return { acknowledged, sent };
}

/**
 * Where a platform the test kills keeps its data: a data directory of the template's and, on PostgreSQL,
 * a database of its own (`env` names both). `checkDatabase` runs `check` on the database once the
 * platform has stopped; `remove` removes both.
 */
async function platformData(kind: DatabaseKind, prefix: string) {
  const dataDir = copiedDataDirectory(prefix);
  const database = kind === 'postgres' ? await freshDatabase('postgres') : undefined;
  await database?.db.close(); // the platform's processes use it
  return {
    env: { DATA_DIR: dataDir, ...(database?.url ? { DATABASE_URL: database.url } : {}) },
    async checkDatabase(check: (db: Database) => Promise<void>) {
      const db = database?.url ? await openPostgres(database.url) : await openPglite(join(dataDir, 'pglite'));
      try {
        await check(db);
      } finally {
        await db.close();
      }
    },
    async remove() {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe.each(DATABASES)('durability on %s', (kind) => {
  it('keeps every acknowledged create across a SIGKILL mid-burst', async () => {
    const data = await platformData(kind, 'partner-kill-');
    const { env } = data;
    try {
      const first = await serve(env);
      const { acknowledged, sent } = await burstUntilKilled<CreatedDepositOrder>(first.server, (w, i) => {
        const blockchain = (w + i) % 2 ? 'Tron' : 'Ethereum';
        return first.client.POST('/partner/v1/platforms/orders', { body: orderRequest(`kill-${w}-${i}`, { blockchain, customerId: `c${w}` }) });
      });
      expect(sent).toBeGreaterThan(acknowledged.length); // some requests were cut off in flight

      const second = await serve(env);
      for (const order of acknowledged) {
        const { data, response } = await second.client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } });
        expect(response.status).toBe(200);
        expect(data).toEqual({ ...order, receivedAmount: 0, unconfirmedDeposits: [] });
      }
      const after = await second.client.POST('/partner/v1/platforms/orders', {
        body: orderRequest('after-restart'),
      });
      expect(after.response.status).toBe(201);
      await second.server.stop();

      await data.checkDatabase(async (db) => {
        const [row] = await db.query<{ n: bigint; addresses: bigint; indexes: bigint }>(
          'SELECT count(*)::bigint AS n, count(DISTINCT address)::bigint AS addresses, count(DISTINCT (blockchain, address_index))::bigint AS indexes FROM deposit_orders',
        );
        expect(row!.n).toBeGreaterThanOrEqual(BigInt(acknowledged.length + 1));
        expect(row!.addresses).toBe(row!.n);
        expect(row!.indexes).toBe(row!.n);
      });
    } finally {
      await data.remove();
    }
  }, 120_000);
});

describe.each(DATABASES)('withdrawals across a SIGKILL on %s', (kind) => {
  it('keeps every accepted withdrawal and its one hold, and the books agree after the restart', async () => {
    const data = await platformData(kind, 'partner-kill-withdrawals-');
    // No sandbox settlement during the test: what was accepted stays PENDING, holding its amount and fee.
    const env = { ...data.env, SANDBOX_WITHDRAWAL_SECONDS: '3600' };
    try {
      const first = await serve(env);
      const order = await first.client.POST('/partner/v1/platforms/orders', { body: orderRequest('funding') });
      const FUNDS = 1_000_000_000_000; // a million USDT: more than the burst can take
      await first.client.POST('/sandbox/v1/orders/{uuid}/deposits', { params: { path: { uuid: order.data!.uuid } }, body: { amount: FUNDS } });
      const { acknowledged, sent } = await burstUntilKilled<Withdrawal>(first.server, (w, i) => {
        const body = { externalId: `kill-wd-${w}-${i}`, blockchain: 'Tron' as const, currency: 'USDT' as const, amount: 1 + w + i / 1000, destinationAddress: SAMPLE_TRON_DESTINATION };
        return first.client.POST('/partner/v1/platforms/withdrawals', { body });
      });
      expect(sent).toBeGreaterThan(acknowledged.length); // some requests were cut off in flight

      const second = await serve(env);
      for (const withdrawal of acknowledged) {
        const { data } = await second.client.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: withdrawal.uuid } } });
        expect(data).toEqual(withdrawal);
      }
      const balances = await second.client.GET('/partner/v1/platforms/balances');
      await second.server.stop();

      await data.checkDatabase(async (db) => {
        // One hold per withdrawal, whatever was cut off: those the kill interrupted left neither.
        const [row] = await db.query<{ withdrawals: bigint; holds: bigint; held: bigint }>(
          `SELECT (SELECT count(*) FROM withdrawals)::bigint AS withdrawals, (SELECT count(*) FROM ledger_entries WHERE kind = 'hold')::bigint AS holds,
                  (SELECT sum(amount_units + fee_units) FROM withdrawals)::bigint AS held`,
        );
        expect(row!.withdrawals).toBeGreaterThanOrEqual(BigInt(acknowledged.length));
        expect(row!.holds).toBe(row!.withdrawals);
        expect(balanceOf(balances.data!.data, 'Tron')).toMatchObject({ held: Number(row!.held), available: FUNDS - Number(row!.held), received: FUNDS });
        expect(await checkLedger(db)).toMatchObject({ problems: [] });
      });
    } finally {
      await data.remove();
    }
  }, 120_000);
});

const balanceOf = (balances: Balance[], network: string) => balances.find((b) => b.blockchain === network)!;
