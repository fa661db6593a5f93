// The two migrations once numbered 003 now have distinct numbers: a database migrated under the old
// names runs neither again and records the new names; a new database records the new names alone.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { migrate, migrationFiles } from '../../../src/server/db/migrate.js';
import { DATABASES } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

const OLD_NAMES: Record<string, string> = {
  '004_master_key_check': '003_master_key_check',
  '005_callback_order_and_leases': '004_callback_order_and_leases',
};

describe('migration numbers', () => {
  it('are distinct', () => {
    const numbers = migrationFiles().map(({ version }) => version.slice(0, 3));
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});

describe.each(DATABASES)('a database migrated under the old migration names, on %s', (kind) => {
  let db: Database;

  useDatabase(kind, 'all', async (opened) => {
    db = opened;
    // What a database migrated before the renumbering recorded.
    for (const [now, before] of Object.entries(OLD_NAMES)) {
      await db.query('UPDATE schema_migrations SET version = $1 WHERE version = $2', [before, now]);
    }
  });

  it('applies nothing again and records the new names', async () => {
    expect(await migrate(db)).toEqual([]);
    const recorded = (await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version);
    expect(recorded).toEqual(migrationFiles().map(({ version }) => version));
  });
});
