// Issue 9 through the real `partner-api` process in live mode, on anvil behind the fault proxy (which
// ignores the address filter throughout): a fake token's transfer to a deposit address is never
// credited; result limits split queries and a lagging backend delays crediting, nothing lost; a reorg deeper than the confirmations halts crediting on the network, shown by /readyz
// and /metrics; the operator's `chain resume` and `deposits rescan` then credit the new chain's
// transfer once and never the re-mined one twice.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedDepositOrder, PartnerClient } from '../../../src/client/index.js';
import { startChain, type Chain, type Hex, type Token } from '../../support/chain.js';
import { runCommand } from '../../support/cli.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';
import { until } from '../../support/processes.js';
import { startFaultProxy, type FaultProxy } from '../../support/rpc-fault-proxy.js';
import { orderRequest } from '../../fixtures/orders.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { liveEthereumEnv } from '../../support/live-env.js';

const CONFIRMATIONS = 2;
const WAIT_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('issue 9 end to end: a deep reorg halts crediting; resume and rescan credit exactly once', () => {
  let chain: Chain;
  let token: Token;
  let fake: Token;
  let proxy: FaultProxy;
  let platform: RunningPartnerApi | undefined;
  let client: PartnerClient;
  let dataDir: string;
  let env: Record<string, string>;
  let merchant: { apiKey: string; apiSecret: string };

  // The operator's commands run in this process (test/support/cli.ts), on the stopped server's data directory.
  const cli = (args: string[]) => runCommand(args, env);

  const start = async () => {
    platform = await startPartnerApi(env);
    client = platform.client(merchant);
  };

  beforeAll(async () => {
    chain = await startChain();
    token = await chain.deployToken();
    fake = await chain.deployToken();
    await token.distribute(chain.accounts.slice(1, 4), 1_000_000_000n);
    await fake.distribute(chain.accounts.slice(1, 4), 1_000_000_000n);
    proxy = await startFaultProxy(chain.rpcUrl);
    proxy.faults.ignoreAddressFilter = true;
    dataDir = copiedDataDirectory('partner-halt-');
    env = {
      ...liveEthereumEnv({ rpcUrl: proxy.url, token: token.address, confirmations: CONFIRMATIONS, startBlock: await chain.blockNumber() }),
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
    const created = await cli(['merchants', 'create', '--name', 'halt-e2e', '--json']);
    merchant = JSON.parse(created.stdout) as typeof merchant;
    await start();
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
    await proxy?.close();
    await chain?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const serverLog = () => platform?.process.output() ?? '';

  async function received(uuid: string): Promise<number> {
    const { data } = await client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } });
    return data!.receivedAmount;
  }

  const waitFor = <T>(what: string, probe: () => Promise<T | undefined>) => until(what, probe, WAIT_MS, () => `server:\n${serverLog().split('\n').slice(-10).join('\n')}`);

  it('credits every transfer once through a provider\'s result limits and a lagging backend', async () => {
    const orders: CreatedDepositOrder[] = [];
    for (const label of ['limits-1', 'limits-2']) orders.push((await client.POST('/partner/v1/platforms/orders', { body: orderRequest(label, { blockchain: 'Ethereum' }) })).data!);
    const [s1, s2, s3] = chain.accounts.slice(1, 4) as [Hex, Hex, Hex];
    // While the 4 + CONFIRMATIONS blocks below are mined, the platform sees the head from before them: a
    // scan that read a head in the middle and checked its last block once all were mined would find that
    // block on the backend lagging 3 blocks, and credit (on a busy machine it did).
    proxy.faults = { ignoreAddressFilter: true, lag: { blocks: 4 + CONFIRMATIONS, methods: ['eth_blockNumber'] } };
    await token.transfer(s1, orders[0]!.address.toLowerCase(), 11_000_000n);
    await token.transfer(s2, orders[1]!.address.toLowerCase(), 12_000_000n);
    await fake.transfer(s3, orders[1]!.address.toLowerCase(), 99_000_000n);
    await token.transfer(s3, orders[0]!.address.toLowerCase(), 3n);
    await chain.mine(CONFIRMATIONS);
    // Alchemy's limit at one log per query, and a backend 3 blocks behind for logs and blocks.
    proxy.faults = { ignoreAddressFilter: true, logLimit: { provider: 'alchemy', maxLogs: 1 }, lag: { blocks: 3, methods: ['eth_getLogs', 'eth_getBlockByNumber'] } };
    await waitFor('queries split', async () => (proxy.calls.some((c) => c.refused === 'alchemy result limit') ? true : undefined));
    await waitFor('the lagging backend refused', async () => (proxy.calls.some((c) => c.refused === 'block beyond the lagging head') ? true : undefined));
    await sleep(1_500);
    // The newest confirmed block is beyond the lagging backend: no range is committed, nothing skipped.
    expect([await received(orders[0]!.uuid), await received(orders[1]!.uuid)]).toEqual([0, 0]);
    // The backend catches up between two scans, right after one was refused (the next starts a poll
    // later): switched in the middle of a scan, its logs would come from the lagging backend and its
    // last block from the one that caught up, and the scan would pass a transfer it never saw (a CI run
    // on a busy machine did).
    const refusals = () => proxy.calls.filter((c) => c.refused === 'block beyond the lagging head').length;
    const refusedBefore = refusals();
    await waitFor('the next scan refused', async () => (refusals() > refusedBefore ? true : undefined));
    proxy.faults = { ignoreAddressFilter: true, logLimit: { provider: 'alchemy', maxLogs: 1 } };
    await waitFor('every transfer credited', async () => ((await received(orders[0]!.uuid)) === 11_000_003 && (await received(orders[1]!.uuid)) === 12_000_000 ? true : undefined));
    await chain.mine(3);
    await sleep(2_000); // further scans credit nothing twice
    expect([await received(orders[0]!.uuid), await received(orders[1]!.uuid)]).toEqual([11_000_003, 12_000_000]);
    proxy.faults = { ignoreAddressFilter: true };
  }, 180_000);

  it('halts on a deep reorg, shows it, and after resume and rescan credits every transfer exactly once', async () => {
    const { data: order } = await client.POST('/partner/v1/platforms/orders', { body: orderRequest('halt-1', { blockchain: 'Ethereum' }) });
    const payee = order!.address.toLowerCase();
    const [s1, s2, s3] = chain.accounts.slice(1, 4) as [Hex, Hex, Hex];

    const snapshot = await chain.snapshot();
    const forkParent = await chain.blockNumber();
    await fake.transfer(s3, payee, 50_000_000n); // a fake token: the proxy hands it to the scanner
    const paid = await token.transfer(s1, payee, 20_000_000n);
    const raw = await chain.rpc<Hex>('eth_getRawTransactionByHash', [paid]);
    await chain.mine(CONFIRMATIONS + 1);
    await waitFor('the payment credited', async () => ((await received(order!.uuid)) === 20_000_000 ? true : undefined));

    // A reorg deeper than the confirmations: the same transaction re-mined after another transfer.
    await chain.revert(snapshot);
    await chain.setAutomine(false);
    try {
      await token.transfer(s2, payee, 1n);
      await chain.rpc('eth_sendRawTransaction', [raw]);
      await chain.mine(1);
    } finally {
      await chain.setAutomine(true);
    }
    expect((await chain.waitForReceipt(paid)).logs[0]!.logIndex).toBe('0x1');
    await chain.mine(CONFIRMATIONS + 4);

    const readiness = await waitFor('/readyz reports the halt', async () => {
      const response = await fetch(`${platform!.baseUrl}/readyz`);
      return response.status === 503 ? { status: response.status, body: await response.json() } : undefined;
    });
    expect(readiness.body).toMatchObject({ status: 'chain_halted', halted: [{ network: 'Ethereum' }] });
    expect(readiness.body.halted[0].reason).toMatch(/reorg deeper than 2 confirmations/);
    const metrics = await (await fetch(`${platform!.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^partner_chain_halted\{network="Ethereum"\} 1$/m);
    expect(metrics).toMatch(/^partner_chain_cursor_lag_blocks\{network="Ethereum"\} \d+$/m);
    await waitFor('the halt in the server log', async () => (/HALTED/.test(serverLog()) ? true : undefined)); // logged just after /readyz can see it
    await sleep(2_000); // more polls: still halted, nothing credited
    expect(await received(order!.uuid)).toBe(20_000_000);

    // The operator stops the server (the embedded database is one process's), reviews, resumes from
    // the fork point and rescans the order: the new transfer is credited, the re-mined one is not again.
    await platform!.stop();
    expect(platform!.process.process.exitCode).toBe(0);
    const refused = await cli(['deposits', 'rescan', '--order', order!.uuid]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/halted/);
    const resumed = await cli(['chain', 'resume', '--blockchain', 'ethereum', '--from-block', String(forkParent + 1n), '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    // The re-mined payment is found again on the new chain: it stands, nothing is reversed (issue 53).
    expect(JSON.parse(resumed.stdout)).toMatchObject({ network: 'Ethereum', wasHalted: true, nextBlock: String(forkParent + 1n), foundAgain: 1, reversed: [], owed: [] });
    const rescan = await cli(['deposits', 'rescan', '--order', order!.uuid, '--json']);
    expect(rescan.code, rescan.stderr).toBe(0);
    expect(JSON.parse(rescan.stdout)).toMatchObject({ transfersFound: 2, credited: [{ amount: '1', receivedAmount: '20000001' }] });
    const again = await cli(['deposits', 'rescan', '--order', order!.uuid, '--json']);
    expect(again.code, again.stderr).toBe(0); // a failure says why (a loaded CI run once printed nothing here)
    expect(JSON.parse(again.stdout)).toMatchObject({ transfersFound: 2, credited: [] });
    const usage = await cli(['chain', 'resume', '--blockchain', 'bitcoin']);
    expect(usage.code).toBe(64);

    // The server again: ready, scanning the new chain from the fork point, crediting nothing twice.
    await start();
    expect((await fetch(`${platform!.baseUrl}/readyz`)).status).toBe(200);
    await chain.mine(2);
    await waitFor('the halted gauge cleared', async () => (/^partner_chain_halted\{network="Ethereum"\} 0$/m.test(await (await fetch(`${platform!.baseUrl}/metrics`)).text()) ? true : undefined));
    await waitFor('the scan past the fork', async () => {
      const lag = /^partner_chain_cursor_lag_blocks\{network="Ethereum"\} (\d+)$/m.exec(await (await fetch(`${platform!.baseUrl}/metrics`)).text());
      return lag?.[1] === '0' ? true : undefined;
    });
    expect(await received(order!.uuid)).toBe(20_000_001);
    await platform!.stop();
    platform = undefined;
    const events = JSON.parse((await cli(['callbacks', 'list', '--order', order!.uuid, '--json'])).stdout) as { event: string }[];
    expect(events.filter((e) => e.event === 'order.deposit')).toHaveLength(2);
  }, 120_000);
});
