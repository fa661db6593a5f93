// The data directory of the embedded database and the sandbox's master key: the owner's alone, and
// one process's at a time.
import { chmodSync, closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tryLock } from 'fs-native-extensions';

export class DataDirectoryBusyError extends Error {}

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
  const lockFile = join(dataDir, 'partner-api.lock');
  const fd = openSync(lockFile, 'a+', 0o600);
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

/** Creates the directory if needed and makes it the owner's alone (0700): the data inside is money. */
export function ownerOnlyDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
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
