// A real platform for tests: a listening server on a fresh database (PGlite in memory, or a fresh
// PostgreSQL database when TEST_DATABASE_URL is set), merchants, signed raw requests and typed clients.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPartnerClient, type PartnerClient } from '../../src/client/index.js';
import { signRequest } from '../../src/signing/index.js';
import { readConfig, type Config } from '../../src/server/config.js';
import { openPglite, openPostgres, type Database, type Sql } from '../../src/server/db/database.js';
import { migrate } from '../../src/server/db/migrate.js';
import { openPlatform, type Platform } from '../../src/server/platform.js';
import type { MerchantCredentials } from '../../src/server/merchants/secrets.js';
import type { Clock } from '../../src/server/shared/time.js';
import type { Network } from '../../src/server/shared/network.js';
import { sandboxDeposit } from '../../src/server/orders/sandbox-deposits.js';
import { changePolicy } from '../../src/server/withdrawals/policy.js';
import { hdVectors } from '../fixtures/vectors.js';
import { contractCheckingFetch, contractViolations } from './contract.js';
import { databaseUrl, migratedPglite, onServer, pgliteDump, postgresTemplate, type Schema } from './database-templates.js';

export type DatabaseKind = 'pglite' | 'postgres';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/** The databases the storage and API tests run on: PGlite always, PostgreSQL when configured. */
export const DATABASES: DatabaseKind[] = TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

if (!TEST_DATABASE_URL) {
  console.warn('TEST_DATABASE_URL is not set: the PostgreSQL runs of the storage and API tests are skipped (.ci/run sets it).');
}

/**
 * A database of its own for one test platform (on `serverUrl`'s server), empty or with the platform's
 * migrations applied; dropped by the returned cleanup. A copy of the run's template when the global
 * setup made one (./database-templates.ts), otherwise made here.
 */
export async function freshDatabase(kind: DatabaseKind, serverUrl = TEST_DATABASE_URL, schema: Schema = 'empty'): Promise<{ db: Database; url?: string; drop: () => Promise<void> }> {
  if (kind === 'pglite') {
    if (schema === 'migrated' && pgliteDump('migrated')) return { db: await migratedPglite(), drop: async () => {} };
    const dump = pgliteDump(schema);
    const db = await openPglite(undefined, dump ? { from: dump } : {});
    if (schema === 'migrated' && !dump) await migrate(db);
    return { db, drop: async () => {} };
  }
  const name = `partner_test_${randomBytes(6).toString('hex')}`;
  const template = schema === 'migrated' && serverUrl === TEST_DATABASE_URL ? postgresTemplate() : undefined;
  await onServer(serverUrl!, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = databaseUrl(serverUrl!, name);
  const db = await openPostgres(url);
  if (schema === 'migrated' && !template) await migrate(db);
  return { db, url, drop: () => onServer(serverUrl!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A fresh database with the platform's migrations applied, as the platform leaves it at its first start. */
export const migratedDatabase = (kind: DatabaseKind) => freshDatabase(kind, TEST_DATABASE_URL, 'migrated');

/** How often each prepared statement of this session with a text was planned each way. */
export const PLANS_SQL = "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1 AND name LIKE 'partner\\_%'";

/**
 * `work` in one session, where pg_prepared_statements shows what it prepared: PGlite has one; on
 * PostgreSQL a pooled statement is prepared per connection, so the work holds one in a transaction.
 */
export function inOneSession<T>(kind: DatabaseKind, db: Database, work: (sql: Sql) => Promise<T>): Promise<T> {
  return kind === 'pglite' ? work(db) : db.transaction(work);
}

export const TEST_SECRET_KEY = randomBytes(32).toString('base64');

export function testConfig(env: Record<string, string> = {}): Config {
  const dataDir = mkdtempSync(join(tmpdir(), 'partner-test-'));
  return readConfig({ DATA_DIR: dataDir, SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'silent', RATE_LIMIT: '100000/60', ...env });
}

export interface TestPlatform {
  platform: Platform;
  db: Database;
  /** The fresh PostgreSQL database's URL (undefined on PGlite): other processes may share it. */
  databaseUrl: string | undefined;
  baseUrl: string;
  merchant: MerchantCredentials;
  createMerchant(name?: string): Promise<MerchantCredentials>;
  /** A typed client whose every response is checked against the contract. */
  client(credentials?: MerchantCredentials, now?: Clock): PartnerClient;
  /** A signed request with any method, path, body and headers, its response checked against the contract. */
  signed(method: string, path: string, options?: { body?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string>; credentials?: MerchantCredentials; timestamp?: number }): Promise<Response>;
  /** An unsigned (or hand-signed) request, its response checked against the contract. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  count(table: string): Promise<number>;
  /** Credits `units` to the merchant's balance on `network`: a new order of its own and a sandbox deposit to it. */
  fund(network: Network, units: bigint, credentials?: MerchantCredentials): Promise<void>;
  /** The platform's error-level log lines so far (JSON): a test of bad input expects none. */
  errorLogs(): string[];
  /** Every log line so far (JSON), at the level the test asked for (`logLevel`; errors only by default). */
  logs(): string[];
  close(): Promise<void>;
}

export async function startTestPlatform(
  kind: DatabaseKind,
  options: { env?: Record<string, string>; now?: Clock; logLevel?: 'info' | 'error' } = {},
): Promise<TestPlatform> {
  const config = testConfig(options.env);
  const { db, url: databaseUrl, drop } = await migratedDatabase(kind);
  const logLines: string[] = [];
  // Errors only unless asked, kept for errorLogs() and logs(); nothing on the test's output.
  const logger = { stream: { write: (line: string) => void logLines.push(line) } };
  const platform = await openPlatform({ ...config, logLevel: options.logLevel ?? 'error' }, { db, logger, ...(options.now ? { now: options.now } : {}) });
  const address = await platform.app.fastify.listen({ host: '127.0.0.1', port: 0 });
  const merchant = await platform.merchants.create('test merchant');
  const clock = options.now ?? Date.now;

  const checkedFetch = contractCheckingFetch();
  const checked = async (method: string, path: string, response: Response) => {
    const text = await response.clone().text();
    const violations = contractViolations(method, path, response.status, response.headers.get('content-type'), text);
    if (violations.length > 0) throw new Error(`response breaks the contract (${method} ${path} → ${response.status}):\n${violations.join('\n')}\n${text.slice(0, 300)}`);
    return response;
  };
  return {
    platform,
    db,
    databaseUrl,
    baseUrl: address,
    merchant,
    createMerchant: (name = 'another merchant') => platform.merchants.create(name),
    client: (credentials = merchant, now = clock) =>
      createPartnerClient({ baseUrl: address, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret, fetch: checkedFetch, now }),
    async signed(method, path, { body, headers = {}, credentials = merchant, timestamp = Math.floor(clock() / 1000) } = {}) {
      const signature = await signRequest({ secret: credentials.apiSecret, timestamp, method, target: path, body: body ?? '' });
      const response = await fetch(address + path, {
        method,
        headers: { 'X-Api-Key': credentials.apiKey, 'X-Timestamp': String(timestamp), 'X-Signature': signature, ...headers },
        ...(body === undefined ? {} : { body }),
      });
      return checked(method, path, response);
    },
    fetch: async (path, init = {}) => checked(init.method ?? 'GET', path, await fetch(address + path, init)),
    errorLogs: () => logLines.filter((line) => (JSON.parse(line) as { level: number }).level >= 50),
    logs: () => [...logLines],
    async fund(network, units, credentials = merchant) {
      const created = await platform.orders.create(credentials.merchantId, {
        externalId: `fund-${randomUUID()}`, blockchain: network, currency: 'USDT', customerId: 'funding', callbackUrl: 'https://merchant.example/callbacks/funding',
      });
      if (created.outcome !== 'created') throw new Error(`funding order: ${created.outcome}`);
      const deposit = { merchantId: credentials.merchantId, orderUuid: created.order.uuid, amount: units, seed: randomUUID(), now: new Date(clock()), watchWindowSeconds: config.watchWindowSeconds };
      const result = await sandboxDeposit(db, deposit);
      if (result.outcome !== 'credited') throw new Error(`funding deposit: ${result.outcome}`);
    },
    async count(table) {
      const [row] = await db.query<{ n: bigint }>(`SELECT count(*)::bigint AS n FROM ${table}`);
      return Number(row!.n);
    },
    async close() {
      await platform.close();
      await db.close();
      await drop();
      rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A live platform (payouts on chain are live mode's only: a sandbox's balances are made up and it refuses
 * a payout key), its test merchant allowed withdrawals through the API as the operator allows them.
 */
export async function livePlatform(kind: DatabaseKind, env: Record<string, string>): Promise<TestPlatform> {
  const live = { PARTNER_API_MODE: 'live', PUBLIC_URL: 'https://pay.partner.example', TRON_XPUB: hdVectors.wallets[1]!.Tron.xpub, ETHEREUM_XPUB: hdVectors.wallets[1]!.Ethereum.xpub };
  const t = await startTestPlatform(kind, { env: { ...live, ...env } });
  await changePolicy(t.db, t.merchant.merchantId, { enabled: true });
  return t;
}
