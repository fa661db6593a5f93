// A data directory for `partner-api` that already holds the run's migrated database
// (./database-templates.ts): a command or a server opens it instead of creating one, which costs
// seconds of CPU (initdb in WebAssembly) that a test of something else need not pay.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pgliteDump } from './database-templates.js';

/** Fills `dataDir` (created if missing) as the platform lays it out; where no global setup ran, leaves it for the platform to create. */
export async function dataDirWithDatabase(dataDir: string): Promise<string> {
  const dump = pgliteDump('migrated');
  if (dump) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const db = new PGlite({ dataDir: join(dataDir, 'pglite'), loadDataDir: dump });
    await db.waitReady;
    await db.close();
  }
  return dataDir;
}
