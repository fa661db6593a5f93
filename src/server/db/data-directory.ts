// The data directory of the embedded database and the sandbox's master key: the owner's alone, and
// one process's at a time.
import { chmodSync, closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tryLock } from 'fs-native-extensions';

export class DataDirectoryBusyError extends Error {}

/** The file every opening of a data directory writes (lockDataDirectory): what makes a directory a platform's. */
const LOCK_FILE = 'partner-api.lock';
/** The file that says which database the directory's platform uses (recordDatabase). */
const DATABASE_FILE = 'database';

/** Whether `dir` is a platform's data directory: its embedded database opened there, or it records a PostgreSQL one. */
export function isDataDirectory(dir: string): boolean {
  return existsSync(join(dir, LOCK_FILE)) || existsSync(join(dir, DATABASE_FILE));
}

/**
 * The data directory meant by a command run in `from` without DATA_DIR: `data/` of that folder or of the
 * nearest folder above that has a platform's (as git finds its repository), so that a command run in a
 * subfolder of the project reaches the database the platform there uses. Undefined when there is none.
 */
export function findDataDirectory(from: string): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (isDataDirectory(join(dir, 'data'))) return join(dir, 'data');
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Which database a data directory's platform uses, in its file `database`: the embedded one inside it,
 * or a PostgreSQL database (its host, port and name; never a user or password). A command pointed at
 * the directory with another database would read or make a database that is not the platform's: an
 * empty PGlite made in a PostgreSQL instance's directory printed "the books agree" (issue 57).
 */
export type PostgresRecord = { kind: 'postgresql'; database: string };
export type DatabaseRecord = { kind: 'embedded' } | PostgresRecord;

/** A command given one database where the data directory's platform uses another: refused (exit 1), saying which. */
export class WrongDatabaseError extends Error {}

/** The PostgreSQL database a URL names, as the data directory records it: host:port/name, no credentials. */
export function postgresRecord(databaseUrl: string): PostgresRecord {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || 'postgres';
  return { kind: 'postgresql', database: `${url.hostname || 'localhost'}:${url.port || '5432'}/${name}` };
}

const described = (record: DatabaseRecord) => (record.kind === 'embedded' ? 'the embedded database (PGlite) inside it' : `PostgreSQL, database ${record.database}`);

/** The database the directory records, or undefined (none recorded, or no directory). */
function recordedDatabase(dataDir: string): DatabaseRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, DATABASE_FILE), 'utf8')) as DatabaseRecord;
  } catch {
    return undefined;
  }
}

/**
 * Refuses a database other than the one the directory records. A PostgreSQL platform never reads the
 * embedded database, so only another PostgreSQL database is refused to it; the embedded database is
 * refused any directory of a PostgreSQL platform, before anything is created there.
 */
export function refuseOtherDatabase(dataDir: string, wanted: DatabaseRecord): void {
  const recorded = recordedDatabase(dataDir);
  if (!recorded || recorded.kind === 'embedded' || (wanted.kind === 'postgresql' && wanted.database === recorded.database)) return;
  const hint = recorded.kind === 'postgresql' ? `set DATABASE_URL to that database (${recorded.database})` : 'leave DATABASE_URL out';
  throw new WrongDatabaseError(`DATA_DIR ${dataDir} belongs to a platform on ${described(recorded)}, and this was given ${described(wanted)}: ${hint}, or choose another --data-dir`);
}

/** Records the directory's database, once the directory exists (a platform on PostgreSQL may never make one). */
export function recordDatabase(dataDir: string, record: DatabaseRecord): void {
  if (!existsSync(dataDir) || JSON.stringify(recordedDatabase(dataDir)) === JSON.stringify(record)) return;
  writeFileSync(join(dataDir, DATABASE_FILE), JSON.stringify(record) + '\n', { mode: 0o600 });
}

/** The data directory cannot be created or written: exit 73 (cannot create). */
export class DataDirectoryError extends Error {}

const CAUSES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'it exists and is not a directory',
  EROFS: 'the file system is read-only',
  ENOENT: 'its parent does not accept new directories',
  ENOSPC: 'no space left on the device',
};

/** An error of the file system as one line naming DATA_DIR, its value and the cause. */
function dataDirectoryError(dir: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code in CAUSES)) return error;
  const user = process.getuid?.() === 0 ? 'root' : `uid ${process.getuid?.()}`;
  const path = (error as { path?: string }).path ?? dir;
  return new DataDirectoryError(`DATA_DIR ${dir} cannot be created or written by ${user}: ${path}: ${CAUSES[code]} (${code})`);
}

/**
 * PGlite is one process's database: an OS lock on DATA_DIR/partner-api.lock keeps a second process
 * (another server, or an operator command while the server runs) from opening the same data
 * directory. The kernel grants it to one of two simultaneous starts and frees it when its holder
 * dies, even by kill -9, so no stale lock ever needs clearing. The file is never deleted: a process
 * waiting on a deleted file's lock would hold a lock nobody else sees. It holds the holder's pid, for
 * the message only.
 */
export function lockDataDirectory(dataDir: string): () => void {
  ownerOnlyDirectory(dataDir);
  const lockFile = join(dataDir, LOCK_FILE);
  let fd: number;
  try {
    fd = openSync(lockFile, 'a+', 0o600);
  } catch (error) {
    throw dataDirectoryError(dataDir, error);
  }
  if (!tryLock(fd)) {
    closeSync(fd);
    const holder = readFileSync(lockFile, 'utf8').trim();
    throw new DataDirectoryBusyError(
      `the embedded database in ${dataDir} is open in ${holder ? `process ${holder}` : 'another process'} (a running platform?): stop it first, ` +
        'or give both the same DATABASE_URL of a PostgreSQL server',
    );
  }
  ftruncateSync(fd, 0);
  writeSync(fd, String(process.pid));
  return () => closeSync(fd); // closing the file releases the lock
}

/**
 * Creates the directory if needed and makes it the owner's alone (0700): the data inside is money. One
 * made by another user, or that others may write, is refused as PostgreSQL refuses such a data
 * directory: whoever could write in it could have put a socket, a lock or a master key there first
 * (issue 50: another user's directory handed an operator's `rotate-secrets` to that user's socket).
 */
export function ownerOnlyDirectory(dir: string): void {
  try {
    makeDirectories(dir);
  } catch (error) {
    throw dataDirectoryError(dir, error);
  }
  refuseForeignDirectory(dir);
  try {
    chmodSync(dir, 0o700);
  } catch (error) {
    throw dataDirectoryError(dir, error);
  }
}

/** A data directory that another user owns, or that its group or others may write, is not used at all. */
function refuseForeignDirectory(dir: string): void {
  const me = process.geteuid?.();
  if (me === undefined) return; // Windows: no owners or modes to check
  const { uid, mode } = statSync(dir);
  if (uid !== me) {
    throw new DataDirectoryError(
      `DATA_DIR ${dir} is owned by uid ${uid}, not by this user (uid ${me}): refused, since its owner controls what is in it; ` +
        'run as its owner, or choose a directory of your own',
    );
  }
  if ((mode & 0o022) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new DataDirectoryError(
      `DATA_DIR ${dir} is writable by ${mode & 0o002 ? 'every user' : 'its group'} (mode ${octal}): refused, since another user may have put files in it; ` +
        `check what it holds, then chmod 700 ${dir}`,
    );
  }
}

/**
 * mkdir -p, one level at a time: Node's own recursive mkdir loops for ever where the parent exists
 * but refuses with ENOENT (/proc/nope), and says EEXIST, not ENOTDIR, for a path that is a file.
 */
function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let path = resolve(dir); !existsSync(path); path = dirname(path)) missing.unshift(path);
  for (const path of missing) mkdirSync(path, { mode: 0o700 });
  if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'EEXIST', path: dir });
}

/**
 * PGlite unpacks its initial database with mode 0666 whatever the umask: every file under `dir`
 * becomes 0600 and every directory 0700 (files it creates later are 0600 already).
 */
export function restrictToOwner(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    chmodSync(join(entry.parentPath, entry.name), entry.isDirectory() ? 0o700 : 0o600);
  }
}
