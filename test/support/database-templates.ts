// Databases made once and copied for every test that needs one. A new PGlite cluster costs
// seconds of CPU (its initdb runs in WebAssembly) and the suite opens dozens, so the global setup
// (./global-setup.ts) makes one data directory with the platform's own first open and dumps its PGlite
// cluster empty and migrated (kept between runs until the database code changes: pgliteTemplates
// below), and on PostgreSQL migrates one database per run to serve as a template.
// freshDatabase and migratedDatabase (./platform.ts) start from these dumps, and the real-process tests
// from copies of the data directory (copiedDataDirectory); where no global setup ran (a benchmark) they
// start from scratch.
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openPglite, openPostgres, type Database } from '../../src/server/db/database.js';
import { migrate } from '../../src/server/db/migrate.js';
import { restrictToOwner } from '../../src/server/db/data-directory.js';
import { openDatabase } from '../../src/server/db/open.js';
// @ts-expect-error: a plain JavaScript script, without declarations
import { inputsHash } from '../../scripts/build-changed.mjs';
import { ROOT } from './packages.js';

export type Schema = 'empty' | 'migrated';

/** The directory holding pglite-empty.tar, pglite-migrated.tar and the template data directory. */
const DUMPS_VARIABLE = 'PARTNER_TEST_PGLITE_DUMPS';
/** The name of the migrated template database on TEST_DATABASE_URL's server. */
const POSTGRES_VARIABLE = 'PARTNER_TEST_POSTGRES_TEMPLATE';

const loaded = new Map<Schema, Blob>();

/** The dump of a PGlite cluster with `schema`, or undefined where no global setup made one. */
export function pgliteDump(schema: Schema): Blob | undefined {
  const dir = process.env[DUMPS_VARIABLE];
  if (!dir) return undefined;
  let dump = loaded.get(schema);
  if (!dump) loaded.set(schema, (dump = new Blob([readFileSync(join(dir, `pglite-${schema}.tar`))])));
  return dump;
}

/**
 * A migrated in-memory PGlite database of the run's template, for one test. Opening one from the dump
 * costs about 0.85 CPU-s and the suite asks for about a hundred, so a closed one is handed out again:
 * emptied back to the template's rows (those the migrations wrote), its sequences restarted and its
 * session discarded, for a small part of that. One whose schema a test changed (a trigger, a column, an
 * index, a function) is closed for good, and so is one handed out REUSES times (deleted rows stay in
 * PGlite's memory until a vacuum). The handle a test closed stays closed: a late query through it fails
 * as it would on a closed database and never reaches the next test's data.
 */
export async function migratedPglite(): Promise<Database> {
  const spare = spares.pop();
  const db = spare?.db ?? (await openPglite(undefined, { from: pgliteDump('migrated')! }));
  const uses = (spare?.uses ?? 0) + 1;
  template ??= await describeTemplate(db);
  let closed = false;
  const refused = () => Promise.reject(new Error('the database is closed'));
  return {
    kind: db.kind,
    query: (text, params, options) => (closed ? refused() : db.query(text, params, options)),
    queryBytes: (text, params, bytes, options) => (closed ? refused() : db.queryBytes(text, params, bytes, options)),
    transaction: (work) => (closed ? refused() : db.transaction(work)),
    exec: (text) => (closed ? refused() : db.exec(text)),
    session: (work) => (closed ? refused() : db.session(work)),
    async close() {
      if (closed) return;
      closed = true;
      if (uses < REUSES && spares.length < MAX_SPARES && (await resetToTemplate(db, template!))) spares.push({ db, uses });
      else await db.close();
    },
  };
}

/** How many tests one database serves, and how many closed ones a worker keeps. */
const REUSES = 8;
const MAX_SPARES = 2;
const spares: { db: Database; uses: number }[] = [];

interface TemplateState {
  fingerprint: string;
  tables: string[];
  sequences: string[];
  /** The rows the migrations wrote, as JSON, by table. */
  rows: Map<string, string>;
}
let template: TemplateState | undefined;

/**
 * A digest of the database's schemas: the public tables with their columns and defaults, indexes,
 * constraints, triggers (enabled or not) and functions with their bodies, row security policies, and
 * the schemas themselves (a temporary one included).
 */
const SCHEMA_FINGERPRINT_SQL = `
  SELECT md5(string_agg(item, ',' ORDER BY item)) AS fingerprint FROM (
    SELECT 'schema ' || nspname::text AS item FROM pg_namespace
    UNION ALL SELECT 'relation ' || relname::text || ' ' || relkind::text || ' ' || relrowsecurity::text FROM pg_class WHERE relnamespace = 'public'::regnamespace
    UNION ALL SELECT 'column ' || a.attrelid::regclass::text || '.' || a.attname::text || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace
    UNION ALL SELECT 'constraint ' || conname::text || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT 'function ' || proname::text || ' ' || md5(prosrc) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
    UNION ALL SELECT 'policy ' || polname::text FROM pg_policy) schema`;

async function describeTemplate(db: Database): Promise<TemplateState> {
  const [{ fingerprint }] = (await db.query<{ fingerprint: string }>(SCHEMA_FINGERPRINT_SQL)) as [{ fingerprint: string }];
  const tables = (await db.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).map((r) => r.name);
  const sequences = (await db.query<{ name: string }>("SELECT sequencename AS name FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1")).map((r) => r.name);
  const rows = new Map<string, string>();
  for (const table of tables) {
    const [{ json }] = (await db.query<{ json: string }>(`SELECT coalesce(json_agg(t), '[]')::text AS json FROM "${table}" t`)) as [{ json: string }];
    if (json !== '[]') rows.set(table, json);
  }
  return { fingerprint, tables, sequences, rows };
}

/** Empties the database back to the template's rows; false when its schema is no longer the template's. */
async function resetToTemplate(db: Database, state: TemplateState): Promise<boolean> {
  try {
    // Temporary tables, prepared statements, cursors, LISTEN, settings and advisory locks of the test's
    // session go first (on its own: DISCARD ALL cannot run inside a transaction), then what is left must
    // be the template's schema.
    await db.exec('DISCARD ALL');
    const [{ fingerprint }] = (await db.query<{ fingerprint: string }>(SCHEMA_FINGERPRINT_SQL)) as [{ fingerprint: string }];
    if (fingerprint !== state.fingerprint) return false;
    await db.transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica'); // no foreign-key order to follow
      for (const table of state.tables) await tx.query(`DELETE FROM "${table}"`);
      for (const [table, json] of state.rows) await tx.query(`INSERT INTO "${table}" SELECT * FROM json_populate_recordset(NULL::"${table}", $1::json)`, [json]);
      for (const sequence of state.sequences) await tx.query(`ALTER SEQUENCE "${sequence}" RESTART`);
    });
    return true;
  } catch {
    return false; // a database a test left unusable is not handed out again
  }
}

/** The template data directory's name in the templates' directory. */
const DATA_DIRECTORY = 'data-directory';

/**
 * A new data directory (under the system's temporary folder, named after `prefix`) as the first start of
 * `partner-api serve` or a command leaves it before it looks at the master key: the PGlite cluster
 * created and migrated, no master.key, no key check recorded, no merchant. The first process started on
 * it records its own key (a SECRET_KEY, or a new master.key in the sandbox) and makes the sandbox
 * merchant, as on an empty directory; it saves the seconds of CPU that creating the cluster costs. Tests
 * of that creation itself use empty directories. Empty where no global setup made the template.
 */
export function copiedDataDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const templates = process.env[DUMPS_VARIABLE];
  if (templates) cpSync(join(templates, DATA_DIRECTORY), dir, { recursive: true });
  return dir;
}

/** The migrated template database on TEST_DATABASE_URL's server, or undefined where no global setup made one. */
export function postgresTemplate(): string | undefined {
  return process.env[POSTGRES_VARIABLE];
}

/** Runs one statement (CREATE or DROP DATABASE) on the server of `serverUrl`. */
export async function onServer(serverUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** The URL of database `name` on the server of `serverUrl`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Dumps the PGlite cluster in `dataDir` (closed) to `file`. */
async function dumpCluster(dataDir: string, file: string): Promise<void> {
  const cluster = new PGlite({ dataDir });
  try {
    await cluster.waitReady;
    writeFileSync(file, new Uint8Array(await (await cluster.dumpDataDir('none')).arrayBuffer()));
  } finally {
    await cluster.close();
  }
}

/** Closes a database opened by openDatabase and releases its data directory's lock. */
async function closeDatabase(opened: { db: { close(): Promise<void> }; release: () => void }): Promise<void> {
  await opened.db.close();
  opened.release();
}

/**
 * What the PGlite templates are made of: the platform's database code and migrations, PGlite (its
 * version is in the lockfile) and this file. Made once for these and kept between runs (they cost about
 * 9 s and 12 CPU-s at every start), under node_modules/.cache, where `npm ci` starts them afresh.
 */
const TEMPLATE_INPUTS = ['src/server/db', 'package-lock.json', 'test/support/database-templates.ts'];
const TEMPLATES_CACHE = join(ROOT, 'node_modules', '.cache', 'partner-api');
const TEMPLATES_PREFIX = 'pglite-templates-';
/**
 * A run older than this no longer reads a set of templates made from other inputs, and no longer makes
 * one (a set takes seconds to make; one still half-made after an hour is a killed run's): both are removed.
 */
const STALE_MS = 3600_000;
const MAKING_PREFIX = 'making-';

/** The PGlite templates for the sources as they are now: the cached set, or one made now. */
async function pgliteTemplates(): Promise<string> {
  const dir = join(TEMPLATES_CACHE, `${TEMPLATES_PREFIX}${(inputsHash as (root: string, inputs: string[]) => string)(ROOT, TEMPLATE_INPUTS).slice(0, 16)}`);
  mkdirSync(TEMPLATES_CACHE, { recursive: true });
  for (const name of readdirSync(TEMPLATES_CACHE)) {
    const other = join(TEMPLATES_CACHE, name);
    const removable = (name.startsWith(TEMPLATES_PREFIX) && other !== dir) || name.startsWith(MAKING_PREFIX);
    // Another run may be removing it at the same moment: then it is gone already.
    const modified = removable ? statSync(other, { throwIfNoEntry: false })?.mtimeMs : undefined;
    if (modified !== undefined && Date.now() - modified > STALE_MS) rmSync(other, { recursive: true, force: true });
  }
  if (existsSync(dir)) {
    const now = new Date();
    utimesSync(dir, now, now); // in use: not stale for another run
    return dir;
  }
  // Made aside and renamed into place whole, so that a run never reads a half-made set (another run
  // making the same set at once: the first rename wins).
  const making = mkdtempSync(join(TEMPLATES_CACHE, MAKING_PREFIX));
  try {
    // The platform's own opening (lock, cluster, owner-only modes), as a first start does it: the first runs initdb.
    const dataDirectory = { dataDir: join(making, DATA_DIRECTORY), databaseUrl: undefined, databasePoolSize: 1 };
    const cluster = join(dataDirectory.dataDir, 'pglite');
    await closeDatabase(await openDatabase(dataDirectory));
    await dumpCluster(cluster, join(making, 'pglite-empty.tar'));
    const opened = await openDatabase(dataDirectory);
    await migrate(opened.db);
    await closeDatabase(opened);
    await dumpCluster(cluster, join(making, 'pglite-migrated.tar'));
    restrictToOwner(dataDirectory.dataDir); // as the platform leaves it: the dumps' openings wrote files with PGlite's modes
    renameSync(making, dir);
  } catch (error) {
    rmSync(making, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
  return dir;
}

/**
 * Publishes the templates to the test workers (which inherit this process's environment): PGlite's,
 * and on PostgreSQL a database migrated with the platform's own migrate(); returns what removes the latter.
 */
export async function makeTemplates(postgresUrl: string | undefined): Promise<() => Promise<void>> {
  const template = `partner_template_${randomBytes(6).toString('hex')}`;
  const remove = async () => {
    delete process.env[DUMPS_VARIABLE];
    delete process.env[POSTGRES_VARIABLE];
    if (postgresUrl) await onServer(postgresUrl, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  };
  try {
    process.env[DUMPS_VARIABLE] = await pgliteTemplates();
    if (postgresUrl) {
      await onServer(postgresUrl, `CREATE DATABASE ${template}`);
      const postgres = await openPostgres(databaseUrl(postgresUrl, template), 1);
      await migrate(postgres);
      await postgres.close(); // a template database must have no connections while it is copied
      process.env[POSTGRES_VARIABLE] = template;
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return remove;
}
