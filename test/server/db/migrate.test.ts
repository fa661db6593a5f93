// The migrations' runner (issue 50): pending migrations in one transaction, up to an online one, whose
// statements each commit by themselves (an index built CONCURRENTLY, a constraint validated apart, a
// backfill in batches), recorded only at its end; a start stopped half-way through runs it again, an
// index a failed CONCURRENTLY build left invalid is built again, and two starts at once apply it once.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { isOnline, migrate, splitStatements, type MigrationFile } from '../../../src/server/db/migrate.js';
import { DATABASES, freshDatabase, TEST_DATABASE_URL } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';
import { openPostgres } from '../../../src/server/db/database.js';

describe('splitting a migration into statements', () => {
  it('keeps a DO block whole, and drops comments', () => {
    const sql = `-- a comment; with a semicolon
CREATE TABLE a (x int);
DO $$ BEGIN
  LOOP
    UPDATE a SET x = 1 WHERE x IS NULL; -- its own statement
    COMMIT;
    EXIT;
  END LOOP;
END $$;
CREATE INDEX CONCURRENTLY IF NOT EXISTS a_x ON a (x)`;
    expect(splitStatements(sql)).toEqual([
      'CREATE TABLE a (x int)',
      'DO $$ BEGIN\n  LOOP\n    UPDATE a SET x = 1 WHERE x IS NULL; \n    COMMIT;\n    EXIT;\n  END LOOP;\nEND $$',
      'CREATE INDEX CONCURRENTLY IF NOT EXISTS a_x ON a (x)',
    ]);
  });

  it('knows an online migration by its first line', () => {
    expect(isOnline({ version: '1', sql: '-- online: each statement commits by itself\nSELECT 1' })).toBe(true);
    expect(isOnline({ version: '1', sql: '-- a migration that says online later\nSELECT 1' })).toBe(false);
  });
});

const base: MigrationFile = { version: '900_items', sql: 'CREATE TABLE items (id bigint PRIMARY KEY, label text, sorted text)' };
const fill: MigrationFile = { version: '901_fill', sql: 'INSERT INTO items (id, label) SELECT i, \'item \' || i FROM generate_series(1, 2500) AS i' };
/** An online migration: a column backfilled in batches of 1000 that each commit, a constraint validated apart, an index built concurrently. */
const online = (index = 'CREATE INDEX CONCURRENTLY IF NOT EXISTS items_sorted ON items (sorted)'): MigrationFile => ({
  version: '902_items_sorted',
  sql: `-- online: each statement commits by itself
ALTER TABLE items ADD COLUMN IF NOT EXISTS batches integer;
DO $$ DECLARE changed integer; BEGIN
  LOOP
    UPDATE items SET sorted = lower(label), batches = (SELECT count(DISTINCT batches) FROM items WHERE batches IS NOT NULL) + 1
     WHERE id IN (SELECT id FROM items WHERE sorted IS NULL ORDER BY id LIMIT 1000);
    GET DIAGNOSTICS changed = ROW_COUNT;
    EXIT WHEN changed = 0;
    COMMIT;
  END LOOP;
END $$;
ALTER TABLE items DROP CONSTRAINT IF EXISTS items_sorted_set;
ALTER TABLE items ADD CONSTRAINT items_sorted_set CHECK (sorted IS NOT NULL) NOT VALID;
ALTER TABLE items VALIDATE CONSTRAINT items_sorted_set;
${index}`,
});
const after: MigrationFile = { version: '903_after', sql: 'CREATE TABLE after_items (id bigint)' };

describe.each(DATABASES)('the runner on %s', (kind) => {
  let db: Database;
  useDatabase(kind, 'none', (opened) => {
    db = opened;
  });

  const recorded = async () => (await db.query<{ version: string }>("SELECT version FROM schema_migrations WHERE version >= '900' ORDER BY version")).map((r) => r.version);
  const indexes = async () => db.query<{ name: string; valid: boolean }>("SELECT indexrelid::regclass::text AS name, indisvalid AS valid FROM pg_index WHERE indrelid = 'items'::regclass AND indexrelid::regclass::text = 'items_sorted'");

  it('runs the transactional ones before an online one, the online one statement by statement, and the rest after', async () => {
    expect(await migrate(db, { files: [base, fill, online(), after] })).toEqual(['900_items', '901_fill', '902_items_sorted', '903_after']);
    expect(await recorded()).toEqual(['900_items', '901_fill', '902_items_sorted', '903_after']);
    const [row] = await db.query<{ missing: bigint; batches: number }>('SELECT count(*) FILTER (WHERE sorted IS NULL) AS missing, max(batches) AS batches FROM items');
    expect(Number(row!.missing)).toBe(0);
    expect(row!.batches).toBe(3); // 2500 rows, 1000 a batch, each committed
    expect(await indexes()).toEqual([{ name: 'items_sorted', valid: true }]);
    const [constraint] = await db.query<{ convalidated: boolean }>("SELECT convalidated FROM pg_constraint WHERE conname = 'items_sorted_set'");
    expect(constraint!.convalidated).toBe(true);
    expect(await migrate(db, { files: [base, fill, online(), after] })).toEqual([]);
  });

  it('runs an online migration that stopped half-way again, and builds again an index a failed CONCURRENTLY build left invalid', async () => {
    await db.exec("DELETE FROM schema_migrations WHERE version = '902_items_sorted'; DROP INDEX items_sorted; ALTER TABLE items DROP CONSTRAINT items_sorted_set; UPDATE items SET sorted = NULL, batches = NULL WHERE id > 2000; INSERT INTO items (id, label, sorted) VALUES (3001, 'item 1', 'item 1')");
    // A unique index on values that are not unique: the build fails, leaves an invalid index, and the version is not recorded.
    const failing = online('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS items_sorted ON items (sorted)');
    await expect(migrate(db, { files: [base, fill, failing] })).rejects.toThrow(/could not create unique index|duplicate key/);
    expect(await recorded()).not.toContain('902_items_sorted');
    expect(await indexes()).toEqual([{ name: 'items_sorted', valid: false }]);
    // What the backfill committed before the failure stays: run again, the file finishes.
    expect(Number((await db.query<{ n: bigint }>('SELECT count(*) AS n FROM items WHERE sorted IS NULL'))[0]!.n)).toBe(0);
    await db.exec('DELETE FROM items WHERE id = 3001');
    expect(await migrate(db, { files: [base, fill, failing] })).toEqual(['902_items_sorted']);
    expect(await indexes()).toEqual([{ name: 'items_sorted', valid: true }]);
  });
});

describe.runIf(TEST_DATABASE_URL)('online migrations beside other sessions on PostgreSQL', () => {
  it('apply an online migration once: the second waits for the first, then finds it done', async () => {
    const { db, url, drop } = await freshDatabase('postgres');
    const other = await openPostgres(url!);
    try {
      const files = [base, fill, online(), after];
      const [first, second] = await Promise.all([migrate(db, { files }), migrate(other, { files })]);
      expect([...first, ...second].sort()).toEqual(['900_items', '901_fill', '902_items_sorted', '903_after']);
      const [row] = await db.query<{ batches: number }>('SELECT max(batches) AS batches FROM items');
      expect(row!.batches).toBe(3);
    } finally {
      await other.close();
      await db.close();
      await drop();
    }
  });

  it('never leaves writers queued behind an ALTER TABLE that waits for a lock: it gives up after 0.5 s and tries again', async () => {
    const { db, url, drop } = await freshDatabase('postgres');
    const holder = await openPostgres(url!);
    const writer = await openPostgres(url!);
    try {
      await migrate(db, { files: [base, fill] });
      // A transaction that read the table holds a lock the ALTER TABLE must wait for, for 3 s.
      const held = holder.transaction(async (tx) => {
        await tx.query('SELECT count(*) FROM items');
        await new Promise((resolve) => setTimeout(resolve, 3000));
      });
      const migrating = migrate(db, { files: [base, fill, online(), after] });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Inserts meanwhile: behind a waiting ALTER TABLE they would wait the holder's 3 s out.
      const waits: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        await writer.query('INSERT INTO items (id, label) VALUES ($1, $2)', [10_000 + i, `late ${i}`]);
        waits.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await held;
      expect(await migrating).toEqual(['902_items_sorted', '903_after']);
      expect(Math.max(...waits), `insert waits ${waits.map((w) => w.toFixed(0)).join(', ')} ms`).toBeLessThan(1500);
    } finally {
      await holder.close();
      await writer.close();
      await db.close();
      await drop();
    }
  });
});
