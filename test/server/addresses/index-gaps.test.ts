// No HD index gap beyond a wallet's gap limit (issue 23 #5): kill -9 of `partner-api serve` in the middle
// of bursts of creates, several times, then a restart and more creates: between two used indexes of a
// network there are fewer than 20 unused ones, so a wallet restored from the seed with the standard gap
// limit of 20 finds every deposit address. Before, the indexes reserved ahead were lost at every stop.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPglite, openPostgres } from '../../../src/server/db/database.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';
import { DATABASES, freshDatabase } from '../../support/platform.js';
import { orderRequest } from '../../fixtures/orders.js';
import { copiedDataDirectory } from '../../support/database-templates.js';

const GAP_LIMIT = 20;
const CONNECTIONS = 16;

/** Creates from CONNECTIONS concurrent loops, both networks, until `stop()` says so; counts the creates. */
function burst(instance: RunningPartnerApi, prefix: string, until: (created: number) => boolean) {
  const client = instance.client();
  let created = 0;
  return Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, loop) => {
      for (let i = 0; !until(created); i++) {
        const blockchain = (loop + i) % 2 ? 'Tron' : 'Ethereum';
        const result = await client.POST('/partner/v1/platforms/orders', { body: orderRequest(`${prefix}-${loop}-${i}`, { blockchain }) }).catch(() => undefined);
        if (!result?.data) return; // the process was killed
        created++;
      }
    }),
  ).then(() => created);
}

describe.each(DATABASES)('address indexes after kill -9 during bursts of creates on %s', (kind) => {
  it(`leave no gap of ${GAP_LIMIT} or more unused indexes between used ones`, { timeout: 240_000 }, async () => {
    const dataDir = copiedDataDirectory('partner-gaps-');
    const database = kind === 'postgres' ? await freshDatabase('postgres') : undefined;
    await database?.db.close();
    const env = {
      DATA_DIR: dataDir,
      ...(database?.url ? { DATABASE_URL: database.url } : {}),
      SECRET_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'silent',
      RATE_LIMIT: '1000000/60',
    };
    try {
      for (let round = 0; round < 4; round++) {
        const instance = await startPartnerApi(env);
        let killed = false;
        const creates = burst(instance, `r${round}`, (created) => {
          // The kill comes in the middle of the burst, with creates in flight.
          if (created >= 60 && !killed) {
            killed = true;
            instance.process.process.kill('SIGKILL');
          }
          return killed;
        });
        await creates;
        await new Promise((resolve) => (instance.process.process.exitCode !== null || instance.process.process.signalCode !== null ? resolve(undefined) : instance.process.process.once('exit', resolve)));
      }
      const last = await startPartnerApi(env);
      await burst(last, 'after', (created) => created >= 400);
      await last.stop();

      const db = database?.url ? await openPostgres(database.url) : await openPglite(join(dataDir, 'pglite'));
      try {
        const rows = await db.query<{ blockchain: string; used: bigint; largest_gap: bigint | null }>(
          `SELECT blockchain, count(*) AS used, max(address_index - previous - 1) AS largest_gap
             FROM (SELECT blockchain, address_index, COALESCE(lag(address_index) OVER (PARTITION BY blockchain ORDER BY address_index), -1) AS previous FROM deposit_orders) o
            GROUP BY blockchain ORDER BY blockchain`,
        );
        expect(rows.map((r) => r.blockchain)).toEqual(['Ethereum', 'Tron']);
        for (const row of rows) {
          console.log(`${kind} ${row.blockchain}: ${row.used} indexes used, largest gap ${row.largest_gap}`);
          expect(row.used).toBeGreaterThan(150n);
          expect(Number(row.largest_gap), row.blockchain).toBeLessThan(GAP_LIMIT);
          // The pool keeps none at all: the final burst took every row the killed inserts left.
          expect(Number(row.largest_gap ?? 0), row.blockchain).toBe(0);
        }
      } finally {
        await db.close();
      }
    } finally {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
