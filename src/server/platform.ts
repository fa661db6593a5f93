// Opens the platform: its database (./db/open.ts), its migrations, its services and its HTTP app.
// The one place that wires the parts together.
import { createAddressDeriver, tronAddressToId } from './addresses/derivation.js';
import type { Network } from './shared/network.js';
import { ConfigError, type Config } from './config.js';
import type { Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import { postgresRecord, recordDatabase } from './db/data-directory.js';
import { buildApp, type App, type AppDeps } from './http/app.js';
import { createMetrics } from './http/metrics.js';
import { Merchants } from './merchants/merchants.js';
import { Orders } from './orders/orders.js';
import { checkMasterKey } from './merchants/master-key.js';
import { SecretKeeper, sandboxMasterKey } from './merchants/secrets.js';
import type { Clock } from './shared/time.js';
import { Withdrawals } from './withdrawals/withdrawals.js';
import { startJobs, type Jobs } from './jobs/jobs.js';

export interface Platform {
  config: Config;
  db: Database;
  merchants: Merchants;
  orders: Orders;
  withdrawals: Withdrawals;
  app: App;
  secrets: SecretKeeper;
  /** Starts the scanners, the callback dispatcher and the expiry job (serve does; tests choose). */
  startJobs(): Promise<Jobs>;
  close(): Promise<void>;
}

/**
 * The settings the owning modules judge: each xpub by the deriver (a bad one is a configuration error
 * naming its setting), a Tron token contract given as a T… address turned into the hex the node
 * speaks. The same config given twice comes out the same.
 */
export function settleConfig(config: Config): Config {
  const networks = { ...config.networks };
  for (const network of Object.keys(config.networks) as Network[]) {
    const settings = config.networks[network];
    try {
      createAddressDeriver(network, settings.xpub);
    } catch (error) {
      throw new ConfigError(`${network.toUpperCase()}_XPUB: ${(error as Error).message}`);
    }
    if (!settings.tokenContract.startsWith('0x')) {
      const tokenContract = tronContractHex(settings.tokenContract);
      networks[network] = { ...settings, tokenContract, chain: settings.chain && { ...settings.chain, tokenContract } };
    }
  }
  return { ...config, networks };
}

function tronContractHex(address: string): string {
  try {
    return '0x' + Buffer.from(tronAddressToId(address)).toString('hex');
  } catch {
    throw new ConfigError(`TRON_TOKEN_CONTRACT must be a contract address (0x + 40 hex, or a T… address), got "${address}"`);
  }
}

export interface OpenOptions {
  now?: Clock;
  logger?: AppDeps['logger'];
  /** An already open database (tests); otherwise opened from the config. */
  db?: Database;
  /** A server (serve): a new embedded database is created apart, so that the process keeps less memory. */
  longLived?: boolean;
}

export async function openPlatform(settings: Config, options: OpenOptions = {}): Promise<Platform> {
  const config = settleConfig(settings);
  const now = options.now ?? Date.now;
  const { db, release } = options.db ? { db: options.db, release: () => {} } : await openDatabase(config, { longLived: options.longLived ?? false });
  try {
    await migrate(db);
    const secrets = new SecretKeeper(config.secretKey ?? sandboxMasterKey(config.dataDir));
    // A PostgreSQL platform's data directory (the sandbox's master key) says whose it is: a command
    // without DATABASE_URL there is refused instead of making an empty embedded database (issue 57).
    if (config.databaseUrl && !options.db) recordDatabase(config.dataDir, postgresRecord(config.databaseUrl));
    await checkMasterKey(db, secrets);
    const merchants = new Merchants(db, secrets, config.mode);
    const orders = new Orders(db, config, now);
    const withdrawals = new Withdrawals(db, config);
    const metrics = createMetrics();
    const app = buildApp({ config, db, merchants, orders, withdrawals, paymentPageKey: secrets.paymentPageKey(), cursorKey: secrets.cursorKey(), now, metrics, ...(options.logger === undefined ? {} : { logger: options.logger }) });
    let jobs: Promise<Jobs> | undefined;
    return {
      config,
      db,
      merchants,
      orders,
      withdrawals,
      app,
      secrets,
      startJobs() {
        jobs ??= startJobs({ config, db, secrets, now, log: app.fastify.log, gauges: metrics.chain, leaseGauge: metrics.jobLease, payoutGauges: metrics.payouts });
        return jobs;
      },
      async close() {
        await (await jobs?.catch(() => undefined))?.stop();
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
