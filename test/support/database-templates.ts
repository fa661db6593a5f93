// Databases made once per test run and copied for every test that needs one. A new PGlite cluster costs
// seconds of CPU (its initdb runs in WebAssembly) and the suite opens dozens, so the global setup
// (./global-setup.ts) makes one PGlite cluster, dumps it empty and migrated, and on PostgreSQL migrates
// one database to serve as a template. freshDatabase and migratedDatabase (./platform.ts) start from
// these copies; where no global setup ran (a benchmark) they start from scratch.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openPglite, openPostgres } from '../../src/server/db/database.js';
import { migrate } from '../../src/server/db/migrate.js';

export type Schema = 'empty' | 'migrated';

/** The directory holding pglite-empty.tar and pglite-migrated.tar. */
const DUMPS_VARIABLE = 'PARTNER_TEST_PGLITE_DUMPS';
/** The name of the migrated template database on TEST_DATABASE_URL's server. */
const POSTGRES_VARIABLE = 'PARTNER_TEST_POSTGRES_TEMPLATE';
const TEMPLATES_ROOT = resolve(import.meta.dirname, '../../.tmp');

const loaded = new Map<Schema, Blob>();

/** The dump of a PGlite cluster with `schema`, or undefined where no global setup made one. */
export function pgliteDump(schema: Schema): Blob | undefined {
  const dir = process.env[DUMPS_VARIABLE];
  if (!dir) return undefined;
  let dump = loaded.get(schema);
  if (!dump) loaded.set(schema, (dump = new Blob([readFileSync(join(dir, `pglite-${schema}.tar`))])));
  return dump;
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

/**
 * Makes the templates with the platform's own migrate() and publishes them to the test workers (which
 * inherit this process's environment); returns what removes them.
 */
export async function makeTemplates(postgresUrl: string | undefined): Promise<() => Promise<void>> {
  // Inside the project (.tmp/ is ignored by git), where no clean-up of the machine's /tmp reaches them mid-run.
  mkdirSync(TEMPLATES_ROOT, { recursive: true });
  const dir = mkdtempSync(join(TEMPLATES_ROOT, 'templates-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true })); // also when vitest ends without a teardown
  const template = `partner_template_${randomBytes(6).toString('hex')}`;
  const remove = async () => {
    delete process.env[DUMPS_VARIABLE];
    delete process.env[POSTGRES_VARIABLE];
    rmSync(dir, { recursive: true, force: true });
    if (postgresUrl) await onServer(postgresUrl, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  };
  try {
    const cluster = join(dir, 'cluster');
    await dumpCluster(cluster, join(dir, 'pglite-empty.tar')); // its first open runs initdb
    const db = await openPglite(cluster);
    await migrate(db);
    await db.close();
    await dumpCluster(cluster, join(dir, 'pglite-migrated.tar'));
    rmSync(cluster, { recursive: true, force: true });
    process.env[DUMPS_VARIABLE] = dir;

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
