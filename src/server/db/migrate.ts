// Applies the SQL files of ./migrations in name order, each once, all pending ones in one transaction
// (a failed start changes nothing). The same files serve PGlite and PostgreSQL. An advisory lock keeps
// concurrent starts from racing.
import { readdirSync, readFileSync } from 'node:fs';
import type { Database, Sql } from './database.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const LOCK_ID = 7_412_001;

/**
 * Versions recorded under an earlier name. Two migrations once shared the number 003; they were given
 * distinct numbers without changing their order or their SQL, so a database migrated before then is
 * told their new names instead of running them again.
 */
const RENAMED: Record<string, string> = {
  '003_master_key_check': '004_master_key_check',
  '004_callback_order_and_leases': '005_callback_order_and_leases',
};

export function migrationFiles(): { version: string; sql: string }[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({ version: name.replace(/\.sql$/, ''), sql: readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8') }));
}

/** `before`: only the migrations before that version (a test's database as an older release left it). */
export async function migrate(db: Database, { before }: { before?: string } = {}): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    await renameRecordedVersions(tx);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const { version, sql } of migrationFiles().filter((m) => before === undefined || m.version < before)) {
      if (done.has(version)) continue;
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
      applied.push(version);
    }
    return applied;
  });
}

async function renameRecordedVersions(tx: Sql): Promise<void> {
  for (const [before, after] of Object.entries(RENAMED)) {
    await tx.query('UPDATE schema_migrations SET version = $2 WHERE version = $1', [before, after]);
  }
}

/**
 * Splits a migration on the semicolons that end statements: not those inside a dollar-quoted body (a
 * function's, a DO block's), which migrations write as `$$ … $$`; no other literal holds a semicolon.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let statement = '';
  let quoted = false;
  for (const part of sql.replace(/--.*$/gm, '').split(/(\$\$|;)/)) {
    if (part === '$$') quoted = !quoted;
    if (part === ';' && !quoted) {
      statements.push(statement);
      statement = '';
    } else statement += part;
  }
  statements.push(statement);
  return statements.map((s) => s.trim()).filter(Boolean);
}
