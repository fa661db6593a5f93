// One small interface over the two databases the platform runs on: embedded PGlite (default) and a
// PostgreSQL server (DATABASE_URL). Both parse int8 as bigint so that money stays exact.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Mutex, PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type { BackendMessage, DatabaseError, RowDescriptionMessage } from 'pg-protocol/dist/messages.js';

// Each driver is imported when a database of its kind is opened: a platform on PostgreSQL never loads
// PGlite's, and a command that opens no database (help, the version) loads neither.
// PGlite's answers are read by rowsOf: their rows there, every other message by node-postgres's
// protocol parser, loaded with it.
const pgliteModule = async () => ({ ...(await import('@electric-sql/pglite')), wire: await import('pg-protocol/dist/parser.js') });
type PgliteModule = Awaited<ReturnType<typeof pgliteModule>>;

export interface Sql {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]>;
  /**
   * query, with the text columns named in `bytes` given as their UTF-8 bytes where the driver reads
   * them so (PGlite, outside a transaction: views of its answer, no string made of them: a list page's
   * 100 orders were 115 KB of strings a page, garbage the collector paused the process for), as strings
   * where it does not (node-postgres; a statement PGlite runs unprepared or in a transaction). Whoever
   * copies them out releases them, right after; rows never released are the garbage collector's, and
   * their memory is not used again.
   */
  queryBytes<Row>(text: string, params: readonly unknown[], bytes: readonly string[], options?: QueryOptions): Promise<HeldRows<Row>>;
}

/**
 * A text column's value as UTF-8 bytes, or as a string where the driver made one: JSON the database
 * wrote, which a response copies as it is (http/json-text.ts).
 */
export type Utf8Text = Uint8Array | string;

/** Rows whose byte columns may be views of the driver's memory: valid until `release()`. */
export interface HeldRows<Row> {
  rows: Row[];
  /** The rows' bytes are copied out: their memory may hold the next answer. Once only; a no-op where nothing is held. */
  release(): void;
}

export interface QueryOptions {
  /**
   * The text is one of many a request can shape (a page's filters and limit): prepared under a budget of
   * its own (statementNames), so that merchants' shapes never leave the platform's statements unprepared.
   */
  shaped?: boolean;
}

export interface Database extends Sql {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  /** Runs several statements at once (migrations). */
  exec(text: string): Promise<void>;
  /**
   * Runs `work` on one connection of its own, outside any transaction: each statement commits by itself
   * (an online migration, db/migrate.ts, whose CREATE INDEX CONCURRENTLY no transaction may hold).
   */
  session<T>(work: (session: Session) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** One connection's statements, each its own transaction: `query` with parameters, `exec` a text as it is. */
export interface Session {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
  exec(text: string): Promise<void>;
}

const INT8 = 20;
const parseInt8 = (value: string) => BigInt(value);

/**
 * PGlite's PostgreSQL runs inside one WebAssembly memory, which grows and never shrinks: its default
 * 128 MB of shared buffers (more than the platform's tables) are kept small, and the buffers of a
 * session with them.
 */
const PGLITE_SETTINGS = ['shared_buffers = 16MB', 'temp_buffers = 1MB', 'wal_buffers = 1MB'];

function newPglite({ PGlite, types: pgliteTypes }: PgliteModule, dataDir: string | undefined, from: Blob | undefined): PGlite {
  return new PGlite({ ...(dataDir ? { dataDir } : {}), ...(from ? { loadDataDir: from } : {}), postgresqlconf: PGLITE_SETTINGS, parsers: { [pgliteTypes.INT8]: parseInt8 } });
}

/**
 * Creating the database (initdb, then unpacking its files) grows PGlite's memory to about 700 MB,
 * which neither a WebAssembly memory nor the C allocator gives back: it is done in a short-lived
 * process of its own, and the platform then opens the database at a fraction of that.
 */
async function createPgliteDatabase(dataDir: string): Promise<void> {
  const code = `
    const [module, dataDir, settings] = process.argv.slice(1);
    const { PGlite } = await import(module);
    const db = new PGlite({ dataDir, postgresqlconf: JSON.parse(settings) });
    await db.waitReady;
    await db.close();`;
  const args = ['--input-type=module', '-e', code, import.meta.resolve('@electric-sql/pglite'), dataDir, JSON.stringify(PGLITE_SETTINGS)];
  await promisify(execFile)(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 }).catch((error: { stderr?: string }) => {
    throw new Error(`creating the embedded database in ${dataDir} failed: ${error.stderr?.trim().split('\n').at(-1) ?? String(error)}`);
  });
}

/**
 * `createApart`: a new database is created in a process of its own (a server: see above); a short
 * command creates it itself. `from`: a dump (PGlite's dumpDataDir) to start from instead of a new
 * cluster (the tests' templates).
 */
export async function openPglite(dataDir: string | undefined, { createApart = false, from }: { createApart?: boolean; from?: Blob } = {}): Promise<Database> {
  if (createApart && !from && dataDir && !existsSync(join(dataDir, 'PG_VERSION'))) await createPgliteDatabase(dataDir);
  const driver = await pgliteModule();
  const db = newPglite(driver, dataDir, from);
  await db.waitReady;
  const query = async <Row>(runner: Pick<PGlite, 'query'>, text: string, params?: readonly unknown[]) =>
    (await runner.query<Row>(text, params as unknown[] | undefined)).rows;
  const transactions = new driver.Mutex();
  const prepared = preparedPgliteQuery(driver, db, transactions);
  return {
    kind: 'pglite',
    query: async <Row>(text: string, params?: readonly unknown[], options?: QueryOptions) => (await prepared<Row>(text, params ?? [], NO_BYTES, options)).rows,
    queryBytes: <Row>(text: string, params: readonly unknown[], bytes: readonly string[], options?: QueryOptions) => prepared<Row>(text, params, new Set(bytes), options),
    // Under the lock the prepared statements take (preparedPgliteQuery): none runs inside a transaction.
    transaction: (work) => transactions.runExclusive(() => db.transaction((tx) => work(unheld((text, params) => query(tx, text, params))))),
    exec: async (text) => void (await db.exec(text)),
    // PGlite has one connection: the session is the database's.
    session: (work) => work({ query: async (text, params) => (await db.query(text, params as unknown[] | undefined)).rows as never[], exec: async (text) => void (await db.exec(text)) }),
    close: () => db.close(),
  };
}

/**
 * More distinct statements than the platform has (about 90), and more shapes of pages than merchants
 * use (a few filters, a few limits): past its cap, a statement is sent unprepared. A prepared statement
 * holds 50-85 KB in each connection's backend, so the caps also bound that memory.
 */
const MAX_PREPARED = { fixed: 200, shaped: 64 };

/**
 * Each statement is prepared once per connection, named after its text, so PostgreSQL parses and plans
 * it once instead of at every call (a quarter more signed GETs a second in bench:server). The platform's
 * statements are a fixed set of texts with parameters; the pages' texts depend on the filters and the
 * limit a merchant asks for (pages.ts limitClause), and a merchant could make many: they are counted
 * apart, so that they never use up the names the platform's own statements need.
 */
function statementNames(): (text: string, options?: QueryOptions) => string | undefined {
  const names = { fixed: new Map<string, string>(), shaped: new Map<string, string>() };
  return (text, options) => {
    const kind = options?.shaped ? 'shaped' : 'fixed';
    const known = names[kind];
    let name = known.get(text);
    if (name === undefined && known.size < MAX_PREPARED[kind]) known.set(text, (name = `partner_${kind}_${known.size}`));
    return name;
  };
}

/**
 * PGlite's query() parses and plans its statement at every call: 2.3 ms of the order insert's 3.6 ms.
 * This query prepares each statement once, named as on PostgreSQL (statementNames), and then only binds
 * and executes it, with PGlite's parsers and serializers, as query() does. Through PGlite's public API
 * only: its runExclusive (the lock each statement of query() takes) and `transactions`, the lock the
 * platform's transactions hold whole, so that no statement lands between a transaction's (PGlite's
 * own lock for that is private: this one takes its place, two locks a statement as before). Statements
 * in a transaction go through PGlite's own.
 */
function preparedPgliteQuery({ protocol, parse: pgliteResults, wire }: PgliteModule, db: PGlite, transactions: Mutex) {
  const nameOf = statementNames();
  const parameterTypes = new Map<string, number[]>();
  const answer = new AnswerBytes(); // one answer at a time: rowsOf runs under PGlite's runExclusive
  const send = async (message: Uint8Array) => (await db.execProtocol(message, { syncToFs: false })).messages;
  const run = <Row>(name: string, text: string, params: readonly unknown[], bytes: ReadonlySet<string>): Promise<HeldRows<Row>> =>
    transactions.runExclusive(() =>
      db.runExclusive(async () => {
        refuseUnlessReady(db); // a closing or closed database refuses, as query() does
        let types = parameterTypes.get(name);
        if (!types) {
          try {
            await send(protocol.serialize.close({ type: 'S', name })); // one a failed preparation left
            await send(protocol.serialize.parse({ name, text }));
            types = pgliteResults.parseDescribeStatementResults(await send(protocol.serialize.describe({ type: 'S', name })));
          } catch (error) {
            await send(protocol.serialize.sync());
            throw error;
          }
          parameterTypes.set(name, types);
        }
        const values = params.map((value, i) => (value === null || value === undefined ? null : (db.serializers[types[i]!] ?? String)(value)));
        // Bind to Sync in one call into the database, not four: each call costs its own pass (a lone read's
        // query took 130-135 µs in four, 95-117 in one), and after an error the server skips to the Sync
        // as it does over a socket.
        const rows = await rowsOf<Row>(
          wire,
          db,
          answer,
          concatBytes([protocol.serialize.bind({ statement: name, values }), protocol.serialize.describe({ type: 'P' }), protocol.serialize.execute({}), protocol.serialize.sync()]),
          bytes,
        );
        await db.syncToFs();
        return rows;
      }),
    );
  return async <Row>(text: string, params: readonly unknown[], bytes: ReadonlySet<string>, options?: QueryOptions): Promise<HeldRows<Row>> => {
    const name = nameOf(text, options);
    if (name === undefined) return { rows: (await db.query<Row>(text, params as unknown[])).rows, release: NOTHING_HELD };
    try {
      return await run<Row>(name, text, params, bytes);
    } catch (error) {
      // A DISCARD ALL or DEALLOCATE dropped the statement (26000): every statement is prepared again, this one now.
      if ((error as { code?: string }).code !== '26000') throw error;
      parameterTypes.clear();
      return run<Row>(name, text, params, bytes);
    }
  };
}

/** What PGlite's query() throws once close() has begun: its wire calls would reach a stopped database. */
function refuseUnlessReady(db: PGlite): void {
  if (!db.ready) throw new Error(db.closed ? 'PGlite is closed' : 'PGlite is closing');
}

const NO_BYTES: ReadonlySet<string> = new Set();
const NOTHING_HELD = () => {};

/** The Sql of a driver that reads every field as a string (node-postgres; PGlite's own query): nothing is held. */
function unheld(query: Sql['query']): Sql {
  return { query, queryBytes: async (text, params, _bytes, options) => ({ rows: await query(text, params, options), release: NOTHING_HELD }) };
}

/**
 * The rows of the database's answer to a Bind to Sync, each row made an object by PGlite's type parsers,
 * and the `bytes` columns left as views of the answer (then held: release gives its memory back). The
 * answer's bytes, written by PGlite in pieces of 8 KiB that split messages, are gathered into `answer`
 * and read once whole. A DataRow is read here (a count, then each field's length and bytes: PostgreSQL's
 * protocol, "Message Formats"), each field a string decoded straight from the bytes, as node-postgres's
 * parser reads it; every other message goes to that parser. PGlite's own (execProtocol) copies every
 * field into an ArrayBuffer of its own first: about 1,300 allocations for a list page of 100, which took
 * 4.7-5.4 ms through HTTP in a merchant's walk that way and 2.3-2.9 ms this way (a profile had PGlite's
 * field copies at a tenth of the server's CPU time). The first error is thrown once the answer is whole
 * (the server has skipped to the Sync), as execProtocol does.
 */
async function rowsOf<Row>({ Parser }: PgliteModule['wire'], db: PGlite, answer: AnswerBytes, message: Uint8Array, bytes: ReadonlySet<string>): Promise<HeldRows<Row>> {
  const rows: Record<string, unknown>[] = [];
  let columns: { name: string; type: number; parse: ((text: string, type: number) => unknown) | undefined; bytes: boolean }[] = [];
  let failure: DatabaseError | undefined;
  let held = false;
  const take = (message: BackendMessage) => {
    if (message.name === 'rowDescription') {
      columns = (message as RowDescriptionMessage).fields.map(({ name, dataTypeID }) => ({ name, type: dataTypeID, parse: db.parsers[dataTypeID], bytes: bytes.has(name) }));
    } else if (message.name === 'error') {
      failure ??= message as DatabaseError;
    }
  };
  answer.clear();
  await db.execProtocolRawStream(message, { syncToFs: false, onRawData: (piece) => answer.append(piece) });
  const whole = answer.bytes();
  const parser = new Parser();
  const malformed = (what: string) => new Error(`PGlite's answer is malformed: ${what}`);
  for (let at = 0; at < whole.length; ) {
    if (at + 5 > whole.length) throw malformed(`${whole.length - at} bytes after its last message`);
    const length = whole.readInt32BE(at + 1); // after the type byte; it counts itself
    const end = at + 1 + length;
    if (length < 4 || end > whole.length) throw malformed(`a message of ${length} bytes at ${at} of ${whole.length}`);
    if (whole[at] === DATA_ROW) {
      if (length < 6 || whole.readInt16BE(at + 5) !== columns.length) throw malformed(`a row of another number of fields than the ${columns.length} described`);
      const row: Record<string, unknown> = {};
      let field = at + 7; // after the type, the length and the count of fields
      for (const column of columns) {
        if (field + 4 > end) throw malformed('a row shorter than its fields');
        const size = whole.readInt32BE(field);
        field += 4;
        if (size < 0) {
          row[column.name] = null;
          continue;
        }
        if (field + size > end) throw malformed('a field longer than its row');
        if (column.bytes) {
          row[column.name] = whole.subarray(field, field + size);
          held = true;
        } else {
          const text = whole.toString('utf8', field, field + size);
          row[column.name] = column.parse === undefined ? text : column.parse(text, column.type);
        }
        field += size;
      }
      rows.push(row);
    } else {
      parser.parse(whole.subarray(at, end), take);
    }
    at = end;
  }
  if (failure) {
    answer.clear();
    throw failure;
  }
  if (!held) {
    answer.clear();
    return { rows: rows as Row[], release: NOTHING_HELD };
  }
  const buffer = answer.detach();
  let released = false;
  return {
    rows: rows as Row[],
    release: () => {
      if (!released) answer.giveBack(buffer);
      released = true;
    },
  };
}

/** PostgreSQL's DataRow message type ('D'). */
const DATA_ROW = 0x44;

/**
 * The bytes of one answer of PGlite, copied out of its memory (the next call may write over them) into
 * a buffer used again. A Buffer a write (or a copy of every piece, as before), 80-120 KB a list page,
 * is memory outside the JavaScript heap that V8 counts towards its full collections (a fresh buffer an
 * answer made 156 full collections in 30 s of a merchant's walk, 18 reused); this one is allocated once,
 * and again only for an answer larger than any before, and let go when that one is over MAX_KEPT (an
 * export of many rows). An answer whose rows hold views of it (detach) takes its buffer along, and
 * gives it back once they are copied out (giveBack); the next answer takes a spare one meanwhile.
 */
class AnswerBytes {
  private static readonly FIRST = 256 * 1024;
  private static readonly MAX_KEPT = 4 * 1024 * 1024;
  /** Spares kept: answers held at once are those whose responses are being written, a few. */
  private static readonly MAX_SPARES = 8;
  /** A spare larger than this (an answer of many rows) is let go: the spares never hold more than 8 MB. */
  private static readonly MAX_SPARE = 4 * AnswerBytes.FIRST;
  private buffer: Buffer = Buffer.allocUnsafeSlow(AnswerBytes.FIRST);
  private length = 0;
  private readonly spares: Buffer[] = [];

  append(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.buffer.length) {
      let size = this.buffer.length * 2;
      while (size < this.length + bytes.length) size *= 2;
      const larger = Buffer.allocUnsafeSlow(size);
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  clear(): void {
    this.length = 0;
    if (this.buffer.length > AnswerBytes.MAX_KEPT) this.buffer = Buffer.allocUnsafeSlow(AnswerBytes.FIRST);
  }

  /** The answer's buffer, now its rows': the next answer is written into a spare. */
  detach(): Buffer {
    const held = this.buffer;
    this.buffer = this.spares.pop() ?? Buffer.allocUnsafeSlow(AnswerBytes.FIRST);
    this.length = 0;
    return held;
  }

  /** A detached buffer whose rows are copied out. */
  giveBack(buffer: Buffer): void {
    if (buffer.length <= AnswerBytes.MAX_SPARE && this.spares.length < AnswerBytes.MAX_SPARES) this.spares.push(buffer);
  }
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  parts.reduce((at, part) => (whole.set(part, at), at + part.length), 0);
  return whole;
}

export async function openPostgres(connectionString: string, maxConnections = 10): Promise<Database> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString,
    max: maxConnections,
    types: { getTypeParser: ((oid: number, format?: string) => (oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format as never))) as never },
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  await pool.query('SELECT 1');
  const nameOf = statementNames();
  const query = async <Row>(runner: pg.Pool | pg.ClientBase, text: string, params?: readonly unknown[], options?: QueryOptions) =>
    (await runner.query({ name: nameOf(text, options), text, values: params as unknown[] | undefined })).rows as Row[];
  return {
    kind: 'postgres',
    ...unheld((text, params, options) => query(pool, text, params, options)),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(unheld((text, params, options) => query(client, text, params, options)));
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
    async session(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        return await work({ query: async (text, params) => (await client.query(text, params as unknown[] | undefined)).rows, exec: async (text) => void (await client.query(text)) });
      } catch (error) {
        broken = error as Error; // a connection left in a failed state (or holding a lock) is not given back to the pool
        throw error;
      } finally {
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

/** PostgreSQL's SQLSTATE of an error, from either driver. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
