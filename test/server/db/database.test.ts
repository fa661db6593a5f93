// The database layer's statements are prepared once, named after their text, on both databases: PGlite's
// own query() would parse and plan each call (src/server/db/database.ts). What the platform relies on:
// the same rows and errors as an unprepared query, a connection that stays usable after an error, a
// statement that a DISCARD ALL dropped prepared again, and columns read as bytes that hold their text.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DATABASES, freshDatabase } from '../../support/platform.js';
import { textOf } from '../../support/utf8.js';

/** The platform's prepared statement of a text, and how many times it was executed. */
const PREPARED_SQL = "SELECT name, generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE statement = $1 AND name LIKE 'partner\\_%'";

describe.each(DATABASES)('statements on %s', (kind) => {
  it('are prepared once and give the rows, types and nulls of the statement', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      const text = 'SELECT $1::bigint AS big, $2::uuid[] AS ids, $3::text AS nothing, $4::timestamptz AS at';
      const ids = ['6f1c0000-0000-4000-8000-000000000001', '6f1c0000-0000-4000-8000-000000000002'];
      const params = [9_007_199_254_740_993n, ids, null, new Date('2026-11-26T01:02:03.000Z')];
      const [first] = await db.query<{ big: bigint; ids: string[]; nothing: null; at: Date }>(text, params);
      expect(first).toEqual({ big: 9_007_199_254_740_993n, ids, nothing: null, at: new Date('2026-11-26T01:02:03.000Z') });
      expect(await db.query(text, params)).toEqual([first]);
      // The same as a statement PGlite's own query() runs (in a transaction, this layer does not prepare).
      expect(await db.transaction((tx) => tx.query(text, params))).toEqual([first]);
      // One preparation, executed twice (PostgreSQL prepares once per pooled connection).
      if (kind === 'pglite') expect(await db.query(PREPARED_SQL, [text])).toEqual([{ name: expect.any(String), runs: 2n }]);
    } finally {
      await drop();
    }
  });

  it('give answers larger than one write of the database whole: many rows, long and non-ASCII text, JSON', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      // Rows of about 200 KB, and 3,000 small ones: on PGlite both come in several writes, split inside a message.
      const text = `SELECT g AS n, CASE WHEN g <= $1 THEN repeat('é€x', 66000) END AS long, json_build_object('g', g, 'name', 'Zoë') AS object
                      FROM generate_series(1, $2::int) AS g`;
      const rows = await db.query<{ n: number; long: string | null; object: unknown }>(text, [3, 3000]);
      expect(rows).toHaveLength(3000);
      expect(rows.slice(0, 4).map((row) => row.long?.length ?? null)).toEqual([198_000, 198_000, 198_000, null]);
      expect(rows[2]!.long).toBe('é€x'.repeat(66000));
      expect(rows.map((row) => row.n)).toEqual(Array.from({ length: 3000 }, (_, i) => i + 1));
      expect(rows[2999]!.object).toEqual({ g: 3000, name: 'Zoë' });
      // What PGlite's own query() gives (in a transaction, this layer does not prepare).
      expect(await db.transaction((tx) => tx.query(text, [3, 3000]))).toEqual(rows);
    } finally {
      await drop();
    }
  });

  it('fail with the database error, and the next statement runs', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      await db.exec('CREATE TABLE t (id int PRIMARY KEY)');
      const insert = 'INSERT INTO t (id) VALUES ($1)';
      await db.query(insert, [1]);
      await expect(db.query(insert, [1])).rejects.toMatchObject({ code: '23505', constraint: 't_pkey', message: expect.stringMatching(/duplicate key/) });
      await expect(db.query('SELECT $1::uuid', ['not-a-uuid'])).rejects.toMatchObject({ code: '22P02' });
      const later = 'SELECT count(*)::int AS n FROM later';
      await expect(db.query(later)).rejects.toMatchObject({ code: '42P01' }); // not prepared: tried again
      await db.exec('CREATE TABLE later (id int)');
      expect(await db.query(later)).toEqual([{ n: 0 }]);
      await db.query(insert, [2]);
      expect(await db.query<{ id: number }>('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    } finally {
      await drop();
    }
  });

  it('give the columns asked as bytes as their UTF-8 bytes (PGlite) or as text (PostgreSQL), the others as query gives them', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      // Two answers of several writes each, one held while the next is read: each keeps its own bytes.
      const text = `SELECT g AS n, CASE WHEN g % 3 <> 0 THEN concat('{"g":', g, ',"name":"Zoë ', repeat('é€😀', g % 200), '"}') END AS json
                      FROM generate_series(1, $1::int) AS g`;
      const expected = (g: number) => (g % 3 === 0 ? null : `{"g":${g},"name":"Zoë ${'é€😀'.repeat(g % 200)}"}`);
      const first = await db.queryBytes<{ n: number; json: Uint8Array | string | null }>(text, [2000], ['json']);
      const second = await db.queryBytes<{ n: number; json: Uint8Array | string | null }>(text, [1500], ['json']);
      for (const [held, count] of [[first, 2000], [second, 1500]] as const) {
        expect(held.rows.map((row) => row.n)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
        expect(held.rows.map((row) => (row.json === null ? null : textOf(row.json)))).toEqual(held.rows.map((row) => expected(row.n)));
        expect(held.rows.every((row) => row.json === null || (kind === 'pglite' ? row.json instanceof Uint8Array : typeof row.json === 'string'))).toBe(true);
      }
      first.release();
      first.release(); // once only: a buffer given back twice would be two answers' at once
      second.release();
      // Released buffers hold the next answers, each its own, four held at once.
      const held = [];
      for (const count of [4, 5, 6, 7]) held.push(await db.queryBytes<{ json: Uint8Array | string | null }>(text, [count], ['json']));
      held.forEach((answer, i) => expect(answer.rows.map((row) => row.json && textOf(row.json))).toEqual(Array.from({ length: 4 + i }, (_, n) => expected(n + 1))));
      // In a transaction, and for a column not asked, text as query gives it.
      const inTransaction = await db.transaction((tx) => tx.queryBytes<{ json: string | null }>(text, [4], ['json']));
      expect(inTransaction.rows.map((row) => row.json)).toEqual([1, 2, 3, 4].map(expected));
      expect((await db.queryBytes<{ json: string | null }>(text, [4], ['other'])).rows.map((row) => row.json)).toEqual([1, 2, 3, 4].map(expected));
      await expect(db.queryBytes('SELECT $1::uuid', ['not-a-uuid'], ['uuid'])).rejects.toMatchObject({ code: '22P02' });
    } finally {
      await drop();
    }
  });

  it.runIf(kind === 'pglite')('are prepared again after DISCARD ALL dropped them', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      const text = 'SELECT $1::int + 1 AS n';
      expect(await db.query(text, [1])).toEqual([{ n: 2 }]);
      await db.exec('DISCARD ALL');
      expect(await db.query(PREPARED_SQL, [text])).toHaveLength(0);
      const again = await Promise.all([db.query(text, [2]), db.query(text, [3]), db.query('SELECT $1::text AS t', ['x'])]);
      expect(again).toEqual([[{ n: 3 }], [{ n: 4 }], [{ t: 'x' }]]);
      expect(await db.query(PREPARED_SQL, [text])).toHaveLength(1);
      await db.close();
      await expect(db.query(text, [1])).rejects.toThrow(/closed/i);
    } finally {
      await drop();
    }
  });

  it.runIf(kind === 'pglite')('wait for an open transaction: none lands between its statements, nor sees what it rolls back', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      await db.exec('CREATE TABLE t (id int)');
      let inside!: () => void;
      const opened = new Promise<void>((resolve) => (inside = resolve));
      const rolledBack = db.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id) VALUES (1)');
        inside();
        await new Promise((resolve) => setTimeout(resolve, 50)); // the prepared read below is asked meanwhile
        throw new Error('rolled back');
      });
      await opened;
      const read = db.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
      await expect(rolledBack).rejects.toThrow('rolled back');
      expect(await read).toEqual([{ n: 0 }]);
    } finally {
      await drop();
    }
  });
});

// PGlite's private members (named with an underscore) may change in any release: database.ts uses only
// its public API (issue 48, item 3).
describe('the PGlite driver', () => {
  it('is reached through its public API only', () => {
    const source = readFileSync(new URL('../../../src/server/db/database.ts', import.meta.url), 'utf8');
    expect(source.match(/\bdb\._\w+/g) ?? []).toEqual([]);
  });
});
