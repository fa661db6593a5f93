// Issue 54, item 2, end to end: two live `partner-api serve` instances on one PostgreSQL, paying Ethereum
// withdrawals from a hot wallet on anvil. Three withdrawals wait for the wallet's funds; the operator
// claims one with docs/operating.md's recipe (its commands run verbatim with bash, on the database
// both instances share) and the wallet is topped up: whichever instance holds the payer pays the other
// two and never the claimed one. The operator pays that one from another account and records it with
// the recipe's second block: it is DONE, its destination holding exactly its amount, once.
//
// Run with TEST_DATABASE_URL (PostgreSQL); about a minute on a 2-core machine.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerClient } from '../../../src/client/index.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { orderRequest } from '../../fixtures/orders.js';
import { normalizeAddress, startChain, type Chain, type Token } from '../../support/chain.js';
import { runCommand } from '../../support/cli.js';
import { startInstances, type Instances } from '../../support/instances.js';
import { liveEthereumEnv } from '../../support/live-env.js';
import { randomDestination } from '../../support/payouts.js';
import { until } from '../../support/processes.js';
import { freshDatabase, TEST_DATABASE_URL } from '../../support/platform.js';
import { operating, recipeBlocks, runBlock } from '../../docs/operating-blocks.js';

const USDT = 1_000_000n;
const SETTLE = { timeout: 90_000, interval: 250 };

describe.runIf(TEST_DATABASE_URL)('a withdrawal claimed for hand payment, two instances on PostgreSQL, anvil', { timeout: 300_000 }, () => {
  let chain: Chain;
  let token: Token;
  let instances: Instances;
  let drop: () => Promise<void>;
  let dir: string;
  let wallet: string;
  /** The operator's commands' environment: the database both instances share. */
  let operator: Record<string, string>;
  let client: PartnerClient;

  beforeAll(async () => {
    chain = await startChain({ blockTime: 1 });
    token = await chain.deployToken();
    const database = await freshDatabase('postgres');
    await database.db.close();
    drop = database.drop;
    dir = mkdtempSync(join(tmpdir(), 'partner-hand-'));
    const keyHex = randomBytes(32).toString('hex');
    const keyFile = join(dir, 'ethereum-payout.key');
    writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
    wallet = normalizeAddress(new HotWallet('Ethereum', Buffer.from(keyHex, 'hex')).address);
    await chain.setBalance(wallet, 10n ** 19n); // gas; no USDT yet: the payer waits for funds
    const shared = {
      ...liveEthereumEnv({ rpcUrl: chain.rpcUrl, token: token.address, confirmations: 2, startBlock: await chain.blockNumber() }),
      DATABASE_URL: database.url!,
      ETHEREUM_WITHDRAWAL_FEE: '0',
      ETHEREUM_MIN_WITHDRAWAL: '1',
      ETHEREUM_PAYOUT_KEY_FILE: keyFile,
      LOG_LEVEL: 'warn',
    };
    operator = { ...shared, DATA_DIR: join(dir, 'operator') };
    const merchant = JSON.parse((await runCommand(['merchants', 'create', '--name', 'hand', '--json'], operator)).stdout) as { apiKey: string; apiSecret: string };
    expect((await runCommand(['merchants', 'set-withdrawals', '--api-key', merchant.apiKey, '--enabled'], operator)).code).toBe(0);
    instances = await startInstances(2, database.url!, chain.rpcUrl, shared);
    client = instances.instances[0]!.client(merchant);
    const order = await client.POST('/partner/v1/platforms/orders', { body: orderRequest('hand-funding', { blockchain: 'Ethereum' }) });
    await token.transfer(chain.accounts[0]!, order.data!.address, 100n * USDT);
    const credited = async () => (await client.getBalances()).find((b) => b.blockchain === 'Ethereum')!.available === 100_000_000 || undefined;
    await until('the funding deposit credited', credited, SETTLE.timeout);
  }, 180_000);

  afterAll(async () => {
    await instances?.stop();
    await drop?.();
    await chain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const withdraw = async (externalId: string, to: string) => {
    const { data } = await client.POST('/partner/v1/platforms/withdrawals', { body: { externalId, blockchain: 'Ethereum', currency: 'USDT', amount: 10, destinationAddress: to } });
    return data!.uuid;
  };
  const read = async (uuid: string) => (await client.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid } } })).data!;
  const pendingRow = async (uuid: string) => {
    const rows = JSON.parse((await runCommand(['withdrawals', 'pending', '--json'], operator)).stdout) as { uuid: string; awaits: string }[];
    return rows.find((r) => r.uuid === uuid);
  };

  it('pays the others, never the claimed one, which the operator pays and records: DONE once', async () => {
    const destinations = [randomDestination(), randomDestination(), randomDestination()];
    const [first, claimed, third] = [await withdraw('hand-1', destinations[0]!), await withdraw('hand-2', destinations[1]!), await withdraw('hand-3', destinations[2]!)];
    // The payer tried them all and found no funds.
    await expect.poll(async () => (await pendingRow(claimed))?.awaits, SETTLE).toBe('funds');

    // Where the hot wallet pays, a hand payment is recorded only for a claimed withdrawal.
    const unclaimed = await runCommand(['withdrawals', 'record-tx', '--uuid', first, '--tx-id', `0x${'ab'.repeat(32)}`], operator);
    expect(unclaimed).toMatchObject({ code: 1, stderr: expect.stringMatching(/is not claimed for hand payment, and in live mode a hot wallet may pay Ethereum: claim it first/) });

    const [claimBlock, recordBlock] = recipeBlocks(operating, 'By hand');
    expect(await runBlock(claimBlock!, { ...operator, UUID: claimed })).toContain(`withdrawal ${claimed} is claimed for hand payment`);
    expect(await pendingRow(claimed)).toMatchObject({ awaits: 'hand_payment' });

    await token.transfer(chain.accounts[0]!, wallet, 100n * USDT);
    await expect.poll(async () => [(await read(first)).status, (await read(third)).status], SETTLE).toEqual(['DONE', 'DONE']);
    // The rounds that paid the two had the funds for the third, and left it: queued, as the merchant reads it, nothing sent.
    expect(await read(claimed)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    expect(await token.balanceOf(destinations[1]!)).toBe(0n);

    const paid = await token.transfer(chain.accounts[0]!, destinations[1]!, 10n * USDT);
    const recorded = await runBlock(recordBlock!, { ...operator, UUID: claimed, TX: paid });
    expect(recorded).toContain(`withdrawal ${claimed} is sent: DONE once the chain confirms that ${paid} pays exactly 10 USDT to ${destinations[1]}`);
    await expect.poll(async () => read(claimed), SETTLE).toMatchObject({ status: 'DONE', txId: paid });

    expect(await Promise.all(destinations.map((d) => token.balanceOf(d)))).toEqual([10n * USDT, 10n * USDT, 10n * USDT]);
    expect(await token.balanceOf(wallet)).toBe(80n * USDT); // the hot wallet paid two, never the third
    expect(await runCommand(['ledger', 'check'], operator)).toMatchObject({ code: 0 });
  });
});
