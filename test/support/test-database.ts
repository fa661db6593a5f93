// A describe block's database of its own, for the tests that call the storage code directly (the
// migration tests, the ledger's, the feed's JSON): the open, migrate and close-and-drop that each of them
// wrote out, once.
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../src/server/db/database.js';
import { migrate } from '../../src/server/db/migrate.js';
import { freshDatabase, migratedDatabase, type DatabaseKind } from './platform.js';

/** Which migrations the database has: none, all (the run's template), or those before one (the one a test upgrades through). */
export type Migrated = 'none' | 'all' | { before: string };

/**
 * Opens a database before the block's tests and hands it to `ready` (which keeps it, and writes what the
 * tests start from); closes and drops it after them.
 */
export function useDatabase(kind: DatabaseKind, migrated: Migrated, ready: (db: Database) => Promise<void> | void): void {
  let opened: { db: Database; drop: () => Promise<void> } | undefined;
  beforeAll(async () => {
    opened = migrated === 'all' ? await migratedDatabase(kind) : await freshDatabase(kind);
    if (typeof migrated === 'object') await migrate(opened.db, migrated);
    await ready(opened.db);
  });
  afterAll(async () => {
    await opened?.db.close();
    await opened?.drop();
  });
}
