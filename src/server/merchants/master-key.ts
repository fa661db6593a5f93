// The master key a database was created with: merchants' secrets are derived from it, so a platform
// started with another key would hand out credentials that match nothing.
import type { Sql } from '../db/database.js';
import type { SecretKeeper } from './secrets.js';

export class MasterKeyMismatchError extends Error {}

/** The first open records the master key's check value; every later one must bring the same key. */
export async function checkMasterKey(db: Sql, secrets: SecretKeeper): Promise<void> {
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
