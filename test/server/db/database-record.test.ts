// A data directory records which database its platform uses (db/data-directory.ts, issue 57 item 4): a
// command pointed at a PostgreSQL platform's directory without DATABASE_URL made an empty embedded
// database there and printed "the books agree", exit 0. Now it is refused, saying which database the
// directory belongs to, and nothing is made there.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPlatform } from '../../../src/server/platform.js';
import { readConfig } from '../../../src/server/config.js';
import { postgresRecord } from '../../../src/server/db/data-directory.js';
import { runCommand } from '../../support/cli.js';
import { freshDatabase, TEST_DATABASE_URL } from '../../support/platform.js';

const freshDir = () => mkdtempSync(join(tmpdir(), 'partner-record-'));

describe('the database a data directory records', () => {
  it('is the embedded one once a command made it there', async () => {
    const dataDir = freshDir();
    expect((await runCommand(['merchants', 'create', '--name', 'embedded'], { DATA_DIR: dataDir, DATABASE_URL: '' })).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dataDir, 'database'), 'utf8'))).toEqual({ kind: 'embedded' });
  });

  it('names a PostgreSQL database by host, port and name, never its user or password', () => {
    expect(postgresRecord('postgres://alice:s3cret@db.internal:6543/partner?sslmode=require')).toEqual({ kind: 'postgresql', database: 'db.internal:6543/partner' });
    expect(postgresRecord('postgresql://bob@127.0.0.1/')).toEqual({ kind: 'postgresql', database: '127.0.0.1:5432/bob' });
  });
});

describe.runIf(TEST_DATABASE_URL)("a PostgreSQL platform's data directory", () => {
  let dataDir: string;
  let url: string;
  let other: string;
  const drops: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    const mine = await freshDatabase('postgres', TEST_DATABASE_URL, 'migrated');
    const another = await freshDatabase('postgres', TEST_DATABASE_URL, 'migrated');
    await mine.db.close();
    await another.db.close();
    drops.push(mine.drop, another.drop);
    [url, other] = [mine.url!, another.url!];
    dataDir = freshDir();
    // A sandbox on PostgreSQL keeps its master key in its data directory, which now also says whose it is.
    const platform = await openPlatform(readConfig({ DATA_DIR: dataDir, DATABASE_URL: url, LOG_LEVEL: 'silent' }), { logger: false });
    await platform.close();
  });
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it('refuses a command without DATABASE_URL, saying which database, and makes no embedded one there', async () => {
    const { code, stdout, stderr } = await runCommand(['ledger', 'check'], { DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`partner-api: DATA_DIR ${dataDir} belongs to a platform on PostgreSQL, database ${postgresRecord(url).database}, and this was given the embedded database (PGlite) inside it: set DATABASE_URL to that database (${postgresRecord(url).database}), or choose another --data-dir\n`);
    expect(existsSync(join(dataDir, 'pglite'))).toBe(false);
    expect(existsSync(join(dataDir, 'partner-api.lock'))).toBe(false);
  });

  it('refuses another PostgreSQL database, and runs with its own', async () => {
    const refused = await runCommand(['ledger', 'check'], { DATA_DIR: dataDir, DATABASE_URL: other });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`belongs to a platform on PostgreSQL, database ${postgresRecord(url).database}, and this was given PostgreSQL, database ${postgresRecord(other).database}`);
    const own = await runCommand(['ledger', 'check'], { DATA_DIR: dataDir, DATABASE_URL: url });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toMatch(/the books agree/);
  });
});
