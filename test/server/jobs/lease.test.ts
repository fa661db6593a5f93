// Three `partner-api serve` processes on one PostgreSQL (issue 9, item 6): each network's scanner and
// the expiry job run in one instance at a time, under its lease, and another takes over when
// the holder is killed with SIGKILL. Each instance reaches the chain through its own fault proxy, so
// the test sees which instances scan: one before the kill, one of the two others after it. Every
// transfer is credited once, every callback delivered, each order's callbacks in sequence order.
import { describe, expect, it } from 'vitest';
import type { CreatedDepositOrder } from '../../../src/client/index.js';
import { openPostgres } from '../../../src/server/db/database.js';
import { startChain } from '../../support/chain.js';
import { startInstances, type Instances } from '../../support/instances.js';
import type { RunningPartnerApi } from '../../support/partner-api.js';
import { TEST_DATABASE_URL, freshDatabase } from '../../support/platform.js';
import { until } from '../../support/processes.js';
import type { FaultProxy } from '../../support/rpc-fault-proxy.js';
import { startReceiver } from '../../support/receiver.js';
import { orderRequest } from '../../fixtures/orders.js';

const INSTANCES = 3;

/** Whether the instance holds the job's lease, as its metrics say. */
async function holdsLease(instance: RunningPartnerApi, job: string): Promise<boolean> {
  const metrics = await (await fetch(`${instance.baseUrl}/metrics`)).text();
  return new RegExp(`^partner_job_lease_held\\{job="${job}"\\} 1$`, 'm').test(metrics);
}

const getLogsCalls = (proxy: FaultProxy) => proxy.calls.filter((c) => c.method === 'eth_getLogs').length;

describe.skipIf(!TEST_DATABASE_URL)('three instances on one PostgreSQL', () => {
  it('scan in one instance at a time, take over after a SIGKILL of the holder, credit and deliver everything once', async () => {
    const chain = await startChain({ automine: false });
    const receiver = await startReceiver();
    const database = await freshDatabase('postgres');
    await database.db.close();
    let fleet: Instances | undefined;
    try {
      const token = await chain.deployToken();
      const senders = chain.accounts.slice(1, 4);
      await token.distribute(senders, 10n ** 12n);
      const { instances, proxies } = (fleet = await startInstances(INSTANCES, database.url!, chain.rpcUrl, {
        LOG_LEVEL: 'warn',
        ETHEREUM_TOKEN_CONTRACT: token.address,
        ETHEREUM_CONFIRMATIONS: '2',
        ETHEREUM_POLL_SECONDS: '1',
        ETHEREUM_MAX_BLOCK_RANGE: '3',
        ETHEREUM_START_BLOCK: String(await chain.blockNumber()),
        CALLBACK_TIMEOUT_SECONDS: '1',
        ALLOW_PRIVATE_CALLBACKS: 'true', // the receiver is on loopback
        EXPIRY_INTERVAL_SECONDS: '1',
      }));
      const log = () => instances.map((p, i) => `instance ${i}:\n${p.process.output().split('\n').slice(-8).join('\n')}`).join('\n');
      const client = instances[0]!.client();
      const orders: CreatedDepositOrder[] = [];
      for (let i = 0; i < 12; i++) {
        const { data } = await client.POST('/partner/v1/platforms/orders', { body: orderRequest(`lease-${i}`, { blockchain: 'Ethereum', callbackUrl: `${receiver.url}/lease/${i}` }) });
        orders.push(data!);
      }

      const expected = new Map<string, bigint>();
      let transfers = 0;
      const mineBurst = async (blocks: number) => {
        for (let block = 0; block < blocks; block++) {
          for (let k = 0; k < senders.length; k++) {
            const order = orders[transfers % orders.length]!;
            const amount = BigInt(1_000_000 + transfers);
            await token.transfer(senders[k]!, order.address, amount);
            expected.set(order.uuid, (expected.get(order.uuid) ?? 0n) + amount);
            transfers++;
          }
          await chain.mine(1);
          await new Promise((r) => setTimeout(r, 50));
        }
      };

      // A burst while all three run: exactly one of them scans and one runs the expiry job.
      await mineBurst(15);
      await until('half the callbacks', async () => (receiver.deliveries.length >= transfers / 2 ? true : undefined), 60_000, log);
      const scanning = proxies.map(getLogsCalls);
      expect(scanning.filter((calls) => calls > 0), `eth_getLogs calls by instance: ${scanning}`).toHaveLength(1);
      const holder = scanning.findIndex((calls) => calls > 0);
      const holding = await Promise.all(instances.map((p) => holdsLease(p, 'scan:Ethereum')));
      expect(holding).toEqual(instances.map((_, i) => i === holder));
      expect((await Promise.all(instances.map((p) => holdsLease(p, 'expire-orders')))).filter(Boolean)).toHaveLength(1);

      // kill -9 of the scanning instance in the middle of the burst: one of the two others takes over.
      const burst = mineBurst(15);
      await new Promise((r) => setTimeout(r, 300));
      instances[holder]!.process.process.kill('SIGKILL');
      await new Promise((resolve) => instances[holder]!.process.process.once('exit', resolve));
      await burst;
      await chain.mine(3);
      const survivors = instances.map((_, i) => i).filter((i) => i !== holder);
      const survivor = instances[survivors[0]!]!.client();
      await until(
        'every deposit credited by the new holder of the lease',
        async () => {
          for (const order of orders) {
            const { data } = await survivor.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } });
            if (BigInt(data!.receivedAmount) !== expected.get(order.uuid)) return undefined;
          }
          return true;
        },
        60_000,
        log,
      );
      const successors = survivors.filter((i) => getLogsCalls(proxies[i]!) > 0);
      expect(successors, `eth_getLogs calls by instance: ${proxies.map(getLogsCalls)}`).toHaveLength(1);
      expect(await holdsLease(instances[successors[0]!]!, 'scan:Ethereum')).toBe(true);

      const ids = await until(
        'every callback delivered',
        async () => {
          const distinct = new Set(receiver.deliveries.map((d) => d.headers['webhook-id'] as string));
          return distinct.size >= transfers ? distinct : undefined;
        },
        60_000,
        log,
      );
      await Promise.all(survivors.map((i) => instances[i]!.stop()));

      const db = await openPostgres(database.url!);
      try {
        const [deposits] = await db.query<{ n: bigint; keys: bigint }>('SELECT count(*)::bigint AS n, count(DISTINCT (tx_hash, log_index))::bigint AS keys FROM deposits');
        expect(deposits).toEqual({ n: BigInt(transfers), keys: BigInt(transfers) });
        const outbox = await db.query<{ webhook_id: string; order_uuid: string; state: string }>(
          'SELECT webhook_id, order_uuid::text, state FROM callback_outbox ORDER BY order_uuid, sequence',
        );
        expect(outbox).toHaveLength(transfers);
        expect(outbox.every((row) => row.state === 'delivered')).toBe(true);
        expect(new Set(outbox.map((row) => row.webhook_id))).toEqual(ids);
        // Each order's callbacks first reached the receiver in sequence order.
        const firstArrival = new Map<string, number>();
        receiver.deliveries.forEach((d, index) => {
          const id = d.headers['webhook-id'] as string;
          if (!firstArrival.has(id)) firstArrival.set(id, index);
        });
        for (const order of orders) {
          const arrivals = outbox.filter((row) => row.order_uuid === order.uuid).map((row) => firstArrival.get(row.webhook_id)!);
          expect(arrivals.length).toBeGreaterThan(0);
          expect(arrivals).toEqual([...arrivals].sort((a, b) => a - b));
        }
      } finally {
        await db.close();
      }
    } finally {
      await fleet?.stop();
      await chain.stop();
      await receiver.close();
      await database.drop();
    }
  }, 240_000);
});
