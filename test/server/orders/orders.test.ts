// Orders' addresses and their QR codes under concurrency: an address is never issued twice (restarts: test/server/addresses/restarts.test.ts).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { decodeQr } from '../../support/qr.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { observedStatements } from '../../support/statements.js';

describe.each(DATABASES)('orders on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
  });
  afterAll(() => t?.close());

  it('derives the test wallet addresses in order, and the QR code reads back as the address', async () => {
    const wallet = hdVectors.wallets[0]!;
    for (const blockchain of ['Tron', 'Ethereum'] as const) {
      const addresses = [];
      for (let i = 0; i < 3; i++) {
        const { data } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest(`qr-${blockchain}-${i}`, { blockchain }) });
        expect(decodeQr(data!.addressQr)).toBe(data!.address);
        addresses.push(data!.address);
      }
      expect(addresses).toEqual(wallet[blockchain].addresses);
    }
  });

  it('fills the pool once for the creates of one turn, inserts them together, and loses no index to a repeat', async () => {
    const merchant = await t.createMerchant('batch');
    // The pool as other tests left it: the creates below find it empty.
    await t.db.query(`DELETE FROM address_pool WHERE network = 'Tron'`);
    await t.db.query(`UPDATE address_counters SET next_index = (SELECT COALESCE(max(address_index) + 1, 0) FROM deposit_orders WHERE blockchain = 'Tron') WHERE network = 'Tron'`);
    // Every statement, in order, also those of a transaction (on PostgreSQL a fill runs in one).
    const sql: string[] = [];
    const recorded = observedStatements(t.db, (text) => sql.push(text));
    const statements = vi.spyOn(t.db, 'query').mockImplementation(recorded.query);
    const transactions = vi.spyOn(t.db, 'transaction').mockImplementation(recorded.transaction);
    const indexes = async (externalIds: string) =>
      (await t.db.query<{ i: bigint }>('SELECT address_index AS i FROM deposit_orders WHERE merchant_id = $1 AND external_id LIKE $2', [merchant.merchantId, externalIds])).map((row) => Number(row.i));
    try {
      // 64 creates in one turn, 16 of them repeating an externalId of the same batch.
      const results = await Promise.all(Array.from({ length: 64 }, (_, i) => t.platform.orders.create(merchant.merchantId, orderRequest(`batch-${i % 48}`))));
      // The first insert found the pool empty; one fill for all 64, then one insert for all. The 16
      // repeats lost the insert to their first and read the winner's order. (After the second insert
      // the creates' takes may start the next fill in the background: it is not counted.)
      const inserts = sql.flatMap((text, at) => (text.includes('INSERT INTO deposit_orders') ? [at] : []));
      expect(inserts).toHaveLength(2);
      expect(sql.slice(0, inserts[1]).filter((text) => text.includes('INSERT INTO address_pool'))).toHaveLength(1);
      expect(sql.filter((text) => text.includes('FROM deposit_orders o WHERE o.merchant_id = $1 AND o.external_id = $2'))).toHaveLength(16);
      expect(results.filter((r) => r.outcome === 'created')).toHaveLength(48);
      expect(results.filter((r) => r.outcome === 'replayed')).toHaveLength(16);
      const addresses = results.map((r) => ('order' in r ? r.order.address : ''));
      expect(new Set(addresses).size).toBe(48);
      results.forEach((r, i) => {
        if ('order' in r) expect(r.order.address).toBe((results[i % 48] as { order: { address: string } }).order.address);
      });
      // The addresses the repeats left in the pool go to the next creates: the 64 orders hold 64 consecutive indexes.
      await Promise.all(Array.from({ length: 16 }, (_, i) => t.platform.orders.create(merchant.merchantId, orderRequest(`after-${i}`))));
      const all = [...(await indexes('batch-%')), ...(await indexes('after-%'))].sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: 64 }, (_, i) => all[0]! + i));
    } finally {
      statements.mockRestore();
      transactions.mockRestore();
    }
  });

  it('gives 200 concurrent creates with 50 repeated externalIds exactly one order each and unique addresses', async () => {
    const client = t.client();
    const ids = Array.from({ length: 200 }, (_, i) => `burst-${i < 150 ? i : i - 150}`); // 150 ids, the first 50 sent twice
    const results = await Promise.all(ids.map((id) => client.POST('/partner/v1/platforms/orders', { body: orderRequest(id, { blockchain: id.length % 2 ? 'Tron' : 'Ethereum' }) })));
    expect(results.every((r) => r.response.status === 200 || r.response.status === 201)).toBe(true);
    const byId = new Map<string, Set<string>>();
    results.forEach((r, i) => byId.set(ids[i]!, (byId.get(ids[i]!) ?? new Set()).add(r.data!.uuid)));
    expect(byId.size).toBe(150);
    expect([...byId.values()].every((uuids) => uuids.size === 1)).toBe(true);
    expect(results.filter((r) => r.response.status === 201)).toHaveLength(150);
    const [row] = await t.db.query<{ n: bigint; d: bigint; e: bigint }>(
      "SELECT count(*)::bigint AS n, count(DISTINCT address)::bigint AS d, count(DISTINCT external_id)::bigint AS e FROM deposit_orders WHERE external_id LIKE 'burst-%'",
    );
    expect(row).toEqual({ n: 150n, d: 150n, e: 150n });
  });
});
