// Opens the platform's database: a PostgreSQL pool (DATABASE_URL), or the embedded PGlite in the data
// directory, locked to this process and made the owner's alone.
import { join } from 'node:path';
import { lockDataDirectory, postgresRecord, recordDatabase, refuseOtherDatabase, restrictToOwner } from './data-directory.js';
import { openPglite, openPostgres, type Database } from './database.js';

/**
 * The three settings that say where the database is. Named here rather than taken from config.ts, so
 * that db/ depends on nothing above it; the platform's Config has these fields and passes as it is.
 */
export interface DatabaseLocation {
  /** `postgres://…`, or undefined for the embedded PGlite in the data directory. */
  databaseUrl: string | undefined;
  dataDir: string;
  databasePoolSize: number;
}

/** `longLived`: a server, whose PGlite is created apart so that it does not keep the memory creating it takes. */
export async function openDatabase(
  config: DatabaseLocation,
  { longLived = false } = {},
): Promise<{ db: Database; release: () => void }> {
  if (config.databaseUrl) {
    refuseOtherDatabase(config.dataDir, postgresRecord(config.databaseUrl));
    return { db: await openPostgres(config.databaseUrl, config.databasePoolSize), release: () => {} };
  }
  refuseOtherDatabase(config.dataDir, { kind: 'embedded' }); // before the lock or PGlite make anything there
  const release = lockDataDirectory(config.dataDir);
  try {
    const db = await openPglite(join(config.dataDir, 'pglite'), { createApart: longLived });
    recordDatabase(config.dataDir, { kind: 'embedded' });
    restrictToOwner(config.dataDir);
    return { db, release };
  } catch (error) {
    release();
    throw error;
  }
}
