// The representations' tables (src/server/db/json-fields.ts): each table's names are the contract's
// fields, in its order (generated/openapi.json); the JSON the database writes from a table is, parsed,
// the object TypeScript makes of the same row (on PGlite); a row added to a table shows in the JSON, the
// columns and the object alike; and docs/design.md's "Adding a field to the order" names the two places
// that change, as the code has them.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_COLUMNS, DELIVERY_FIELDS, DELIVERY_JSON_SQL, eventDelivery, type DeliveryColumns } from '../../../src/server/callbacks/history.js';
import { EVENT_FIELDS } from '../../../src/server/callbacks/feed.js';
import type { Database } from '../../../src/server/db/database.js';
import { jsonObjectSql, rowMapper, selectedColumns, type JsonField } from '../../../src/server/db/json-fields.js';
import { ORDER_COLUMNS, ORDER_FIELDS, ORDER_JSON_COLUMNS, toCreatedDepositOrder, toDepositOrder, type OrderRow } from '../../../src/server/orders/order-rows.js';
import { toWithdrawal, WITHDRAWAL_FIELDS, type WithdrawalRow } from '../../../src/server/withdrawals/withdrawal-rows.js';
import { freshDatabase } from '../../support/platform.js';

const ROOT = resolve(import.meta.dirname, '../../..');
type Schema = { properties?: Record<string, unknown>; allOf?: Schema[]; $ref?: string };
const openapi = JSON.parse(readFileSync(resolve(ROOT, 'generated/openapi.json'), 'utf8')) as { components: { schemas: Record<string, Schema> } };
const schemas = openapi.components.schemas;

/** A schema's property names in the contract's order, through its allOf and $refs. */
function properties(name: string): string[] {
  const of = (schema: Schema): string[] => [
    ...(schema.$ref ? of(schemas[schema.$ref.split('/').at(-1)!]!) : []),
    ...(schema.allOf ?? []).flatMap(of),
    ...Object.keys(schema.properties ?? {}),
  ];
  return of(schemas[name]!);
}

const names = (fields: readonly JsonField<never>[]) => fields.map((field) => field.name);

describe("the representations' tables", () => {
  it("name the contract's fields, in the contract's order", () => {
    // The platform writes the order's paymentUrl after the database's text: last.
    const order = properties('DepositOrder');
    expect(names(ORDER_FIELDS)).toEqual([...order.filter((name) => name !== 'paymentUrl'), 'paymentUrl']);
    expect(ORDER_FIELDS.at(-1)).toMatchObject({ name: 'paymentUrl', appended: true });
    expect(names(WITHDRAWAL_FIELDS)).toEqual(properties('Withdrawal'));
    expect(names(EVENT_FIELDS)).toEqual(properties('PlatformEvent'));
    expect(names(DELIVERY_FIELDS)).toEqual(properties('EventDelivery'));
    // What the create answers and callbacks carry: the order less what only a read shows.
    const created = properties('CreatedDepositOrder').filter((name) => name !== 'paymentUrl');
    expect(Object.keys(toCreatedDepositOrder({ ...ORDER_ROW, description: 'd' }))).toEqual(created);
  });

  it('shows a row added to a table in the JSON, the columns and the object alike', () => {
    type Row = { a: string; b: bigint | null };
    const fields: JsonField<Row>[] = [{ name: 'a', column: 'a', sql: { expression: 'o.a', json: 'to_json' } }];
    const added: JsonField<Row>[] = [...fields, { name: 'b', column: 'b', optional: true, wire: Number, sql: { expression: 'o.b', json: 'number' } }];
    expect(jsonObjectSql(fields)).toBe(`concat('{"a":', to_json(o.a), '}')`);
    expect(jsonObjectSql(added)).toBe(`concat('{"a":', to_json(o.a), ',"b":' || o.b, '}')`);
    expect(selectedColumns(added)).toBe('o.a, o.b');
    expect(rowMapper(added)({ a: 'x', b: 5n })).toEqual({ a: 'x', b: 5 });
    expect(rowMapper(added)({ a: 'x', b: null })).toEqual({ a: 'x' });
  });

  it('makes a withdrawal of its row with the optional fields only when they have a value', () => {
    const row = { ...WITHDRAWAL_ROW, stage: null, tx_id: '0xabc', failure_reason: null, callback_url: null };
    expect(toWithdrawal(row)).toEqual({
      uuid: row.uuid, amount: 1.5, blockchain: 'Tron', currencyCode: 'USDT', destinationAddress: row.destination_address,
      status: 'DONE', createAt: '2026-12-01 10:00:00', externalId: 'w-1', fee: 1, txId: '0xabc',
    });
  });
});

const ORDER_ROW: OrderRow = {
  uuid: '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b', blockchain: 'Tron', currency: 'USDT', external_id: 'ext "1" \\ é',
  customer_id: 'cust\u0001\u2028😀', callback_url: 'https://merchant.example/cb', return_url: null, description: null,
  address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', address_qr: 'data:image/png;base64,AAAA', status: 'NEW',
  min_amount: 1000000n, received_amount: 0n, expired_at: '2026-12-01 11:00:00',
};

const WITHDRAWAL_ROW: WithdrawalRow = {
  uuid: '1b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b', merchant_id: '2b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b', external_id: 'w-1',
  amount_units: 1500000n, fee_units: 1000000n, blockchain: 'Tron', currency_code: 'USDT', destination_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
  status: 'DONE', stage: null, tx_id: null, failure_reason: null, callback_url: null, source: 'api',
  created_at: new Date('2026-12-01T10:00:00Z'), updated_at: new Date('2026-12-01T10:00:00Z'), settled_without_proof: false,
};

describe('the JSON the database writes from a table, on PGlite', () => {
  let db: Database;
  beforeAll(async () => {
    ({ db } = await freshDatabase('pglite', undefined, 'migrated'));
  });
  afterAll(() => db?.close());

  /** The order's columns and JSON, as the database makes them of one row (its values as parameters). */
  async function orderWritten(row: OrderRow): Promise<{ read: OrderRow; json: string }> {
    const [read] = await db.query<OrderRow & { order_json: string }>(
      `SELECT ${ORDER_COLUMNS}, ${ORDER_JSON_COLUMNS}
         FROM (VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9, $10::bigint, $11, $12::bigint, $13, $14))
           AS o (uuid, blockchain, currency, external_id, customer_id, address, address_qr, expired_at, status, min_amount, description, received_amount, callback_url, return_url)`,
      [row.uuid, row.blockchain, row.currency, row.external_id, row.customer_id, row.address, row.address_qr, `${row.expired_at}+00`, row.status,
        row.min_amount, row.description, row.received_amount, row.callback_url, row.return_url],
    );
    const { order_json: json, ...columns } = read!;
    return { read: columns, json };
  }

  it("writes the order as TypeScript makes it of the same row: keys, order and values", async () => {
    for (const row of [ORDER_ROW, { ...ORDER_ROW, description: 'Quote " é \n end', status: 'DONE' as const, received_amount: 9007199254740991n }]) {
      const { read, json } = await orderWritten(row);
      expect(read).toEqual(row);
      const parsed = JSON.parse(`${json}"link"}`);
      const made = { ...toDepositOrder(read), unconfirmedDeposits: [], paymentUrl: 'link' };
      expect(parsed).toEqual(made);
      expect(Object.keys(parsed)).toEqual(Object.keys(made));
      expect(`${json}"link"}`).toBe(JSON.stringify(made));
    }
  });

  it("writes an event with its delivery as eventDelivery makes it of the same row, and leaves out what is null", async () => {
    // The feed's statement keeps its text to itself: made here from the same table.
    const sql = jsonObjectSql(EVENT_FIELDS);
    const [row] = await db.query<DeliveryColumns & { json: string; delivery_json: string }>(
      `SELECT ${DELIVERY_COLUMNS}, ${DELIVERY_JSON_SQL} AS delivery_json, ${sql} AS json
         FROM (VALUES ('msg_1'::text, 'order.deposit'::text, '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b'::uuid, NULL::uuid, '2026-12-01 10:00:00+00'::timestamptz,
                       '{"b":1,"a":2}'::text, 'pending'::text, 'https://m.example/"cb"'::text, 2, '2026-12-01 10:05:00+00'::timestamptz, NULL::timestamptz))
           AS o (webhook_id, event, order_uuid, withdrawal_uuid, created_at, body, state, url, attempts, next_attempt_at, delivered_at)`,
    );
    const { json, delivery_json: deliveryJson, ...columns } = row!;
    expect(deliveryJson).toBe(JSON.stringify(eventDelivery(columns)));
    expect(json).toBe(
      `{"id":"msg_1","type":"order.deposit","orderUuid":"0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b","createdAt":"2026-12-01 10:00:00","data":{"b":1,"a":2},"delivery":${deliveryJson}}`,
    );
  });
});

describe('docs/design.md, "Adding a field to the order"', () => {
  const design = readFileSync(resolve(ROOT, 'docs/design.md'), 'utf8');
  const section = design.split(/^## /m).find((part) => part.startsWith('Adding a field to the order\n'));
  const code = (path: string) =>
    readFileSync(resolve(ROOT, path), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

  it('names the two places: the contract and ORDER_FIELDS, from which the JSON, the columns and the object are made', () => {
    expect(section).toBeDefined();
    for (const place of ['openapi/components/schemas/DepositOrderCore.yaml', 'ORDER_FIELDS', 'src/server/orders/order-rows.ts']) expect(section).toContain(`\`${place}\``);
    const rows = code('src/server/orders/order-rows.ts');
    expect(rows).toMatch(/ORDER_JSON_SQL = jsonObjectSql\(ORDER_FIELDS\)/);
    expect(rows).toMatch(/ORDER_COLUMNS = `\$\{selectedColumns\(ORDER_FIELDS\)\}/);
    expect(rows).toMatch(/rowMapper\(ORDER_FIELDS\)/);
  });

  it("finds each of the order's field names in one row of the table, and nowhere else in order-rows.ts but the create's answer without receivedAmount", () => {
    const rows = code('src/server/orders/order-rows.ts');
    const elsewhere = rows.replace(/\b(?:name|column): '[^']*'|\['[^']*'\]|Omit<[^>]*>/g, ''); // the table's rows, and the types named after the contract's
    for (const name of properties('DepositOrder')) {
      expect([...rows.matchAll(new RegExp(`\\bname: '${name}'`, 'g'))], name).toHaveLength(1);
      expect([...elsewhere.matchAll(new RegExp(`'${name}'`, 'g'))], name).toHaveLength(name === 'receivedAmount' ? 1 : 0);
    }
  });
});
