// The master key (SECRET_KEY): a database opens only under the key it was created with.
import { describe, expect, it } from 'vitest';
import { openPlatform } from '../../../src/server/platform.js';
import { freshDatabase, testConfig } from '../../support/platform.js';

describe('the master key', () => {
  it('must be the one the database was created with', async () => {
    const { db } = await freshDatabase('pglite');
    try {
      const first = await openPlatform({ ...testConfig(), secretKey: Buffer.alloc(32, 1) }, { db, logger: false });
      await first.merchants.create('m');
      await first.close();
      await expect(openPlatform({ ...testConfig(), secretKey: Buffer.alloc(32, 2) }, { db, logger: false })).rejects.toThrow(/created with another master key/);
      const again = await openPlatform({ ...testConfig(), secretKey: Buffer.alloc(32, 1) }, { db, logger: false });
      await again.close();
    } finally {
      await db.close();
    }
  });
});
