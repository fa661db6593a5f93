// Opens the platform: its database (PGlite in the data directory, or PostgreSQL), its migrations,
// its services and its HTTP app. The one place that wires the parts together.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { openPglite, openPostgres, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { buildApp, type App } from './http/app.js';
import { Merchants } from './merchants.js';
import { Orders } from './orders.js';
import { SecretKeeper, sandboxMasterKey } from './secrets.js';
import type { Clock } from './time.js';
import { Withdrawals } from './withdrawals.js';
import { startWorkers, type Workers } from './workers.js';

export interface Platform {
  config: Config;
  db: Database;
  merchants: Merchants;
  orders: Orders;
  withdrawals: Withdrawals;
  app: App;
  secrets: SecretKeeper;
  /** Starts the scanners, the callback dispatcher and the expiry job (serve does; tests choose). */
  startWorkers(): Promise<Workers>;
  close(): Promise<void>;
}

export class DataDirectoryBusyError extends Error {}

/**
 * PGlite is one process's database: a lock file keeps a second process (another server, or an
 * operator command while the server runs) from opening the same data directory.
 */
function lockDataDirectory(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockFile = join(dataDir, 'partner-api.lock');
  if (existsSync(lockFile)) {
    const pid = Number(readFileSync(lockFile, 'utf8'));
    let alive = false;
    try {
      alive = pid > 0 && pid !== process.pid && (process.kill(pid, 0), true);
    } catch {
      alive = false;
    }
    if (alive) {
      throw new DataDirectoryBusyError(
        `the embedded database in ${dataDir} is open in process ${pid} (a running platform?): stop it first, ` +
          'or give both the same DATABASE_URL of a PostgreSQL server',
      );
    }
    rmSync(lockFile, { force: true }); // left by a process that died
  }
  writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
  return () => rmSync(lockFile, { force: true });
}

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>): Promise<{ db: Database; release: () => void }> {
  if (config.databaseUrl) return { db: await openPostgres(config.databaseUrl, config.databasePoolSize), release: () => {} };
  const release = lockDataDirectory(config.dataDir);
  try {
    return { db: await openPglite(join(config.dataDir, 'pglite')), release };
  } catch (error) {
    release();
    throw error;
  }
}

export class MasterKeyMismatchError extends Error {}

/** The first open records the master key's check value; every later one must bring the same key. */
async function checkMasterKey(db: Database, secrets: SecretKeeper): Promise<void> {
  const check = secrets.keyCheck();
  await db.query("INSERT INTO platform_settings (name, value) VALUES ('master_key_check', $1) ON CONFLICT (name) DO NOTHING", [check]);
  const [row] = await db.query<{ value: string }>("SELECT value FROM platform_settings WHERE name = 'master_key_check'");
  if (row!.value !== check) {
    throw new MasterKeyMismatchError(
      'this database was created with another master key: start with the SECRET_KEY it was created with ' +
        '(a sandbox keeps its key in DATA_DIR/master.key), or merchants\' credentials would not match',
    );
  }
}

export interface OpenOptions {
  now?: Clock;
  logger?: boolean;
  /** An already open database (tests); otherwise opened from the config. */
  db?: Database;
}

export async function openPlatform(config: Config, options: OpenOptions = {}): Promise<Platform> {
  const now = options.now ?? Date.now;
  const { db, release } = options.db ? { db: options.db, release: () => {} } : await openDatabase(config);
  try {
    await migrate(db);
    const secrets = new SecretKeeper(config.secretKey ?? sandboxMasterKey(config.dataDir));
    await checkMasterKey(db, secrets);
    const merchants = new Merchants(db, secrets, config.mode);
    const orders = new Orders(db, config, now);
    const withdrawals = new Withdrawals(db);
    const app = buildApp({ config, db, merchants, orders, withdrawals, now, ...(options.logger === undefined ? {} : { logger: options.logger }) });
    let workers: Promise<Workers> | undefined;
    return {
      config,
      db,
      merchants,
      orders,
      withdrawals,
      app,
      secrets,
      startWorkers() {
        workers ??= startWorkers({ config, db, secrets, now, log: app.fastify.log, gauges: app.metrics.chain, leaderGauge: app.metrics.jobLeader });
        return workers;
      },
      async close() {
        await (await workers?.catch(() => undefined))?.stop();
        await app.fastify.close();
        if (!options.db) await db.close();
        release();
      },
    };
  } catch (error) {
    if (!options.db) await db.close().catch(() => {});
    release();
    throw error;
  }
}
