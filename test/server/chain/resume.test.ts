// `partner-api chain resume --from-block`: the scan position moves back (to scan again) but never forward past
// blocks never scanned, halted or not (issue 23 #9).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ScanPositionForwardError, halt, resumeNetwork } from '../../../src/server/chain/halt.js';
import { chainResumeCommand } from '../../../src/server/cli/chain-commands.js';
import { RefusedError } from '../../../src/server/cli/errors.js';
import type { Database } from '../../../src/server/db/database.js';
import { migrate } from '../../../src/server/db/migrate.js';
import type { Platform } from '../../../src/server/platform.js';
import { DATABASES, freshDatabase, testConfig } from '../../support/platform.js';

describe.each(DATABASES)('chain resume --from-block on %s', (kind) => {
  let database: { db: Database; drop: () => Promise<void> };
  const scanPosition = async () =>
    (await database.db.query<{ next_block: bigint; halted_at: Date | null }>("SELECT next_block, halted_at FROM chain_cursors WHERE network = 'Ethereum'"))[0]!;

  beforeAll(async () => {
    database = await freshDatabase(kind);
    await migrate(database.db);
  });
  afterAll(async () => {
    await database?.db.close();
    await database?.drop();
  });
  beforeEach(async () => {
    await database.db.query('DELETE FROM chain_cursors');
    await database.db.query("INSERT INTO chain_cursors (network, next_block) VALUES ('Ethereum', 1000)");
  });

  it('refuses a block past the scan position on a network that is not halted, and changes nothing', async () => {
    await expect(resumeNetwork(database.db, 'Ethereum', 99_999_999n)).rejects.toThrow(ScanPositionForwardError);
    expect(await scanPosition()).toMatchObject({ next_block: 1000n, halted_at: null });
    // The operator's command: a clear message and exit code 1 (RefusedError).
    const refused = await chainResumeCommand({ db: database.db } as Platform, { blockchain: 'ethereum', 'from-block': '99999999' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RefusedError);
    expect((refused as Error).message).toMatch(/past Ethereum's scan position \(next block 1000\).*never scanned/);
    expect((await scanPosition()).next_block).toBe(1000n);
  });

  it('refuses it on a halted network too, which stays halted', async () => {
    await halt(database.db, 'Ethereum', new Date(), 'a deep reorg');
    await expect(resumeNetwork(database.db, 'Ethereum', 1001n)).rejects.toThrow(ScanPositionForwardError);
    expect((await scanPosition()).halted_at).not.toBeNull();
    expect((await scanPosition()).next_block).toBe(1000n);
  });

  it('refuses to resume a halted network it cannot search for the removed deposits (no RPC URL), which stays halted', async () => {
    await halt(database.db, 'Ethereum', new Date(), 'a deep reorg');
    const config = testConfig(); // no RPC URL
    const refused = await chainResumeCommand({ db: database.db, config } as Platform, { blockchain: 'ethereum' }).catch((e: unknown) => e);
    rmSync(config.dataDir, { recursive: true, force: true });
    expect(refused).toBeInstanceOf(RefusedError);
    expect((refused as Error).message).toMatch(/^no ETHEREUM_RPC_URL: the deposits of the replaced blocks cannot be looked for on the chain; nothing was resumed$/);
    expect((await scanPosition()).halted_at).not.toBeNull();
  });

  it('moves the scan position back, or keeps it, as before', async () => {
    await halt(database.db, 'Ethereum', new Date(), 'a deep reorg');
    expect(await resumeNetwork(database.db, 'Ethereum', 1000n)).toMatchObject({ wasHalted: true, nextBlock: 1000n });
    expect(await resumeNetwork(database.db, 'Ethereum', 900n)).toMatchObject({ wasHalted: false, nextBlock: 900n });
    expect(await resumeNetwork(database.db, 'Ethereum')).toMatchObject({ nextBlock: 900n });
    expect(await scanPosition()).toMatchObject({ next_block: 900n, halted_at: null });
  });
});
