// Opens the platform's database: a PostgreSQL pool (DATABASE_URL), or the embedded PGlite in the data
// directory, locked to this process and made the owner's alone.
import { join } from 'node:path';
import type { Config } from '../config.js';
import { lockDataDirectory, restrictToOwner } from './data-directory.js';
import { openPglite, openPostgres, type Database } from './database.js';

/** `longLived`: a server, whose PGlite is created apart so that it does not keep the memory creating it takes. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>,
  { longLived = false } = {},
): Promise<{ db: Database; release: () => void }> {
  if (config.databaseUrl) return { db: await openPostgres(config.databaseUrl, config.databasePoolSize), release: () => {} };
  const release = lockDataDirectory(config.dataDir);
  try {
    const db = await openPglite(join(config.dataDir, 'pglite'), { createApart: longLived });
    restrictToOwner(config.dataDir);
    return { db, release };
  } catch (error) {
    release();
    throw error;
  }
}
