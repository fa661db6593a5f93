// Opens the platform: its database (PGlite in the data directory, or PostgreSQL), its migrations,
// its services and its HTTP app. The one place that wires the parts together.
import { join } from 'node:path';
import type { Config } from './config.js';
import { lockDataDirectory, restrictToOwner } from './data-directory.js';
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

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>): Promise<{ db: Database; release: () => void }> {
  if (config.databaseUrl) return { db: await openPostgres(config.databaseUrl, config.databasePoolSize), release: () => {} };
  const release = lockDataDirectory(config.dataDir);
  try {
    const db = await openPglite(join(config.dataDir, 'pglite'));
    restrictToOwner(config.dataDir);
    return { db, release };
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
    const app = buildApp({ config, db, merchants, orders, withdrawals, paymentPageKey: secrets.paymentPageKey(), now, ...(options.logger === undefined ? {} : { logger: options.logger }) });
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
        await orders.close();
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
