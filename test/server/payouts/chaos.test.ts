// Issue 53, done when: a chaos test on anvil behind a JSON-RPC proxy the test controls. The real
// `partner-api` process, live, pays withdrawals from its hot wallet (a key file) through the proxy while
// the test stalls mining long enough for several replacements, empties the pool, spends a payout's nonce
// from outside, blinds the node to receipts, transactions and logs, shows receipts only 6 blocks late,
// reorganizes the chain below and beyond the confirmations, kills the platform with SIGKILL at random
// moments, and runs two instances on PostgreSQL. After each, assertPaidExactlyOnce: every destination
// holds exactly its amount, the hot wallet's transfers are the DONE withdrawals and its nonce its
// transfers (nothing reverted), nothing is sent without a live transaction, `ledger check` agrees, and the
// key is in no line. Each scenario has its own hot wallet, data directory, merchant and withdrawals.
//
// Run: `npx vitest run test/server/payouts/chaos.test.ts`; (h1) and (h2) with TEST_DATABASE_URL. On the
// 2-core machine of issue 53, 8 PGlite scenarios in about 3 min, PostgreSQL's two about 65 s more. Against
// the payer of that day (a) (d) (e) (f2) (h2) failed, as the issue reports it: replacements reverted for
// want of gas, rounds throwing on a duplicate hash after ten candidates, payouts paid again and again by a
// blind node or late receipts, DONE after a reorg with nothing at the destination. A failure lists every
// broken invariant, then the platform's warnings and errors, counted.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PartnerClient, Withdrawal } from '../../../src/client/index.js';
import { openPglite, openPostgres, type Database } from '../../../src/server/db/database.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { orderRequest } from '../../fixtures/orders.js';
import { normalizeAddress, startChain, toQuantity, type Chain, type Hex, type Token } from '../../support/chain.js';
import { runCommand } from '../../support/cli.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { startInstances, type Instances } from '../../support/instances.js';
import { liveEthereumEnv } from '../../support/live-env.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';
import { assertPaidExactlyOnce, randomDestination, type Asked } from '../../support/payouts.js';
import { freshDatabase, TEST_DATABASE_URL } from '../../support/platform.js';
import { until } from '../../support/processes.js';
import { startReceiver, type Receiver } from '../../support/receiver.js';
import { startRpcProxy, type RpcProxy } from '../../support/rpc-proxy.js';

const CONFIRMATIONS = 3;
/** How long a scenario waits for its withdrawals to be DONE and paid (generous: the machine is shared). */
const SETTLE_MS = 90_000;
const GWEI = 1_000_000_000n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Run {
  keyHex: string;
  wallet: string;
  env: Record<string, string>;
  merchant: { apiKey: string; apiSecret: string };
  platforms: RunningPartnerApi[];
  instances?: Instances;
  output: string[];
  asked: Asked[];
  outside: number;
  fromBlock: bigint;
  cleanup: (() => Promise<void> | void)[];
}

describe('paying withdrawals through chaos on anvil (issue 53)', () => {
  let chain: Chain;
  let token: Token;
  let proxy: RpcProxy;
  /** The merchant's callbacks' destination, on loopback (the platform sends nothing elsewhere). */
  let receiver: Receiver;
  let run: Run | undefined;

  beforeAll(async () => {
    chain = await startChain({ blockTime: 1 });
    token = await chain.deployToken();
    proxy = await startRpcProxy(chain.rpcUrl);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await proxy?.close();
    await chain?.stop();
  });
  beforeEach(async () => {
    proxy.blind({});
    proxy.lateReceipts(0);
    proxy.down(false);
    await mining(true);
  });
  afterEach(async () => {
    for (const step of (run?.cleanup ?? []).reverse()) await step();
    run = undefined;
  });

  /** Interval mining (a block a second) on, or stalled: nothing mined until it is on again. */
  const mining = (on: boolean) => chain.rpc('evm_setIntervalMining', [on ? 1 : 0]);
  const nonceOf = async (address: string, at: 'latest' | 'pending') => BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [address, at]));

  /** 1,000 USDT credited to the merchant by the scanner, from a real deposit to an order of theirs. */
  async function fund(client: PartnerClient) {
    const order = await client.POST('/partner/v1/platforms/orders', { body: orderRequest(`chaos-funding-${randomBytes(4).toString('hex')}`, { blockchain: 'Ethereum', callbackUrl: `${receiver.url}/deposits` }) });
    await token.transfer(chain.accounts[0]!, order.data!.address, 1_000_000_000n);
    await expect.poll(async () => (await client.getBalances()).find((b) => b.blockchain === 'Ethereum')!.available, { timeout: 30_000, interval: 200 }).toBe(1_000_000_000);
  }

  /** A merchant with withdrawals enabled, made by the operator's commands; their credentials. */
  async function merchant(env: Record<string, string>): Promise<Run['merchant']> {
    const created = JSON.parse((await runCommand(['merchants', 'create', '--name', 'chaos', '--json'], env)).stdout) as Run['merchant'];
    expect((await runCommand(['merchants', 'set-withdrawals', '--api-key', created.apiKey, '--enabled'], env)).code).toBe(0);
    return created;
  }

  /**
   * The PGlite scenarios' starting point, made once: a data directory with the merchant, withdrawals
   * enabled and 1,000 USDT credited (a platform ran on it, without a hot wallet, and stopped). Each
   * scenario pays from a copy of it: a database of its own, without the seconds of making it again.
   */
  let template: { dir: string; env: Record<string, string>; merchant: Run['merchant'] } | undefined;
  async function pgliteTemplate(): Promise<NonNullable<typeof template>> {
    if (template) return template;
    const env: Record<string, string> = {
      ...liveEthereumEnv({ rpcUrl: proxy.url, token: token.address, confirmations: CONFIRMATIONS, startBlock: await chain.blockNumber() }),
      DATABASE_URL: '',
      DATA_DIR: copiedDataDirectory('partner-chaos-template-'),
      ETHEREUM_WITHDRAWAL_FEE: '0',
      ETHEREUM_MIN_WITHDRAWAL: '1',
      ALLOW_PRIVATE_CALLBACKS: 'true', // the callbacks' receiver is on loopback
      LOG_LEVEL: 'warn',
    };
    const made = await merchant(env);
    const platform = await startPartnerApi(env);
    try {
      await fund(platform.client(made));
    } finally {
      await platform.stop();
    }
    template = { dir: env.DATA_DIR!, env, merchant: made };
    return template;
  }
  afterAll(() => template && rmSync(template.dir, { recursive: true, force: true }));

  /**
   * A scenario's platform: a fresh hot wallet (10 ETH, 10,000 USDT) in a key file, the platform live on
   * the proxy. On PGlite a copy of the template's data directory; on PostgreSQL the database given, where
   * the merchant is made and funded now.
   */
  async function open(options: { replaceAfterSeconds: number; postgres?: { url: string }; instances?: number }): Promise<PartnerClient[]> {
    const dir = mkdtempSync(join(tmpdir(), 'partner-chaos-'));
    const keyHex = randomBytes(32).toString('hex');
    const keyFile = join(dir, 'ethereum-payout.key');
    writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
    const wallet = normalizeAddress(new HotWallet('Ethereum', Buffer.from(keyHex, 'hex')).address);
    await chain.setBalance(wallet, 10n ** 19n);
    await token.transfer(chain.accounts[0]!, wallet, 10_000_000_000n);
    const fromBlock = await chain.blockNumber();
    const own = {
      ETHEREUM_PAYOUT_KEY_FILE: keyFile,
      PAYOUT_REPLACE_AFTER_SECONDS: String(options.replaceAfterSeconds),
      // Every line the platform writes, the most detailed: none may show the key.
      LOG_LEVEL: 'debug',
    };
    let env: Record<string, string>;
    let made: Run['merchant'] | undefined;
    if (options.postgres) {
      env = {
        ...liveEthereumEnv({ rpcUrl: proxy.url, token: token.address, confirmations: CONFIRMATIONS, startBlock: fromBlock }),
        DATABASE_URL: options.postgres.url,
        DATA_DIR: join(dir, 'data'),
        ETHEREUM_WITHDRAWAL_FEE: '0',
        ETHEREUM_MIN_WITHDRAWAL: '1',
      ALLOW_PRIVATE_CALLBACKS: 'true', // the callbacks' receiver is on loopback
        ...own,
      };
    } else {
      const { env: base, dir: templateDir, merchant: templateMerchant } = await pgliteTemplate();
      env = { ...base, DATA_DIR: join(dir, 'data'), ...own };
      cpSync(templateDir, env.DATA_DIR!, { recursive: true });
      made = templateMerchant;
    }
    run = { keyHex, wallet, env, merchant: made ?? { apiKey: '', apiSecret: '' }, platforms: [], output: [], asked: [], outside: 0, fromBlock, cleanup: [] };
    const current = run;
    current.cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    current.cleanup.push(async () => {
      await Promise.all(current.platforms.map((p) => p.stop()));
      await current.instances?.stop();
    });
    if (!made) current.merchant = await merchant(env);

    let clients: PartnerClient[];
    if (options.instances) {
      const { DATA_DIR: _ownDir, ...shared } = env;
      current.instances = await startInstances(options.instances, options.postgres!.url, proxy.url, shared);
      clients = current.instances.instances.map((instance) => instance.client(current.merchant));
    } else clients = [await start()];
    if (options.postgres) await fund(clients[0]!);
    return clients;
  }

  /** Starts (again) the scenario's one platform. */
  async function start(): Promise<PartnerClient> {
    const platform = await startPartnerApi(run!.env);
    run!.platforms.push(platform);
    return platform.client(run!.merchant);
  }

  function kill(platform: RunningPartnerApi) {
    platform.process.process.kill('SIGKILL');
  }

  /** `count` withdrawals, each to a fresh destination and of its own amount (1.001 USDT and up). */
  async function ask(clients: PartnerClient[], count: number): Promise<Asked[]> {
    const asked: Asked[] = [];
    for (let i = 0; i < count; i++) {
      const to = randomDestination();
      const amount = 1_000_000n * BigInt(i + 1) + BigInt(1000 * (run!.asked.length + 1));
      const withdrawal = await clients[i % clients.length]!.createWithdrawal({ externalId: `chaos-${randomBytes(6).toString('hex')}`, blockchain: 'Ethereum', currency: 'USDT', amount: Number(amount) / 1e6, destinationAddress: to });
      asked.push({ uuid: withdrawal.uuid, to, amount });
    }
    run!.asked.push(...asked);
    return asked;
  }

  async function read(client: PartnerClient): Promise<Map<string, Withdrawal>> {
    const all = new Map<string, Withdrawal>();
    for await (const w of client.listWithdrawals({ limit: 100 })) all.set(w.uuid, w);
    return all;
  }

  /** Waits until every asked withdrawal is `sent` (or beyond), and the hot wallet's pool holds `inPool` of its transactions if given. */
  async function allSent(client: PartnerClient, inPool?: number) {
    await until('every payout signed, written and broadcast', async () => {
      const all = await read(client);
      if (!run!.asked.every((w) => all.get(w.uuid)?.stage === 'sent' || all.get(w.uuid)?.status !== 'PENDING')) return undefined;
      if (inPool === undefined) return true;
      return (await nonceOf(run!.wallet, 'pending')) - (await nonceOf(run!.wallet, 'latest')) === BigInt(inPool) ? true : undefined;
    }, 30_000);
  }

  /**
   * While mining stalls: waits until every payout has been replaced `times` times (as many more
   * transactions under its nonce, each the withdrawal's txId for a while), 30 s at most; a line for each
   * that was not, reported with the invariants.
   */
  async function replacements(client: PartnerClient, times: number): Promise<string[]> {
    const seen = new Map<string, Set<string>>();
    const replaced = async () => {
      for (const [uuid, w] of await read(client)) if (w.txId) seen.set(uuid, (seen.get(uuid) ?? new Set()).add(w.txId));
      return run!.asked.every((w) => (seen.get(w.uuid)?.size ?? 0) > times);
    };
    const end = Date.now() + 30_000;
    while (!(await replaced()) && Date.now() < end) await sleep(200);
    return run!.asked
      .filter((w) => (seen.get(w.uuid)?.size ?? 0) <= times)
      .map((w) => `the stall saw withdrawal ${w.uuid} under ${seen.get(w.uuid)?.size ?? 0} transaction(s) in 30 s, not ${times + 1} (${times} replacements)`);
  }

  /**
   * Waits (bounded) until every asked withdrawal is DONE, its destination holds its amount, and the hot
   * wallet has nothing left in the pool; what is not, one line each, when the bound passes.
   */
  async function settle(client: PartnerClient, timeoutMs = SETTLE_MS): Promise<string[]> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const missing: string[] = [];
      let final = true; // every one DONE and paid, or FAILED: nothing more will come of waiting
      let overpaid = false; // a destination paid more than its amount: nothing can undo it
      let all: Map<string, Withdrawal>;
      try {
        all = await read(client);
      } catch (error) {
        all = new Map();
        missing.push(`the API did not answer: ${(error as Error).message}`);
      }
      for (const { uuid, to, amount } of run!.asked) {
        const w = all.get(uuid);
        const held = await token.balanceOf(to);
        if (w?.status !== 'FAILED' && (w?.status !== 'DONE' || held < amount)) final = false;
        if (held > amount) overpaid = true;
        if (w?.status !== 'DONE' || held < amount) missing.push(`not settled: withdrawal ${uuid} ${w?.status ?? '?'}${w?.stage ? `/${w.stage}` : ''} txId ${w?.txId ?? '-'}, its destination holding ${held} of ${amount}`);
      }
      const inPool = (await nonceOf(run!.wallet, 'pending')) - (await nonceOf(run!.wallet, 'latest'));
      if (inPool !== 0n) missing.push(`not settled: ${inPool} transaction(s) of the hot wallet in the pool`);
      if (inPool !== 0n) final = false;
      if (final || overpaid || Date.now() > end) return missing;
      await sleep(500);
    }
  }

  /** Stops the platform, opens its database, and checks every invariant. */
  async function check(found: string[]) {
    const current = run!;
    for (const p of current.platforms) current.output.push(p.process.output());
    for (const p of current.instances?.instances ?? []) current.output.push(p.process.output());
    await Promise.all(current.platforms.map((p) => p.stop()));
    await current.instances?.stop();
    current.platforms = [];
    current.instances = undefined;
    const db: Database = current.env.DATABASE_URL ? await openPostgres(current.env.DATABASE_URL) : await openPglite(join(current.env.DATA_DIR!, 'pglite'));
    try {
      return await assertPaidExactlyOnce({ chain, token, wallet: current.wallet, keyHex: current.keyHex, asked: current.asked, outside: current.outside, fromBlock: current.fromBlock, db, env: current.env, output: current.output, found });
    } catch (error) {
      // For whoever mends the payer: what the platform warned of meanwhile.
      (error as Error).message += `\nThe platform's warnings and errors (times × message):\n${warnings(current.output)}`;
      throw error;
    }
  }

  /** The platform's log lines of level warn and above, each distinct message with how many times it came. */
  function warnings(output: readonly string[]): string {
    const counted = new Map<string, number>();
    for (const line of output.join('\n').split('\n')) {
      let entry: { level?: number; msg?: string; err?: { message?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      if ((entry.level ?? 0) < 40) continue;
      const message = `${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`.slice(0, 240);
      counted.set(message, (counted.get(message) ?? 0) + 1);
    }
    return [...counted].map(([message, times]) => `  ${times} × ${message}`).join('\n') || '  none';
  }

  it('(a) a mining stall long enough for three replacements of each payout, then mining again', async () => {
    const [client] = await open({ replaceAfterSeconds: 1 });
    await mining(false);
    await ask([client!], 4);
    const short = await replacements(client!, 3);
    await mining(true);
    await check([...short, ...(await settle(client!))]);
  }, 240_000);

  it('(b) the pool emptied while every payout waits in it', async () => {
    const [client] = await open({ replaceAfterSeconds: 30 });
    await mining(false);
    await ask([client!], 4);
    await allSent(client!, 4);
    const sends = proxy.counts.get('eth_sendRawTransaction') ?? 0;
    await chain.rpc('anvil_dropAllTransactions');
    // Sent again: the payer's next rounds broadcast each one's bytes (or a replacement) anew.
    await until('the payouts sent again', async () => ((proxy.counts.get('eth_sendRawTransaction') ?? 0) >= sends + 4 ? true : undefined), 30_000);
    await mining(true);
    await check(await settle(client!));
  }, 240_000);

  it('(c) an outside transaction of the hot wallet taking a payout\'s nonce', async () => {
    const [client] = await open({ replaceAfterSeconds: 30 });
    await mining(false);
    const asked = await ask([client!], 3);
    await allSent(client!, 3);
    const all = await read(client!);
    const nonces = await Promise.all(asked.map(async (w) => BigInt((await chain.rpc<{ nonce: Hex }>('eth_getTransactionByHash', [all.get(w.uuid)!.txId])).nonce)));
    const taken = nonces.reduce((a, b) => (a < b ? a : b));
    // The hot wallet's owner spends that nonce elsewhere (ether, no token), with fees that replace the payout in the pool.
    await chain.rpc('anvil_impersonateAccount', [run!.wallet]);
    await chain.rpc('eth_sendTransaction', [{ from: run!.wallet, to: `0x${'ee'.repeat(20)}`, value: '0x1', gas: '0x5208', nonce: toQuantity(taken), maxFeePerGas: toQuantity(100n * GWEI), maxPriorityFeePerGas: toQuantity(50n * GWEI) }]);
    await chain.rpc('anvil_stopImpersonatingAccount', [run!.wallet]);
    const victim = asked[nonces.indexOf(taken)]!;
    expect(await chain.rpc('eth_getTransactionByHash', [all.get(victim.uuid)!.txId])).toBeNull(); // the pool holds the outside one in its place
    run!.outside = 1;
    await mining(true);
    await check(await settle(client!));
  }, 240_000);

  it('(d) the node blind to receipts, transactions and logs for 25 s while blocks are mined', async () => {
    const [client] = await open({ replaceAfterSeconds: 3 });
    await mining(false);
    await ask([client!], 4);
    await allSent(client!, 4);
    proxy.blind({ receipts: true, transactions: true, logs: true });
    const hidden = proxy.hidden.get('eth_getTransactionReceipt') ?? 0;
    await mining(true);
    await sleep(25_000);
    proxy.blind({});
    expect(proxy.hidden.get('eth_getTransactionReceipt') ?? 0).toBeGreaterThan(hidden); // the payer did ask, and was not told
    await check(await settle(client!));
  }, 240_000);

  it('(e) receipts shown only 6 blocks late', async () => {
    const [client] = await open({ replaceAfterSeconds: 3 });
    proxy.lateReceipts(6);
    await ask([client!], 4);
    const unsettled = await settle(client!);
    proxy.lateReceipts(0);
    expect(proxy.hidden.get('eth_getTransactionReceipt') ?? 0).toBeGreaterThan(0);
    await check(unsettled);
  }, 240_000);

  it('(f1) a reorg below the confirmations takes the payouts\' block away', async () => {
    const [client] = await open({ replaceAfterSeconds: 30 });
    await mining(false);
    await ask([client!], 3);
    await allSent(client!, 3);
    const receipts = proxy.counts.get('eth_getTransactionReceipt') ?? 0;
    await chain.mine(1);
    // The payer has seen them mined, one block deep (its rounds ask each payout's receipt).
    await until('a round after the payouts\' block', async () => ((proxy.counts.get('eth_getTransactionReceipt') ?? 0) >= receipts + 6 ? true : undefined), 30_000);
    await chain.rpc('anvil_reorg', [1, []]); // a block of another branch at the same height, without them (nor in the pool)
    expect(await nonceOf(run!.wallet, 'latest')).toBe(0n);
    await mining(true);
    await check(await settle(client!));
  }, 240_000);

  it('(f2) a reorg beyond the confirmations takes DONE payouts\' blocks away', async () => {
    const [client] = await open({ replaceAfterSeconds: 30 });
    const asked = await ask([client!], 3);
    expect(await settle(client!)).toEqual([]);
    const all = await read(client!);
    const blocks = await Promise.all(asked.map(async (w) => BigInt((await chain.rpc<{ blockNumber: Hex }>('eth_getTransactionReceipt', [all.get(w.uuid)!.txId])).blockNumber)));
    await mining(false);
    const head = await chain.blockNumber();
    const lowest = blocks.reduce((a, b) => (a < b ? a : b));
    const depth = Number(head - lowest + 1n);
    expect(depth).toBeGreaterThanOrEqual(CONFIRMATIONS);
    await chain.rpc('anvil_reorg', [depth, []]); // every payout's block replaced by one without it
    for (const { to } of asked) expect(await token.balanceOf(to)).toBe(0n);
    await mining(true);
    // Deeper than the confirmations: the scanner halts the network, and the operator resumes it after review.
    const readyz = `${run!.platforms[0]!.baseUrl}/readyz`;
    await until('the scanner to halt Ethereum', async () => ((await (await fetch(readyz)).json()) as { status: string }).status === 'chain_halted' || undefined, 60_000);
    const resumed = await runCommand(['chain', 'resume', '--blockchain', 'Ethereum'], run!.env);
    expect(resumed.code).toBe(0);
    // The payer sends each DONE payout's same signed bytes again: the same transfers land again, once.
    await check(await settle(client!, 60_000));
    expect(run!.output.join('\n')).toContain("a reorg took a DONE payout's transaction out of the chain: its same signed bytes are sent again");
  }, 240_000);

  it('(g) kill -9 at random moments during a burst of payouts, restarted each time', async () => {
    let [client] = await open({ replaceAfterSeconds: 3 });
    await ask([client!], 8);
    const moments: number[] = [];
    for (let kills = 0; kills < 3; kills++) {
      const moment = 200 + Math.floor(Math.random() * 2300);
      moments.push(moment);
      await sleep(moment);
      const platform = run!.platforms.at(-1)!;
      run!.output.push(platform.process.output());
      kill(platform);
      await new Promise<void>((resolve) => (platform.process.process.exitCode !== null || platform.process.process.signalCode !== null ? resolve() : platform.process.process.once('exit', () => resolve())));
      run!.platforms.pop();
      client = await start();
    }
    console.info(`(g) killed after ${moments.join(', ')} ms`);
    await check(await settle(client!));
  }, 240_000);

  describe.skipIf(!TEST_DATABASE_URL)('on PostgreSQL', () => {
    /** A database of the scenario's own on TEST_DATABASE_URL's server, dropped after it. */
    async function postgres() {
      const database = await freshDatabase('postgres');
      await database.db.close();
      return { url: database.url!, drop: () => database.drop() };
    }

    it('(h1) one instance: a mining stall with two replacements of each payout, then the pool emptied', async () => {
      const database = await postgres();
      const [client] = await open({ replaceAfterSeconds: 1, postgres: database });
      run!.cleanup.unshift(database.drop); // after the platform stops
      await mining(false);
      await ask([client!], 4);
      const short = await replacements(client!, 2);
      await chain.rpc('anvil_dropAllTransactions');
      await mining(true);
      await check([...short, ...(await settle(client!))]);
    }, 240_000);

    it('(h2) two instances: a mining stall with a replacement of each payout, and the one holding the payout lease killed with -9', async () => {
      const database = await postgres();
      const clients = await open({ replaceAfterSeconds: 2, postgres: database, instances: 2 });
      run!.cleanup.unshift(database.drop); // after the instances stop
      await mining(false);
      await ask(clients, 6);
      const short = await replacements(clients[1]!, 1);
      await sleep(Math.floor(Math.random() * 2000));
      // The holder of the payout job's lease is the instance that signs (its lease's holder is a random id).
      const instances = run!.instances!.instances;
      const holder = instances.find((i) => /payout signed and written/.test(i.process.output()))!;
      expect(holder).toBeDefined();
      run!.output.push(holder.process.output());
      kill(holder);
      await mining(true);
      // The other instance takes the lease over once the killed one's expires (30 s).
      const survivor = clients[instances.indexOf(holder) === 0 ? 1 : 0]!;
      await check([...short, ...(await settle(survivor))]);
    }, 300_000);
  });
});
