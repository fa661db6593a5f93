// Applies the SQL files of ./migrations in name order, each once. The same files serve PGlite and
// PostgreSQL. An advisory lock keeps concurrent starts from racing.
//
// Pending migrations run in one transaction (a failed start changes nothing), up to an online one: a file
// that begins with `-- online` runs after the ones before it have committed, statement by statement,
// each committing by itself, so that no lock outlives a statement: an index is built CONCURRENTLY, a
// constraint added NOT VALID and validated apart, a backfill done in batches that each commit (a DO
// block with COMMIT in its loop). Each of its statements must be one that can run again (IF NOT EXISTS,
// a backfill of the rows still to fill): a start that stops half-way through runs the file again, and
// records its version only at its end. What an upgrade costs: docs/operating.md, bench/README.md.
import { readdirSync, readFileSync } from 'node:fs';
import { sqlState, type Database, type Session, type Sql } from './database.js';

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

export interface MigrationFile {
  /** The file's name without `.sql`, e.g. `001_orders`: recorded in schema_migrations. */
  version: string;
  sql: string;
}

export function migrationFiles(): MigrationFile[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => ({ version: name.replace(/\.sql$/, ''), sql: readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8') }));
}

/**
 * `before`: only the migrations before that version (a test's database as an older release left it).
 * `files`: these migrations instead of the folder's (bench/migrations.ts applies them one at a time).
 * The versions applied now, in order.
 */
export async function migrate(db: Database, { before, files = migrationFiles() }: { before?: string; files?: MigrationFile[] } = {}): Promise<string[]> {
  const wanted = files.filter((m) => before === undefined || m.version < before);
  const applied: string[] = [];
  for (let from = 0; from < wanted.length; ) {
    if (isOnline(wanted[from]!)) {
      if (await applyOnline(db, wanted[from]!)) applied.push(wanted[from]!.version);
      from++;
      continue;
    }
    let to = from;
    while (to < wanted.length && !isOnline(wanted[to]!)) to++;
    applied.push(...(await applyInOneTransaction(db, wanted.slice(from, to))));
    from = to;
  }
  return applied;
}

/** A migration whose statements each commit by themselves (its first line says `-- online`). */
export function isOnline(file: MigrationFile): boolean {
  return /^-- online\b/.test(file.sql);
}

/** The versions recorded, under the lock held by the caller (schema_migrations made if need be). */
async function recordedVersions(sql: Pick<Sql, 'query'>): Promise<Set<string>> {
  await sql.query('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
  await renameRecordedVersions(sql);
  return new Set((await sql.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
}

/**
 * How often a start tries the lock that another holds. It never waits for it inside a statement: a
 * CREATE INDEX CONCURRENTLY waits for every transaction older than its snapshot, and a start waiting
 * for the lock in one was such a transaction, waiting in turn for the build (a deadlock).
 */
const LOCK_RETRY_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function applyInOneTransaction(db: Database, files: MigrationFile[]): Promise<string[]> {
  for (;;) {
    const applied = await db.transaction(async (tx) => {
      const [lock] = await tx.query<{ held: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS held', [LOCK_ID]);
      if (!lock!.held) return undefined;
      const done = await recordedVersions(tx);
      const versions: string[] = [];
      for (const { version, sql } of files) {
        if (done.has(version)) continue;
        for (const statement of splitStatements(sql)) await tx.query(statement);
        await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        versions.push(version);
      }
      return versions;
    });
    if (applied) return applied;
    await sleep(LOCK_RETRY_MS);
  }
}

/**
 * An online migration: on one connection that holds the lock (a session's advisory lock, which excludes
 * the transactions' one), each statement sent alone, outside any transaction. An index that a
 * CONCURRENTLY build left invalid (a start stopped during it) is dropped first and built again.
 */
async function applyOnline(db: Database, { version, sql }: MigrationFile): Promise<boolean> {
  return db.session(async (session) => {
    while (!(await session.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1) AS held', [LOCK_ID]))[0]!.held) await sleep(LOCK_RETRY_MS);
    try {
      if ((await recordedVersions(session)).has(version)) return false;
      await session.exec(`SET lock_timeout = '${ONLINE_LOCK_TIMEOUT_MS}ms'`);
      for (const statement of splitStatements(sql)) await runOnline(session, statement);
      await session.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
      return true;
    } finally {
      await session.exec('RESET lock_timeout');
      await session.query('SELECT pg_advisory_unlock($1)', [LOCK_ID]);
    }
  });
}

/**
 * How long an online statement waits for a lock (an ALTER TABLE's, behind a transaction that uses the
 * table): the creates that come after it wait behind it, so it gives up at once and tries again a
 * second later, ONLINE_LOCK_TRIES times at most (lock_timeout, as GitLab's and strong_migrations'
 * helpers do).
 */
const ONLINE_LOCK_TIMEOUT_MS = 500;
const ONLINE_LOCK_TRIES = 60;
const LOCK_NOT_AVAILABLE = '55P03';

async function runOnline(session: Session, statement: string): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      const index = /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+(\w+)/i.exec(statement)?.[1];
      if (index) {
        const [invalid] = await session.query('SELECT 1 FROM pg_index WHERE indexrelid = to_regclass($1) AND NOT indisvalid', [index]);
        if (invalid) await session.exec(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
      }
      await session.exec(statement);
      return;
    } catch (error) {
      if (sqlState(error) !== LOCK_NOT_AVAILABLE || tries >= ONLINE_LOCK_TRIES) throw error;
      await sleep(1000);
    }
  }
}

async function renameRecordedVersions(tx: Pick<Sql, 'query'>): Promise<void> {
  for (const [before, after] of Object.entries(RENAMED)) {
    await tx.query('UPDATE schema_migrations SET version = $2 WHERE version = $1', [before, after]);
  }
}

/**
 * Splits a migration on the semicolons that end statements: outside a dollar-quoted body (`$$ … $$`, a
 * DO block's), where a semicolon ends one of its own statements. Migrations hold no other literal semicolon.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  for (const [i, part] of sql.replace(/--.*$/gm, '').split('$$').entries()) {
    if (i % 2 === 1) {
      current += `$$${part}$$`; // inside a dollar-quoted body: kept whole
      continue;
    }
    const pieces = part.split(';');
    current += pieces[0];
    for (const piece of pieces.slice(1)) {
      statements.push(current);
      current = piece;
    }
  }
  statements.push(current);
  return statements.map((s) => s.trim()).filter(Boolean);
}
