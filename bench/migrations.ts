// What an upgrade costs on PostgreSQL (issue 50): a database of a million orders (and their deposits
// and events) is brought from the first migration to the last one migration at a time, through the
// platform's own runner (db/migrate.ts), while creates of orders run, and for each migration its
// longest block of creates is measured: the slowest create that overlapped it. Generic over the
// migrations folder: a new migration is measured by running this again.
//
// BENCH_ORDERS sets the number of orders (1,000,000); BENCH_COMPARE=<git ref> measures that ref's
// migrations too, beside the current ones, in the same run.
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { openPostgres, type Database } from '../src/server/db/database.js';
import { migrate, migrationFiles, type MigrationFile } from '../src/server/db/migrate.js';
import { publishResults, startPostgres } from './support.js';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000);
const MERCHANTS = 100;
/** Creates run in this many sessions, each one every CREATE_EVERY_MS: about 200 a second in all. */
const CREATE_SESSIONS = 4;
const CREATE_EVERY_MS = 20;
/** What blocks creates for longer is to be made online (issue 50). */
const BLOCK_LIMIT_MS = 1000;

/**
 * Rows loaded once the migration that made their table has run, in that table's shape then: the
 * orders with the first migration, their deposits and events with the second. A third of the orders
 * are paid (a deposit each), a third expired; every order but the open ones has an event.
 */
const LOADS: Record<string, string[]> = {
  '001_orders': [
    `INSERT INTO merchants (id, name, api_key) SELECT gen_random_uuid(), 'bench merchant ' || i, 'pk_bench_' || i FROM generate_series(1, ${MERCHANTS}) AS i`,
    `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, status, min_amount, received_amount, expired_at, created_at)
     SELECT gen_random_uuid(), m.ids[1 + i % ${MERCHANTS}], 'ext-' || i, CASE WHEN i % 4 = 0 THEN 'Ethereum' ELSE 'Tron' END, 'USDT', 'cust-' || (i % 5000),
            'https://merchant.example/callbacks/deposits', i, 'T' || lpad(i::text, 33, '0'), 'data:image/png;base64,' || repeat('iVBORw0KGgoAAAANSUhEUgAAAL', 14),
            CASE i % 3 WHEN 0 THEN 'DONE' WHEN 1 THEN 'EXPIRED' ELSE 'NEW' END, 1000000, CASE WHEN i % 3 = 0 THEN 1000000 ELSE 0 END,
            now() - (${ORDERS} - i) * interval '1 second' + interval '1 hour', now() - (${ORDERS} - i) * interval '1 second'
       FROM generate_series(1, ${ORDERS}) AS i, (SELECT array_agg(id) AS ids FROM merchants) AS m`,
  ],
  '002_deposits_and_callbacks': [
    `INSERT INTO deposits (network, tx_hash, log_index, block_number, order_uuid, amount, source, credited_at)
     SELECT blockchain, md5(uuid::text), 0, 1000 + address_index, uuid, 1000000, 'chain', created_at + interval '10 minutes' FROM deposit_orders WHERE status = 'DONE'`,
    `INSERT INTO callback_outbox (webhook_id, merchant_id, order_uuid, event, url, body, state, attempts, next_attempt_at, created_at, delivered_at)
     SELECT 'msg_' || md5(uuid::text), merchant_id, uuid, CASE status WHEN 'DONE' THEN 'order.deposit' ELSE 'order.expired' END, callback_url,
            '{"uuid":"' || uuid || '","externalId":"' || external_id || '","status":"' || status || '","padding":"' || repeat('x', 300) || '"}',
            'delivered', 1, created_at + interval '1 hour', created_at + interval '10 minutes', created_at + interval '11 minutes'
       FROM deposit_orders WHERE status <> 'NEW'`,
  ],
};

/** The next create's number: its external id and address index, past the loaded orders'. */
let next = ORDERS + 1;

interface Create {
  started: number;
  ended: number;
  failed?: string;
}

/**
 * Creates of orders, as the first migration's columns make one (every later migration keeps them, and
 * adds only columns with a default or none): each session inserts one every CREATE_EVERY_MS, or as soon
 * as its last one ended when that took longer.
 */
function runCreates(url: string, merchantIds: string[]): { creates: Create[]; stop: () => Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, max: CREATE_SESSIONS });
  // DROP DATABASE … WITH (FORCE) ends any session still closing; an idle client's FATAL must not end the bench.
  pool.on('error', () => {});
  const creates: Create[] = [];
  let running = true;
  const sessions = Array.from({ length: CREATE_SESSIONS }, async (_, session) => {
    while (running) {
      const i = next++;
      const started = performance.now();
      const create: Create = { started, ended: started };
      try {
        await pool.query(
          `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
           VALUES (gen_random_uuid(), $1, $2, 'Tron', 'USDT', 'cust-bench', 'https://merchant.example/callbacks/deposits', $3, $4, 'data:image/png;base64,iVBORw0KGgo', 1000000, now() + interval '1 hour')`,
          [merchantIds[(i + session) % merchantIds.length], `create-${i}`, i, `T${String(i).padStart(33, '0')}`],
        );
      } catch (error) {
        create.failed = (error as Error).message;
      }
      create.ended = performance.now();
      creates.push(create);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, CREATE_EVERY_MS - (create.ended - started))));
    }
  });
  return {
    creates,
    stop: async () => {
      running = false;
      await Promise.all(sessions);
      await pool.end();
    },
  };
}

interface MigrationFigures {
  version: string;
  seconds: number;
  longestCreateMs: number;
  creates: number;
  slowCreates: number;
  failedCreates: number;
}

/** Every migration of `files` in turn on a new database of `serverUrl`, the rows loaded as they fit, creates running throughout. */
async function measure(serverUrl: string, files: MigrationFile[], label: string): Promise<{ figures: MigrationFigures[]; loadSeconds: number; baselineP99: number }> {
  const name = `bench_migrations_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db: Database = await openPostgres(url.href, 4);
  const figures: MigrationFigures[] = [];
  let loadSeconds = 0;
  let creates: ReturnType<typeof runCreates> | undefined;
  try {
    for (const [i, file] of files.entries()) {
      const started = performance.now();
      await migrate(db, { files: files.slice(0, i + 1) });
      const ended = performance.now();
      if (creates) {
        // The creates that overlapped the migration, once those it held have ended.
        await new Promise((resolve) => setTimeout(resolve, CREATE_EVERY_MS * 5));
        const during = creates.creates.filter((c) => c.ended >= started && c.started <= ended);
        const longest = Math.max(0, ...during.map((c) => c.ended - c.started));
        figures.push({ version: file.version, seconds: (ended - started) / 1000, longestCreateMs: longest, creates: during.length, slowCreates: during.filter((c) => c.ended - c.started > 100).length, failedCreates: during.filter((c) => c.failed).length });
        console.log(`${label} ${file.version}: ${((ended - started) / 1000).toFixed(2)} s, longest create ${longest.toFixed(0)} ms over ${during.length} creates`);
        const failure = during.find((c) => c.failed)?.failed;
        if (failure) console.log(`  a create failed: ${failure}`);
      }
      const load = LOADS[file.version];
      if (load) {
        const loadStarted = performance.now();
        await creates?.stop();
        for (const statement of load) await db.query(statement);
        await db.query('VACUUM ANALYZE');
        loadSeconds += (performance.now() - loadStarted) / 1000;
        console.log(`${label}: loaded after ${file.version} in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
        const merchants = (await db.query<{ id: string }>('SELECT id FROM merchants')).map((row) => row.id);
        creates = runCreates(url.href, merchants);
        await new Promise((resolve) => setTimeout(resolve, 2000)); // creates at their pace before the next migration
      }
    }
    const quiet = creates!.creates.filter((c) => !c.failed).map((c) => c.ended - c.started).sort((a, b) => a - b);
    return { figures, loadSeconds, baselineP99: quiet[Math.floor(quiet.length * 0.99)] ?? 0 };
  } finally {
    await creates?.stop();
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** A git ref's migrations (BENCH_COMPARE), read from the repository without a checkout. */
function migrationsAt(ref: string): MigrationFile[] {
  const dir = 'src/server/db/migrations';
  const names = execFileSync('git', ['ls-tree', '--name-only', `${ref}:${dir}/`], { encoding: 'utf8' }).split('\n').filter((n) => n.endsWith('.sql')).sort();
  return names.map((file) => ({ version: file.replace(/\.sql$/, ''), sql: execFileSync('git', ['show', `${ref}:${dir}/${file}`], { encoding: 'utf8' }) }));
}

const postgres = startPostgres(54_350);
if (!postgres) throw new Error('bench:migrations needs PostgreSQL (BENCH_DATABASE_URL, TEST_DATABASE_URL, or PostgreSQL 15 installed)');
try {
  const compareRef = process.env.BENCH_COMPARE;
  const current = await measure(postgres.url, migrationFiles(), 'current');
  const before = compareRef ? await measure(postgres.url, migrationsAt(compareRef), compareRef) : undefined;
  const row = (f: MigrationFigures, was?: MigrationFigures) =>
    `| \`${f.version}\` | ${f.seconds.toFixed(2)} | **${(f.longestCreateMs / 1000).toFixed(2)}** | ${f.creates} | ${f.slowCreates} | ${f.failedCreates} |${before ? ` ${was ? `${(was.longestCreateMs / 1000).toFixed(2)}${was.failedCreates ? ` (${was.failedCreates} failed)` : ''}` : '–'} |` : ''}`;
  const worst = current.figures.reduce((a, b) => (b.longestCreateMs > a.longestCreateMs ? b : a));
  const markdown = [
    `${ORDERS.toLocaleString('en')} orders of ${MERCHANTS} merchants (a third paid, with a deposit each; every order not open with an event), loaded after the migration that made their table (${current.loadSeconds.toFixed(0)} s); then each migration alone through the platform's runner on PostgreSQL 15 (a throwaway cluster, fsync off), while ${CREATE_SESSIONS} sessions create an order every ${CREATE_EVERY_MS} ms each. A create's usual time: ${current.baselineP99.toFixed(1)} ms at p99.`,
    '',
    `| Migration | Its time (s) | Longest create during it (s) | Creates during it | Creates over 100 ms | Creates that failed |${before ? ` Longest create at ${compareRef} (s) |` : ''}`,
    `|---|---:|---:|---:|---:|---:|${before ? '---:|' : ''}`,
    ...current.figures.map((f) => row(f, before?.figures.find((b) => b.version === f.version))),
    '',
    `Longest block of creates: **${(worst.longestCreateMs / 1000).toFixed(2)} s** (\`${worst.version}\`); the limit is ${BLOCK_LIMIT_MS / 1000} s.`,
  ].join('\n');
  publishResults('migrations', markdown, { orders: ORDERS, current, ...(before ? { compareRef, before } : {}) });
} finally {
  postgres.stop();
}
