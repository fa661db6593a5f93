// The order's read and list items as the database writes them (ORDER_JSON_SQL) with the link after them
// (orderWriter) against the order as callbacks carry it (toDepositOrder) with its transfers and link,
// serialized: the same text, byte for byte, whatever the row holds; and amounts a JSON number could not
// carry exactly (migration 013), and an address or QR code JSON would have to escape (migration 014),
// are refused by the database.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWriter } from '../../../src/server/http/json-text.js';
import { listOrders } from '../../../src/server/orders/order-list.js';
import { readOrderRow, toDepositOrder, type OrderJsonRow } from '../../../src/server/orders/order-rows.js';
import { PaymentLinks } from '../../../src/server/payment-page/links.js';
import { orderRequest } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const MAX_EXACT = 9007199254740991n;
const LINKS = new PaymentLinks(randomBytes(32), () => 'http://127.0.0.1:8080');
const writer = orderWriter(LINKS);

/** The order's JSON as the read and the list send it. */
function shown(order: OrderJsonRow): string {
  const buffer = Buffer.alloc(writer.bytes(order));
  expect(writer.write(buffer, 0, order)).toBe(buffer.length);
  return buffer.toString('utf8');
}

describe.each(DATABASES)('the order as JSON on %s', (kind) => {
  let t: TestPlatform;
  let merchantId: string;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
    merchantId = (await t.createMerchant('order-json')).merchantId;
  });
  afterAll(() => t?.close());

  async function created(externalId: string, description?: string): Promise<string> {
    const result = await t.platform.orders.create(merchantId, orderRequest(externalId, description === undefined ? {} : { description }));
    if (!('order' in result)) throw new Error(`create ${externalId}: ${result.outcome}`);
    return result.order.uuid;
  }

  /** The order as callbacks carry it, with the transfers not yet confirmed as the test inserted them. */
  async function writtenByTheCode(uuid: string, unconfirmed: { txId: string; amount: bigint; confirmations: number }[]): Promise<string> {
    const row = (await readOrderRow(t.db, merchantId, uuid))!;
    const unconfirmedDeposits = unconfirmed.map((u) => ({ txId: u.txId, amount: Number(u.amount), confirmations: u.confirmations, requiredConfirmations: 19 }));
    return JSON.stringify({ ...toDepositOrder(row), unconfirmedDeposits, paymentUrl: LINKS.url(uuid) });
  }

  it('is the text callbacks carry, with the transfers and the link: without a description, with an awkward one, paid, and with transfers seen', async () => {
    const plain = await created('json-plain');
    const awkward = await created('json-awkward', 'Quote " backslash \\ </script> é 😀 \u2028 end');
    // Characters the contract refuses at a create, written in the database as an older row could hold them.
    const controls = await created('json-controls');
    await t.db.query('UPDATE deposit_orders SET description = $2, customer_id = $3 WHERE uuid = $1', [controls, 'tab\tnewline\nnul-less \u0001 \u001f', 'cust "quoted" \\ \u0002 é']);
    await t.db.query(`UPDATE deposit_orders SET received_amount = $2, status = 'DONE' WHERE uuid = $1`, [plain, MAX_EXACT]);
    const seen = [
      { txId: `0x${'b'.repeat(64)}`, amount: 1n, confirmations: 3, block: 12, logIndex: 0 },
      { txId: `0x${'a'.repeat(64)}`, amount: MAX_EXACT, confirmations: 1, block: 14, logIndex: 7 },
      // No chain's hash holds these; to_json writes them as JSON.stringify does all the same.
      { txId: 'tx "quoted" \\ \u0003 é', amount: 5n, confirmations: 2, block: 15, logIndex: 0 },
    ];
    for (const u of seen) {
      await t.db.query(
        `INSERT INTO unconfirmed_deposits (network, order_uuid, tx_hash, log_index, block_number, amount, confirmations, required_confirmations, seen_at)
         VALUES ('Tron', $1, $2, $3, $4, $5, $6, 19, now())`,
        [awkward, u.txId, u.logIndex, u.block, u.amount, u.confirmations],
      );
    }
    try {
      const expected = new Map([
        [plain, await writtenByTheCode(plain, [])],
        [awkward, await writtenByTheCode(awkward, seen)],
        [controls, await writtenByTheCode(controls, [])],
      ]);
      for (const [uuid, text] of expected) {
        expect(shown((await t.platform.orders.read(merchantId, uuid))!)).toBe(text);
      }
      // The list's items are the reads' text.
      const page = await listOrders(t.db, merchantId, {}, undefined, 100);
      for (const [uuid, text] of expected) expect(shown(page.rows.find((order) => order.uuid === uuid)!)).toBe(text);
      page.release();
      expect(JSON.parse(expected.get(awkward)!).unconfirmedDeposits.map((u: { amount: number }) => u.amount)).toEqual([1, Number(MAX_EXACT), 5]);
      expect(JSON.parse(expected.get(plain)!)).not.toHaveProperty('description');
    } finally {
      await t.db.query('DELETE FROM unconfirmed_deposits WHERE order_uuid = $1', [awkward]);
    }
  });

  it('refuses an amount a JSON number cannot carry exactly, and changes nothing', async () => {
    const uuid = await created('json-too-large');
    const before = await writtenByTheCode(uuid, []);
    await expect(t.db.query('UPDATE deposit_orders SET received_amount = $2 WHERE uuid = $1', [uuid, MAX_EXACT + 1n])).rejects.toThrow(/deposit_orders_amounts_exact_in_json/);
    await expect(t.db.query('UPDATE deposit_orders SET min_amount = $2 WHERE uuid = $1', [uuid, MAX_EXACT + 1n])).rejects.toThrow(/deposit_orders_amounts_exact_in_json/);
    await expect(
      t.db.query(
        `INSERT INTO unconfirmed_deposits (network, order_uuid, tx_hash, log_index, block_number, amount, confirmations, required_confirmations, seen_at)
         VALUES ('Tron', $1, 'tx', 0, 1, $2, 1, 19, now())`,
        [uuid, MAX_EXACT + 1n],
      ),
    ).rejects.toThrow(/unconfirmed_deposits_amount_exact_in_json/);
    expect(shown((await t.platform.orders.read(merchantId, uuid))!)).toBe(before);
  });

  it('refuses an address or a QR code that JSON would have to escape (they are written as they are), and changes nothing', async () => {
    const uuid = await created('json-address-escape');
    const before = await writtenByTheCode(uuid, []);
    for (const bad of ['quote " in it', 'back\\slash', 'new\nline', 'nul-less \u0001']) {
      for (const column of ['address', 'address_qr']) {
        await expect(t.db.query(`UPDATE deposit_orders SET ${column} = $2 WHERE uuid = $1`, [uuid, bad])).rejects.toThrow(/deposit_orders_addresses_need_no_json_escape/);
      }
    }
    // What the platform makes passes: its QR codes are base64 data URLs.
    expect(JSON.parse(before).addressQr).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    expect(shown((await t.platform.orders.read(merchantId, uuid))!)).toBe(before);
  });
});
