// kill -9 while the scanner and the dispatcher are busy: after a restart no deposit is credited twice,
// none is lost, every callback is eventually delivered, and none is sent again after its 2xx was
// recorded (deliveries before that are the at-least-once that webhook-id deduplicates).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CreatedDepositOrder } from '../../../src/client/index.js';
import { openPglite, openPostgres } from '../../../src/server/db/database.js';
import { startChain } from '../../support/chain.js';
import { startPartnerApi } from '../../support/partner-api.js';
import { until } from '../../support/processes.js';
import { startReceiver } from '../../support/receiver.js';
import { DATABASES, freshDatabase } from '../../support/platform.js';
import { orderRequest } from '../../fixtures/orders.js';
import { copiedDataDirectory } from '../../support/database-templates.js';

async function serve(env: Record<string, string>) {
  const platform = await startPartnerApi(env);
  return { server: platform.process, client: platform.client() };
}

describe.each(DATABASES)('crash safety on %s', (kind) => {
  it('survives SIGKILL in the middle of scanning and dispatching', async () => {
    const chain = await startChain({ automine: false });
    const receiver = await startReceiver({ slowMs: 30 });
    const dataDir = copiedDataDirectory('partner-crash-');
    let mining: Promise<void> | undefined;
    let stopped = false; // the test ended early: no more blocks
    const stopMining = async () => {
      stopped = true;
      await mining?.catch(() => {});
    };
    const database = kind === 'postgres' ? await freshDatabase('postgres') : undefined;
    await database?.db.close();
    try {
      const token = await chain.deployToken();
      const senders = chain.accounts.slice(1, 5);
      await token.distribute(senders, 10n ** 12n);
      const env = {
        DATA_DIR: dataDir,
        ...(database?.url ? { DATABASE_URL: database.url } : {}),
        LOG_LEVEL: 'silent',
        RATE_LIMIT: '100000/60',
        ETHEREUM_RPC_URL: chain.rpcUrl,
        ETHEREUM_TOKEN_CONTRACT: token.address,
        ETHEREUM_CONFIRMATIONS: '2',
        ETHEREUM_POLL_SECONDS: '1',
        ETHEREUM_MAX_BLOCK_RANGE: '2', // many small scan steps: the scanner is busy when the kill comes
        ETHEREUM_START_BLOCK: String(await chain.blockNumber()),
        CALLBACK_TIMEOUT_SECONDS: '1', // rows claimed before the kill are due again 3 s after
        ALLOW_PRIVATE_CALLBACKS: 'true', // the receiver is on loopback
      };
      const first = await serve(env);
      const orders: CreatedDepositOrder[] = [];
      for (let i = 0; i < 20; i++) {
        const { data } = await first.client.POST('/partner/v1/platforms/orders', {
          body: orderRequest(`crash-${i}`, { blockchain: 'Ethereum', callbackUrl: `${receiver.url}/slow/${i}` }),
        });
        orders.push(data!);
      }
      // Three transfers to a block from different senders, one block every ~40 ms while the platform
      // follows, and ten blocks more after the kill: the kill comes while the platform is scanning and
      // dispatching, and the chain grows under the stopped platform, however fast or slow this machine is.
      const expected = new Map<string, bigint>();
      let transfers = 0;
      let killed = false;
      mining = (async () => {
        for (let block = 0, afterKill = 0; afterKill < 10 && block < 400 && !stopped; block++) {
          const startedAfterKill = killed; // its three transfers all come after the kill
          for (let k = 0; k < 3; k++) {
            const order = orders[(block * 3 + k) % orders.length]!;
            const amount = BigInt(1_000_000 + block * 10 + k);
            await token.transfer(senders[k]!, order.address, amount);
            expected.set(order.uuid, (expected.get(order.uuid) ?? 0n) + amount);
            transfers++;
          }
          await chain.mine(1);
          if (startedAfterKill) afterKill++;
          await new Promise((r) => setTimeout(r, 40));
        }
        await chain.mine(3);
      })();

      await until('some callbacks to arrive', async () => (receiver.deliveries.length >= 15 ? true : undefined));
      first.server.process.kill('SIGKILL');
      await new Promise((resolve) => first.server.process.once('exit', resolve));
      killed = true;
      const atKill = receiver.deliveries.length;
      const minedAtKill = transfers;
      await mining;
      expect(atKill).toBeLessThan(minedAtKill); // the kill came mid-way: mined deposits were still to be called back
      expect(transfers - minedAtKill).toBeGreaterThanOrEqual(30); // and the chain grew under the stopped platform

      const second = await serve(env);
      await until('every deposit credited', async () => {
        for (const order of orders) {
          const { data } = await second.client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } });
          if (BigInt(data!.receivedAmount) !== expected.get(order.uuid)) return undefined;
        }
        return true;
      });
      const ids = await until('every callback delivered', async () => {
        const distinct = new Set(receiver.deliveries.map((d) => d.headers['webhook-id'] as string));
        return distinct.size >= transfers ? distinct : undefined;
      });
      // Rows claimed just before the kill are sent again once their lease ends: wait until it is quiet.
      await until('the receiver to go quiet', async () => {
        const last = Math.max(...receiver.deliveries.map((d) => d.at));
        return Date.now() - last > 5000 ? true : undefined;
      });
      await second.server.stop();

      const db = database?.url ? await openPostgres(database.url) : await openPglite(join(dataDir, 'pglite'));
      try {
        const [deposits] = await db.query<{ n: bigint; keys: bigint }>("SELECT count(*)::bigint AS n, count(DISTINCT (tx_hash, log_index))::bigint AS keys FROM deposits WHERE network = 'Ethereum'");
        expect(deposits).toEqual({ n: BigInt(transfers), keys: BigInt(transfers) });
        const outbox = await db.query<{ webhook_id: string; state: string; delivered_at: Date }>('SELECT webhook_id, state, delivered_at FROM callback_outbox');
        expect(outbox).toHaveLength(transfers);
        expect(outbox.every((row) => row.state === 'delivered')).toBe(true);
        expect(new Set(outbox.map((r) => r.webhook_id))).toEqual(ids);
        for (const row of outbox) {
          const late = receiver.deliveries.filter((d) => d.headers['webhook-id'] === row.webhook_id && d.at > row.delivered_at.getTime());
          expect(late, `${row.webhook_id} was sent again after its 2xx was recorded`).toEqual([]);
        }
      } finally {
        await db.close();
      }
    } finally {
      await stopMining();
      await chain.stop();
      await receiver.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
