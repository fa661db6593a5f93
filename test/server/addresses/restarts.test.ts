// Addresses across restarts: the wallet's indexes continue where the last run left them, none reused.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openPlatform } from '../../../src/server/platform.js';
import { createAddressDeriver } from '../../../src/server/addresses/derivation.js';
import { orderRequest } from '../../fixtures/orders.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { testConfig } from '../../support/platform.js';
import { copiedDataDirectory } from '../../support/database-templates.js';

describe('addresses across restarts (PGlite in a data directory)', () => {
  it('continues the sequence after a restart and never reuses an index', async () => {
    const wallet = hdVectors.wallets[0]!.Tron;
    const derive = createAddressDeriver('Tron', wallet.xpub);
    const dataDir = copiedDataDirectory('partner-restart-');
    const config = { ...testConfig(), dataDir };
    const addresses: string[] = [];
    try {
      for (let run = 0; run < 2; run++) {
        const platform = await openPlatform(config, { logger: false });
        const merchant = await platform.merchants.create(`restart-${run}`);
        for (let i = 0; i < 2; i++) {
          const result = await platform.orders.create(merchant.merchantId, orderRequest(`restart-${run}-${i}`));
          if (!('order' in result)) throw new Error(`unexpected ${result.outcome}`);
          addresses.push(result.order.address);
        }
        await platform.close();
      }
      // The first run takes indexes 0 and 1; the rest of what it derived stays in the database's pool,
      // and the second run hands it out next, so the wallet's indexes keep no gap.
      expect(addresses.slice(0, 2)).toEqual(wallet.addresses.slice(0, 2));
      const secondRun = addresses.slice(2).map((address) => Array.from({ length: 64 }, (_, i) => derive(i)).indexOf(address));
      expect(secondRun).toEqual([2, 3]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
