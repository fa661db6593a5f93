// Issue 47, done when: on a real local chain (anvil), fifteen withdrawals from the API, the platform
// killed with SIGKILL three times while it pays them, every one ends DONE with the txId of a successful
// transfer of its exact amount to its destination, each destination holds exactly its amount, and the
// hot wallet sent exactly fifteen transfers. The merchant's balance comes from real deposits the scanner
// credits. No line the platform wrote shows the hot wallet's key.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerClient, Withdrawal } from '../../../src/client/index.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { provesTransfer } from '../../../src/server/payouts/transfer-proof.js';
import { orderRequest } from '../../fixtures/orders.js';
import { startChain, TRANSFER_TOPIC, addressTopic, type Chain, type Hex, type Token } from '../../support/chain.js';
import { runCommand } from '../../support/cli.js';
import { openPostgres } from '../../../src/server/db/database.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { freshDatabase, TEST_DATABASE_URL } from '../../support/platform.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { keyLeaks } from '../../support/key-leak.js';
import { liveEthereumEnv } from '../../support/live-env.js';
import { randomDestination as destination } from '../../support/payouts.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';

const PAYOUTS = 15;
const CONFIRMATIONS = 2;


describe('paying withdrawals on anvil, killed three times on the way', () => {
  let chain: Chain;
  let token: Token;
  let dir: string;
  let keyHex: string;
  let wallet: HotWallet;
  let env: Record<string, string>;
  let merchant: { apiKey: string; apiSecret: string };
  let platform: RunningPartnerApi | undefined;
  const output: string[] = [];

  beforeAll(async () => {
    chain = await startChain({ blockTime: 1 });
    token = await chain.deployToken();
    dir = mkdtempSync(join(tmpdir(), 'partner-payouts-'));
    keyHex = randomBytes(32).toString('hex');
    wallet = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex'));
    const keyFile = join(dir, 'ethereum-payout.key');
    writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    await chain.setBalance(wallet.address, 10n ** 19n);
    await token.distribute([wallet.address, chain.accounts[1]!], 10_000_000_000n); // 10,000 USDT each
    env = {
      ...liveEthereumEnv({ rpcUrl: chain.rpcUrl, token: token.address, confirmations: CONFIRMATIONS, startBlock: await chain.blockNumber() }),
      DATABASE_URL: '',
      DATA_DIR: copiedDataDirectory('partner-payouts-data-'),
      ETHEREUM_PAYOUT_KEY_FILE: keyFile,
      ETHEREUM_WITHDRAWAL_FEE: '0',
      ETHEREUM_MIN_WITHDRAWAL: '1',
      // Every line the platform writes, the most detailed: none may show the key.
      LOG_LEVEL: 'debug',
    };
    const created = await runCommand(['merchants', 'create', '--name', 'payouts e2e', '--json'], env);
    merchant = JSON.parse(created.stdout) as typeof merchant;
    expect((await runCommand(['merchants', 'set-withdrawals', '--api-key', merchant.apiKey, '--enabled'], env)).code).toBe(0);
  });
  afterAll(async () => {
    await platform?.stop();
    await chain?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(env.DATA_DIR!, { recursive: true, force: true });
  });

  async function start(): Promise<PartnerClient> {
    platform = await startPartnerApi(env);
    return platform.client(merchant);
  }

  function kill() {
    output.push(platform!.process.output());
    platform!.process.process.kill('SIGKILL');
  }

  async function withdrawals(client: PartnerClient): Promise<Withdrawal[]> {
    const all: Withdrawal[] = [];
    for await (const w of client.listWithdrawals({ limit: 100 })) all.push(w);
    return all;
  }

  it('pays each exactly once, proven by the chain, and the key appears in no line', async () => {
    let client = await start();
    // The balance: a real deposit of 5,000 USDT to an order, credited by the scanner.
    const order = await client.POST('/partner/v1/platforms/orders', { body: orderRequest('payout-funding', { blockchain: 'Ethereum' }) });
    await token.transfer(chain.accounts[1]!, order.data!.address, 5_000_000_000n);
    await expect.poll(async () => (await client.getBalances()).find((b) => b.blockchain === 'Ethereum')!.available, { timeout: 30_000 }).toBe(5_000_000_000);

    const asked = new Map<string, { to: string; amount: bigint }>();
    for (let i = 0; i < PAYOUTS; i++) {
      const to = destination();
      const amount = 10 + i + (i % 3) / 1000; // 10.000 to 24.002 USDT, each its own
      const withdrawal = await client.createWithdrawal({ externalId: `payout-${i}`, blockchain: 'Ethereum', currency: 'USDT', amount, destinationAddress: to });
      asked.set(withdrawal.uuid, { to, amount: BigInt(Math.round(amount * 1000)) * 1000n });
    }

    // Three times: wait until some are on their way (signed, sent, or done), then kill the platform.
    for (let kills = 0; kills < 3; kills++) {
      const before = (await withdrawals(client)).filter((w) => w.stage === 'sent' || w.status === 'DONE').length;
      await expect.poll(async () => (await withdrawals(client)).filter((w) => w.stage === 'sent' || w.status === 'DONE').length, { timeout: 60_000, interval: 100 }).toBeGreaterThan(before);
      kill();
      client = await start();
    }
    await expect.poll(async () => (await withdrawals(client)).filter((w) => w.status === 'DONE').length, { timeout: 120_000, interval: 500 }).toBe(PAYOUTS + 0);

    const done = await withdrawals(client);
    for (const withdrawal of done) {
      const { to, amount } = asked.get(withdrawal.uuid)!;
      expect(withdrawal).toMatchObject({ status: 'DONE', txId: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      const receipt = await chain.rpc<{ status: string; logs: { address: string; topics: string[]; data: string }[] }>('eth_getTransactionReceipt', [withdrawal.txId]);
      expect(receipt.status).toBe('0x1');
      expect(provesTransfer('Ethereum', receipt.logs, { token: token.address, from: wallet.address, to, amount })).toBe(true);
      expect(await token.balanceOf(to)).toBe(amount);
    }
    // The hot wallet sent exactly fifteen transactions, each one Transfer of the token.
    expect(BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [wallet.address, 'latest']))).toBe(BigInt(PAYOUTS));
    const sentByWallet = await chain.getLogs({ address: token.address, topics: [TRANSFER_TOPIC, addressTopic(wallet.address)], fromBlock: 0n, toBlock: 'latest' });
    expect(sentByWallet).toHaveLength(PAYOUTS);
    const balance = (await client.getBalances()).find((b) => b.blockchain === 'Ethereum')!;
    const total = [...asked.values()].reduce((sum, w) => sum + w.amount, 0n);
    expect(balance).toMatchObject({ held: 0, withdrawn: Number(total), available: 5_000_000_000 - Number(total) });
    // What an operator watches: the hot wallet's balances and the payouts, by network (never a key or an address).
    const metrics = await (await fetch(`${platform!.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^partner_payout_hot_wallet_balance\{network="Ethereum",asset="token"\} \d+/m);
    expect(metrics).toMatch(/^partner_payout_hot_wallet_balance\{network="Ethereum",asset="gas"\} [\d.e+]+/m);
    expect(metrics).toMatch(/^partner_payouts\{network="Ethereum",state="in_flight"\} 0$/m);
    expect(metrics).toMatch(/^partner_payouts_confirmed_total\{network="Ethereum"\} [1-9]/m);
    expect(metrics).not.toContain(wallet.address);
    const check = await runCommandAfterStop();
    expect(check.stdout).toMatch(/the books agree/);

    expect(output.join('\n')).toMatch(/payout confirmed: DONE/); // the platform did log its payouts
    expect(keyLeaks(output, keyHex)).toEqual([]);
  }, 300_000);

  /** The operator's ledger check, on the embedded database once the platform has stopped. */
  async function runCommandAfterStop() {
    output.push(platform!.process.output());
    await platform!.stop();
    platform = undefined;
    return runCommand(['ledger', 'check'], env);
  }
});

describe.skipIf(!TEST_DATABASE_URL)('paying withdrawals from two instances on PostgreSQL', () => {
  it('has one payer at a time: each paid once, the hot wallet sending one transfer each', async () => {
    const PAID = 6;
    const chain = await startChain({ blockTime: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'partner-payouts-pg-'));
    const database = await freshDatabase('postgres');
    await database.db.close();
    const instances: RunningPartnerApi[] = [];
    try {
      const token = await chain.deployToken();
      const keyFile = join(dir, 'ethereum-payout.key');
      const keyHex = randomBytes(32).toString('hex');
      writeFileSync(keyFile, keyHex, { mode: 0o600 });
      const payer = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex'));
      await chain.setBalance(payer.address, 10n ** 19n);
      await token.distribute([payer.address, chain.accounts[1]!], 1_000_000_000n);
      const shared = {
        ...liveEthereumEnv({ rpcUrl: chain.rpcUrl, token: token.address, confirmations: CONFIRMATIONS, startBlock: await chain.blockNumber() }),
        DATABASE_URL: database.url!,
        ETHEREUM_PAYOUT_KEY_FILE: keyFile,
        ETHEREUM_WITHDRAWAL_FEE: '0',
        LOG_LEVEL: 'warn',
      };
      const env = (i: number) => ({ ...shared, DATA_DIR: join(dir, `data-${i}`) });
      const merchant = JSON.parse((await runCommand(['merchants', 'create', '--name', 'two payers', '--json'], env(0))).stdout) as { apiKey: string; apiSecret: string };
      expect((await runCommand(['merchants', 'set-withdrawals', '--api-key', merchant.apiKey, '--enabled'], env(0))).code).toBe(0);
      for (let i = 0; i < 2; i++) instances.push(await startPartnerApi(env(i)));
      const clients = instances.map((instance) => instance.client(merchant));
      const order = await clients[0]!.POST('/partner/v1/platforms/orders', { body: orderRequest('two-payers-funding', { blockchain: 'Ethereum' }) });
      await token.transfer(chain.accounts[1]!, order.data!.address, 500_000_000n);
      await expect.poll(async () => (await clients[1]!.getBalances()).find((b) => b.blockchain === 'Ethereum')!.available, { timeout: 30_000 }).toBe(500_000_000);
      const asked: { uuid: string; to: string; amount: bigint }[] = [];
      for (let i = 0; i < PAID; i++) {
        const to = destination();
        const withdrawal = await clients[i % 2]!.createWithdrawal({ externalId: `two-${i}`, blockchain: 'Ethereum', currency: 'USDT', amount: 20 + i, destinationAddress: to });
        asked.push({ uuid: withdrawal.uuid, to, amount: BigInt(20 + i) * 1_000_000n });
      }
      await expect
        .poll(async () => (await Promise.all(asked.map(async (w) => (await clients[0]!.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: w.uuid } } })).data!.status))).join(), { timeout: 120_000, interval: 500 })
        .toBe(Array(PAID).fill('DONE').join());
      for (const { to, amount } of asked) expect(await token.balanceOf(to)).toBe(amount);
      expect(BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [payer.address, 'latest']))).toBe(BigInt(PAID));
      // One instance holds the payout job's lease; the other never signed.
      const sql = await openPostgres(database.url!);
      try {
        expect(await sql.query("SELECT job FROM job_leases WHERE job = 'payout:Ethereum'")).toHaveLength(1);
        expect(await checkLedger(sql)).toMatchObject({ problems: [] });
      } finally {
        await sql.close();
      }
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()));
      await database.drop();
      await chain.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
