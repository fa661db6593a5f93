// Coalesced reads by uuid: one query for the reads of one event-loop turn, each caller its own row,
// another merchant's row never, and nothing cached.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchedOwnedReads, uuidInBatch, type OwnedRow } from '../../../src/server/db/batched-reads.js';
import type { Database, Sql } from '../../../src/server/db/database.js';
import { DATABASES, freshDatabase, inOneSession, PLANS_SQL } from '../../support/platform.js';

interface Thing extends OwnedRow {
  value: string;
}

const SELECT = `SELECT uuid, merchant_id, value FROM things WHERE ${uuidInBatch()}`;

describe.each(DATABASES)('batched owned reads on %s', (kind) => {
  let db: Database;
  let drop: () => Promise<void>;
  const owner = randomUUID();
  const stranger = randomUUID();
  const things = Array.from({ length: 600 }, (_, i) => ({ uuid: randomUUID(), value: `thing-${i}` }));
  const foreign = randomUUID();

  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(kind));
    await db.exec('CREATE TABLE things (uuid uuid PRIMARY KEY, merchant_id uuid NOT NULL, value text NOT NULL)');
    await db.query('INSERT INTO things SELECT unnest($1::uuid[]), $2, unnest($3::text[])', [things.map((t) => t.uuid), owner, things.map((t) => t.value)]);
    await db.query("INSERT INTO things VALUES ($1, $2, 'not yours')", [foreign, stranger]);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  /** The reader over `db`, and the uuid lists of the queries it sent. */
  function counted(fail = () => false) {
    const queries: string[][] = [];
    const sql: Sql = {
      query: async <Row>(text: string, params?: readonly unknown[]) => {
        queries.push(params![0] as string[]);
        if (fail()) throw new Error('database unreachable');
        return db.query<Row>(text, params);
      },
      queryBytes: () => Promise.reject(new Error('batched reads read text')),
    };
    return { read: batchedOwnedReads<Thing>(sql, SELECT), queries };
  }

  it('answers the reads of one turn with one query, each with its own row', async () => {
    const { read, queries } = counted();
    const sample = things.slice(0, 50);
    const rows = await Promise.all(sample.map((t) => read(owner, t.uuid)));
    expect(rows.map((row) => row?.value)).toEqual(sample.map((t) => t.value));
    expect(queries).toHaveLength(1);
    expect(queries[0]).toHaveLength(50);
  });

  it('keeps one generic plan after its first runs: a lone read is not planned afresh each time', async () => {
    const text = `${SELECT} /* a statement of this test alone, its plans counted from the first */`;
    const plans = await inOneSession(kind, db, async (sql) => {
      const read = batchedOwnedReads<Thing>(sql, text);
      for (const thing of things.slice(0, 8)) expect((await read(owner, thing.uuid))?.value).toBe(thing.value);
      return sql.query(PLANS_SQL, [text]);
    });
    // PostgreSQL plans a prepared statement for its values five times, then compares; with
    // `uuid = ANY($1::uuid[])` it kept planning each lone read (8 custom plans, 0 generic).
    expect(plans).toEqual([{ name: expect.stringMatching(/^partner_fixed_/), custom_plans: 5n, generic_plans: 3n }]);
  });

  it('splits a large turn into queries of at most 256 uuids', async () => {
    const { read, queries } = counted();
    const rows = await Promise.all(things.map((t) => read(owner, t.uuid)));
    expect(rows.map((row) => row?.value)).toEqual(things.map((t) => t.value));
    expect(queries.map((q) => q.length)).toEqual([256, 256, 88]);
  });

  it("reads another merchant's row and a missing one as undefined, whatever the uuid's case", async () => {
    const { read, queries } = counted();
    const [mine, upper, theirs, missing, again] = await Promise.all([
      read(owner, things[0]!.uuid),
      read(owner, things[1]!.uuid.toUpperCase()),
      read(owner, foreign),
      read(owner, randomUUID()),
      read(owner, things[0]!.uuid),
    ]);
    expect([mine?.value, upper?.value, theirs, missing, again?.value]).toEqual(['thing-0', 'thing-1', undefined, undefined, 'thing-0']);
    expect(await read(stranger, foreign)).toMatchObject({ value: 'not yours' });
    // An id PostgreSQL cannot cast reads as missing and never joins (and fails) a batch.
    const [malformed, beside] = await Promise.all([read(owner, 'urn:uuid:' + things[0]!.uuid), read(owner, things[5]!.uuid)]);
    expect([malformed, beside?.value]).toEqual([undefined, 'thing-5']);
    // The repeated uuid was asked for once.
    expect(queries[0]).toHaveLength(4);
  });

  it('caches nothing: the next read sees a write', async () => {
    const { read, queries } = counted();
    expect((await read(owner, things[2]!.uuid))?.value).toBe('thing-2');
    await db.query("UPDATE things SET value = 'changed' WHERE uuid = $1", [things[2]!.uuid]);
    expect((await read(owner, things[2]!.uuid))?.value).toBe('changed');
    expect(queries).toHaveLength(2);
  });

  it('rejects every read of a failed query, and the next turn reads again', async () => {
    let failing = true;
    const { read } = counted(() => failing);
    const results = await Promise.allSettled([read(owner, things[3]!.uuid), read(owner, things[4]!.uuid)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    failing = false;
    expect((await read(owner, things[3]!.uuid))?.value).toBe('thing-3');
  });
});
