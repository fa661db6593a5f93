// RPC calls made by one instance and by three on one PostgreSQL, side by side in one run
// (npm run bench:instances; issue 9's bar: three instances ≤ 1.2 × one instance's calls).
//
// Each phase: a fresh database, BENCH_INSTANCES `partner-api serve` processes (sandbox mode, one
// SECRET_KEY), each reaching the same anvil chain through its own counting JSON-RPC proxy
// (test/support/rpc-fault-proxy.ts, no faults). The same workload in both phases: ORDERS Ethereum
// orders, then BLOCKS blocks with TRANSFERS_PER_BLOCK transfers, one block every BLOCK_MS, then waiting
// until every transfer is credited (checked exactly against the database), then HOLD_SECONDS more of
// polling at the head. Counted: every JSON-RPC request the instances sent, and eth_getLogs alone.
//
//   npm run bench:instances   (PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, else a throwaway cluster)
import { openPostgres } from '../src/server/db/database.js';
import { startChain, type Chain, type Token } from '../test/support/chain.js';
import { startInstances, type Instances } from '../test/support/instances.js';
import { freshDatabase } from '../test/support/platform.js';
import { until } from '../test/support/processes.js';
import { orderRequest } from '../test/fixtures/orders.js';
import { buildWhatChanged, publishResults, startPostgres } from './support.js';

const ORDERS = 20;
const BLOCKS = 30;
const TRANSFERS_PER_BLOCK = 3;
const BLOCK_MS = 250;
const HOLD_SECONDS = 5;

interface Phase {
  instances: number;
  rpcCalls: number;
  getLogsCalls: number;
  /** Instances that sent at least one eth_getLogs. */
  scanningInstances: number;
  credited: number;
  seconds: number;
}

async function phase(chain: Chain, token: Token, postgresUrl: string, count: number): Promise<Phase> {
  const database = await freshDatabase('postgres', postgresUrl);
  await database.db.close();
  const started = Date.now();
  let fleet: Instances | undefined;
  try {
    const { instances, proxies } = (fleet = await startInstances(count, database.url!, chain.rpcUrl, {
      LOG_LEVEL: 'silent',
      ETHEREUM_TOKEN_CONTRACT: token.address,
      ETHEREUM_CONFIRMATIONS: '2',
      ETHEREUM_POLL_SECONDS: '1',
      ETHEREUM_START_BLOCK: String(await chain.blockNumber()),
    }));
    const client = instances[0]!.client();
    const addresses: string[] = [];
    for (let i = 0; i < ORDERS; i++) addresses.push((await client.POST('/partner/v1/platforms/orders', { body: orderRequest(`bench-${count}-${i}`, { blockchain: 'Ethereum' }) })).data!.address);
    const senders = chain.accounts.slice(1, 1 + TRANSFERS_PER_BLOCK);
    let sum = 0n;
    for (let block = 0; block < BLOCKS; block++) {
      for (let k = 0; k < TRANSFERS_PER_BLOCK; k++) {
        const amount = BigInt(1_000_000 + block * 10 + k);
        await token.transfer(senders[k]!, addresses[(block * TRANSFERS_PER_BLOCK + k) % ORDERS]!, amount);
        sum += amount;
      }
      await chain.mine(1);
      await new Promise((r) => setTimeout(r, BLOCK_MS));
    }
    await chain.mine(2);
    const db = await openPostgres(database.url!);
    let credited = 0;
    try {
      await until('every transfer credited', async () => {
        const [row] = await db.query<{ n: bigint; total: bigint | null }>('SELECT count(*)::bigint AS n, sum(amount)::bigint AS total FROM deposits');
        credited = Number(row!.n);
        return row!.total === sum && credited === BLOCKS * TRANSFERS_PER_BLOCK ? true : undefined;
      });
    } finally {
      await db.close();
    }
    await new Promise((r) => setTimeout(r, HOLD_SECONDS * 1000));
    await Promise.all(instances.map((p) => p.stop()));
    const getLogs = proxies.map((p) => p.calls.filter((c) => c.method === 'eth_getLogs').length);
    return {
      instances: count,
      rpcCalls: proxies.reduce((total, p) => total + p.calls.length, 0),
      getLogsCalls: getLogs.reduce((a, b) => a + b, 0),
      scanningInstances: getLogs.filter((n) => n > 0).length,
      credited,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await fleet?.stop();
    await database.drop();
  }
}

buildWhatChanged();
const postgres = startPostgres(54342);
if (!postgres) throw new Error('bench:instances needs PostgreSQL (several instances share one database)');
const chain = await startChain({ automine: false });
try {
  const token = await chain.deployToken();
  await token.distribute(chain.accounts.slice(1, 1 + TRANSFERS_PER_BLOCK), 10n ** 12n);
  const one = await phase(chain, token, postgres.url, 1);
  const three = await phase(chain, token, postgres.url, 3);
  const row = (p: Phase) => `| ${p.instances} | ${p.credited} | ${p.rpcCalls.toLocaleString('en-US')} | ${p.getLogsCalls.toLocaleString('en-US')} | ${p.scanningInstances} | ${p.seconds.toFixed(1)} |`;
  const markdown = [
    `${ORDERS} Ethereum orders, ${BLOCKS} blocks of ${TRANSFERS_PER_BLOCK} transfers mined every ${BLOCK_MS} ms, polling every second, then ${HOLD_SECONDS} s at the head; every transfer credited once in both phases.`,
    '',
    '| instances | transfers credited | JSON-RPC calls | of which eth_getLogs | instances that scanned | seconds |',
    '|---:|---:|---:|---:|---:|---:|',
    row(one),
    row(three),
    '',
    `**Three instances / one: ${(three.rpcCalls / one.rpcCalls).toFixed(2)}× the JSON-RPC calls, ${(three.getLogsCalls / one.getLogsCalls).toFixed(2)}× the eth_getLogs calls** (bar: ≤ 1.2×).`,
  ].join('\n');
  publishResults('instances', markdown, { one, three, ratio: three.rpcCalls / one.rpcCalls });
} finally {
  await chain.stop();
  postgres.stop();
}
