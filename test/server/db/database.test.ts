// The database layer's statements are prepared once, named after their text, on both databases: PGlite's
// own query() would parse and plan each call (src/server/db/database.ts). What the platform relies on:
// the same rows and errors as an unprepared query, a connection that stays usable after an error, and a
// statement that a DISCARD ALL dropped prepared again.
import { describe, expect, it } from 'vitest';
import { DATABASES, freshDatabase } from '../../support/platform.js';

const PREPARED_SQL = "SELECT name FROM pg_prepared_statements WHERE statement = $1 AND name LIKE 'partner\\_%'";

describe.each(DATABASES)('statements on %s', (kind) => {
  it('are prepared once and give the rows, types and nulls of the statement', async () => {
    const { db, drop } = await freshDatabase(kind);
    try {
      const text = 'SELECT $1::bigint AS big, $2::uuid[] AS ids, $3::text AS nothing, $4::timestamptz AS at';
      const ids = ['6f1c0000-0000-4000-8000-000000000001', '6f1c0000-0000-4000-8000-000000000002'];
      const params = [9_007_199_254_740_993n, ids, null, '2026-11-26T01:02:03.000Z'];
      const [first] = await db.query<{ big: bigint; ids: string[]; nothing: null; at: Date }>(text, params);
      expect(first).toEqual({ big: 9_007_199_254_740_993n, ids, nothing: null, at: new Date('2026-11-26T01:02:03.000Z') });
      expect(await db.query(text, params)).toEqual([first]);
      if (kind === 'pglite') expect(await db.query(PREPARED_SQL, [text])).toHaveLength(1); // PostgreSQL: per pooled connection
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
      await expect(db.query(insert, [1])).rejects.toMatchObject({ code: '23505' });
      await expect(db.query('SELECT $1::uuid', ['not-a-uuid'])).rejects.toMatchObject({ code: '22P02' });
      await expect(db.query('SELECT FROM nowhere')).rejects.toMatchObject({ code: '42P01' });
      await db.query(insert, [2]);
      expect(await db.query<{ id: number }>('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
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
      expect(await db.query(text, [2])).toEqual([{ n: 3 }]);
      expect(await db.query(PREPARED_SQL, [text])).toHaveLength(1);
    } finally {
      await drop();
    }
  });
});
