// One small interface over the two databases the platform runs on: embedded PGlite (default) and a
// PostgreSQL server (DATABASE_URL). Both parse int8 as bigint so that money stays exact.
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import pg from 'pg';

export interface Sql {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A connection of its own, for what lives as long as a session: advisory locks. */
export interface Session extends Sql {
  /** True once the connection is gone: its session's locks are released by the server. */
  readonly lost: boolean;
  close(): Promise<void>;
}

export interface Database extends Sql {
  readonly kind: 'pglite' | 'postgres';
  /** A session outside the pool; absent on PGlite, whose one process owns the database. */
  openSession?(): Promise<Session>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  /** Runs several statements at once (migrations). */
  exec(text: string): Promise<void>;
  close(): Promise<void>;
}

const INT8 = 20;
const parseInt8 = (value: string) => BigInt(value);

/** `from`: a dump (PGlite's dumpDataDir) to start from instead of a new cluster (the tests' templates). */
export async function openPglite(dataDir: string | undefined, from?: Blob): Promise<Database> {
  const db = new PGlite({ ...(dataDir ? { dataDir } : {}), ...(from ? { loadDataDir: from } : {}), parsers: { [pgliteTypes.INT8]: parseInt8 } });
  await db.waitReady;
  const query = async <Row>(runner: Pick<PGlite, 'query'>, text: string, params?: readonly unknown[]) =>
    (await runner.query<Row>(text, params as unknown[] | undefined)).rows;
  return {
    kind: 'pglite',
    query: (text, params) => query(db, text, params),
    transaction: (work) => db.transaction((tx) => work({ query: (text, params) => query(tx, text, params) })),
    exec: async (text) => void (await db.exec(text)),
    close: () => db.close(),
  };
}

/** More distinct statements than the platform has: past it, a statement is sent unprepared. */
const MAX_PREPARED = 200;

/**
 * Each statement is prepared once per connection, named after its text, so PostgreSQL parses and plans
 * it once instead of at every call (a quarter more signed GETs a second in bench:server). The platform's
 * statements are a fixed set of texts with parameters; the cap only guards against one built from data.
 */
function statementNames(): (text: string) => string | undefined {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED) names.set(text, (name = `partner_${names.size}`));
    return name;
  };
}

export async function openPostgres(connectionString: string, maxConnections = 10): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: maxConnections,
    types: { getTypeParser: ((oid: number, format?: string) => (oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format as never))) as never },
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  await pool.query('SELECT 1');
  const nameOf = statementNames();
  const query = async <Row>(runner: pg.Pool | pg.ClientBase, text: string, params?: readonly unknown[]) =>
    (await runner.query({ name: nameOf(text), text, values: params as unknown[] | undefined })).rows as Row[];
  return {
    kind: 'postgres',
    query: (text, params) => query(pool, text, params),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({ query: (text, params) => query(client, text, params) });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    exec: async (text) => void (await pool.query(text)),
    async openSession() {
      const client = new pg.Client({ connectionString, types: pool.options.types as never });
      let lost = false;
      // A session whose server or network went away is lost, not fatal: its holder steps down.
      client.on('error', () => void (lost = true));
      client.on('end', () => void (lost = true));
      await client.connect();
      return {
        get lost() {
          return lost;
        },
        query: (text, params) => query(client, text, params),
        close: () => client.end().catch(() => {}),
      };
    },
    close: () => pool.end(),
  };
}

/** PostgreSQL's SQLSTATE of an error, from either driver. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
