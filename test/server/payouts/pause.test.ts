// Issue 54 item 3: `partner-api payouts pause` and `payouts resume`, on anvil. While a network is paused its
// payer sends nothing new (no first send, no replacement) yet follows what is out to DONE; withdrawals are
// still accepted and queued; /readyz stays ready and lists the pause; partner_payouts_paused is 1. On each
// database the payer's rounds are driven one by one (what a round did is then known, no waiting on time);
// on PostgreSQL two `partner-api serve` instances: the pause given through one is obeyed by whichever holds
// the payout lease within one round, nothing is sent by either, and after the resume each withdrawal is
// paid exactly once (assertPaidExactlyOnce). Tron's payer, against the stand-in of its node, holds its
// rebuild of an expired transaction and its queue while paused.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerClient } from '../../../src/client/index.js';
import { JsonRpcClient } from '../../../src/server/chain/rpc.js';
import { payoutsPauseCommand, payoutsResumeCommand } from '../../../src/server/cli/payout-commands.js';
import { openPostgres } from '../../../src/server/db/database.js';
import { EthereumNode } from '../../../src/server/payouts/ethereum-node.js';
import { EthereumPayer } from '../../../src/server/payouts/ethereum-payer.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { TronNode } from '../../../src/server/payouts/tron-node.js';
import { TronPayer } from '../../../src/server/payouts/tron-payer.js';
import { toTronAddress } from '../../../src/server/addresses/derivation.js';
import { orderRequest } from '../../fixtures/orders.js';
import { normalizeAddress, startChain, type Chain, type Hex, type Token } from '../../support/chain.js';
import { runCommand } from '../../support/cli.js';
import { startInstances, type Instances } from '../../support/instances.js';
import { liveEthereumEnv } from '../../support/live-env.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';
import { assertPaidExactlyOnce, fundedTronWallet, randomDestination, type Asked } from '../../support/payouts.js';
import { DATABASES, freshDatabase, livePlatform, TEST_DATABASE_URL, type TestPlatform } from '../../support/platform.js';
import { until } from '../../support/processes.js';
import { startTronNode, type TronNode as StandIn } from '../../support/tron-node.js';
import { operating, recipeBlocks, runBlock } from '../../docs/operating-blocks.js';
import { platformDateTime } from '../../../src/server/shared/time.js';

const USDT = 1_000_000n;
const ETH = 10n ** 18n;
const CONFIRMATIONS = 2;

/** A hot wallet of the test's own in a key file (0600), with 10 ETH and 1,000 USDT on the chain. */
async function hotWallet(chain: Chain, token: Token, dir: string): Promise<{ wallet: HotWallet; keyHex: string; keyFile: string }> {
  const keyHex = randomBytes(32).toString('hex');
  const keyFile = join(dir, 'ethereum-payout.key');
  writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  const wallet = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex'));
  await chain.setBalance(wallet.address, 10n * ETH);
  await token.distribute([wallet.address], 1000n * USDT);
  return { wallet, keyHex, keyFile };
}

const readWithdrawal = async (client: PartnerClient, uuid: string) => (await client.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid } } })).data!;
const nonceOf = async (chain: Chain, address: string, at: 'latest' | 'pending') => BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [normalizeAddress(address), at]));

describe.each(DATABASES)('payouts paused and resumed, rounds driven one by one, on %s', (kind) => {
  let chain: Chain;
  let token: Token;
  let dir: string;
  let t: TestPlatform;
  let payer: EthereumPayer;
  let wallet: HotWallet;

  beforeAll(async () => {
    chain = await startChain();
    token = await chain.deployToken();
    dir = mkdtempSync(join(tmpdir(), 'pause-'));
    ({ wallet } = await hotWallet(chain, token, dir));
    t = await livePlatform(kind, { ...liveEthereumEnv({ rpcUrl: chain.rpcUrl, token: token.address, confirmations: CONFIRMATIONS, startBlock: await chain.blockNumber() }), ETHEREUM_WITHDRAWAL_FEE: '0', ETHEREUM_MIN_WITHDRAWAL: '1' });
    await t.fund('Ethereum', 500n * USDT);
    payer = new EthereumPayer({
      db: t.db,
      node: new EthereumNode(new JsonRpcClient(chain.rpcUrl)),
      wallet,
      token: token.address,
      confirmations: CONFIRMATIONS,
      maxFeePerGas: 200n * 10n ** 9n,
      // A payout not mined for a second is replaced: unless paused.
      replaceAfterSeconds: 1,
      fundsWaitHours: 72,
    });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await chain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const withdraw = async (units: bigint, to: string) =>
    t.client().createWithdrawal({ externalId: `pause-${randomBytes(4).toString('hex')}`, blockchain: 'Ethereum', currency: 'USDT', amount: Number(units) / 1e6, destinationAddress: to });
  const read = async (uuid: string) => (await t.db.query<{ status: string; stage: string | null }>('SELECT status, stage FROM withdrawals WHERE uuid = $1', [uuid]))[0]!;
  const pausedGauge = async () => /^partner_payouts_paused\{network="Ethereum"\} (\d)$/m.exec(await (await fetch(`${t.baseUrl}/metrics`)).text())?.[1];
  const readiness = async () => {
    const response = await fetch(`${t.baseUrl}/readyz`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('sends nothing new while paused, follows what is out to DONE, takes withdrawals; resumed, pays the queue once', async () => {
    await chain.setAutomine(false);
    const firstTo = randomDestination();
    const first = await withdraw(10n * USDT, firstTo);
    await payer.round();
    expect(await read(first.uuid)).toEqual({ status: 'PENDING', stage: 'sent' });
    expect(await t.count('payout_transactions')).toBe(1);
    const pendingNonce = await nonceOf(chain, wallet.address, 'pending');

    const paused = await payoutsPauseCommand(t.platform, { blockchain: 'ethereum', reason: 'key rotation' });
    expect(paused.text).toMatch(/^Ethereum: payouts paused \(key rotation\)/);
    expect(paused.value).toMatchObject({ network: 'Ethereum', reason: 'key rotation', wasPaused: false });
    // Still accepted and queued while paused.
    const secondTo = randomDestination();
    const second = await withdraw(20n * USDT, secondTo);
    expect(second).toMatchObject({ status: 'PENDING', stage: 'queued' });

    // The payout out is an hour old: a round would replace it, and pay the queued one; paused, it does neither.
    await t.db.query("UPDATE payout_transactions SET created_at = now() - interval '1 hour'");
    await payer.round();
    expect(await t.count('payout_transactions')).toBe(1);
    expect(await read(second.uuid)).toEqual({ status: 'PENDING', stage: 'queued' });
    expect(await nonceOf(chain, wallet.address, 'pending')).toBe(pendingNonce);

    // What is out is followed: mined, then confirmed, it is DONE while still paused.
    await chain.mine(CONFIRMATIONS + 1);
    await payer.round();
    expect(await read(first.uuid)).toEqual({ status: 'DONE', stage: null });
    expect(await token.balanceOf(firstTo)).toBe(10n * USDT);
    expect(await read(second.uuid)).toEqual({ status: 'PENDING', stage: 'queued' });
    expect(await t.count('payout_transactions')).toBe(1);

    // Shown: ready (an operator's choice, not a fault), with since and reason; the gauge is 1.
    const ready = await readiness();
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', payoutsPaused: [{ network: 'Ethereum', reason: 'key rotation', since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }] });
    // /readyz's JSON in ISO 8601, the command's in the API's date shape: the same moment.
    expect(platformDateTime(new Date((ready.body as { payoutsPaused: { since: string }[] }).payoutsPaused[0]!.since))).toBe((paused.value as { since: string }).since);
    expect(await pausedGauge()).toBe('1');
    // Paused again: the first pause stands, its time and reason kept.
    const again = await payoutsPauseCommand(t.platform, { blockchain: 'ethereum', reason: 'another' });
    expect(again.value).toMatchObject({ wasPaused: true, reason: 'key rotation', since: (paused.value as { since: string }).since });
    expect(again.text).toMatch(/already paused/);

    const resumed = await payoutsResumeCommand(t.platform, { blockchain: 'ethereum' });
    expect(resumed.value).toMatchObject({ network: 'Ethereum', wasPaused: true, reason: 'key rotation' });
    expect((await payoutsResumeCommand(t.platform, { blockchain: 'ethereum' })).value).toEqual({ network: 'Ethereum', wasPaused: false });
    await payer.round();
    expect(await read(second.uuid)).toEqual({ status: 'PENDING', stage: 'sent' });
    await chain.mine(CONFIRMATIONS + 1);
    await payer.round();
    expect(await read(second.uuid)).toEqual({ status: 'DONE', stage: null });
    expect(await token.balanceOf(secondTo)).toBe(20n * USDT);
    expect(await token.balanceOf(firstTo)).toBe(10n * USDT);
    expect(await t.count('payout_transactions')).toBe(2);
    expect(await pausedGauge()).toBe('0');
    expect((await readiness()).body).not.toHaveProperty('payoutsPaused');
  }, 120_000);
});

describe.skipIf(!TEST_DATABASE_URL)('payouts paused through one of two instances on PostgreSQL', () => {
  let chain: Chain;
  let token: Token;
  let dir: string;
  let instances: Instances | undefined;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    chain = await startChain({ blockTime: 1 });
    token = await chain.deployToken();
    dir = mkdtempSync(join(tmpdir(), 'pause-instances-'));
  }, 60_000);

  afterAll(async () => {
    await instances?.stop();
    await drop?.();
    await chain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is obeyed within a round by the instance that pays, nothing sent by either; resumed through the other, each paid once', async () => {
    const database = await freshDatabase('postgres');
    await database.db.close();
    drop = database.drop;
    const { wallet, keyHex, keyFile } = await hotWallet(chain, token, dir);
    const fromBlock = await chain.blockNumber();
    const chainEnv = liveEthereumEnv({ rpcUrl: chain.rpcUrl, token: token.address, confirmations: CONFIRMATIONS, startBlock: fromBlock });
    const env: Record<string, string> = { ...chainEnv, DATABASE_URL: database.url!, DATA_DIR: join(dir, 'data'), ETHEREUM_PAYOUT_KEY_FILE: keyFile, ETHEREUM_WITHDRAWAL_FEE: '0', ETHEREUM_MIN_WITHDRAWAL: '1', ALLOW_PRIVATE_CALLBACKS: 'true' };
    const merchant = JSON.parse((await runCommand(['merchants', 'create', '--name', 'pause', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
    expect((await runCommand(['merchants', 'set-withdrawals', '--api-key', merchant.apiKey, '--enabled'], env)).code).toBe(0);
    // Each instance reaches the chain through its own counting proxy (startInstances): its own RPC URL, not this one.
    const { DATA_DIR: _own, ETHEREUM_RPC_URL: _direct, ...shared } = env;
    instances = await startInstances(2, database.url!, chain.rpcUrl, shared);
    const clients: PartnerClient[] = instances.instances.map((instance) => instance.client(merchant));
    // Funded by a real deposit, credited by the instance that scans.
    const order = await clients[0]!.POST('/partner/v1/platforms/orders', { body: orderRequest(`pause-funding-${randomBytes(4).toString('hex')}`, { blockchain: 'Ethereum', callbackUrl: 'http://127.0.0.1:9/callbacks' }) });
    await token.transfer(chain.accounts[0]!, order.data!.address, 500n * USDT);
    await until('the deposit credited', async () => ((await clients[0]!.getBalances()).find((b) => b.blockchain === 'Ethereum')!.available === 500_000_000 ? true : undefined), 60_000);

    // Paused through the first instance's settings (its database).
    const pause = await runCommand(['payouts', 'pause', '--blockchain', 'ethereum', '--reason', 'two instances', '--json'], env);
    expect(pause.code).toBe(0);
    expect(JSON.parse(pause.stdout)).toMatchObject({ network: 'Ethereum', reason: 'two instances', wasPaused: false });
    // The instance that pays says it obeys: its payer read the pause at a round.
    const pausedLine = /payouts on Ethereum are paused by the operator/;
    const holder = await until('the paying instance to obey the pause', async () => {
      const index = instances!.instances.findIndex((i) => pausedLine.test(i.process.output()));
      return index >= 0 ? index : undefined;
    }, 30_000);

    // Asked through both instances while paused: accepted, queued.
    const asked: Asked[] = [];
    for (const [i, units] of [[1, 30n * USDT], [0, 40n * USDT]] as const) {
      const to = randomDestination();
      const withdrawal = await clients[i]!.createWithdrawal({ externalId: `paused-${i}`, blockchain: 'Ethereum', currency: 'USDT', amount: Number(units) / 1e6, destinationAddress: to });
      expect(withdrawal).toMatchObject({ status: 'PENDING', stage: 'queued' });
      asked.push({ uuid: withdrawal.uuid, to, amount: units });
    }
    // Two more balance reads by the paying instance: the second is in a round that began after both were queued.
    const balanceReads = () => instances!.proxies[holder]!.calls.filter((c) => c.method === 'eth_getBalance').length;
    const readsAtAsk = balanceReads();
    await until('a full round of the paying instance after the withdrawals', async () => (balanceReads() >= readsAtAsk + 2 ? true : undefined), 30_000);
    for (const { uuid } of asked) expect((await readWithdrawal(clients[0]!, uuid)).stage).toBe('queued');
    expect(await nonceOf(chain, wallet.address, 'pending')).toBe(0n);
    expect(instances.instances.every((i) => !/payout signed and written/.test(i.process.output()))).toBe(true);

    // Resumed through the other instance's settings: each paid, once.
    const resume = await runCommand(['payouts', 'resume', '--blockchain', 'ethereum'], env);
    expect(resume).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Ethereum: payouts resumed \(paused since .*: two instances\)/) });
    await until('both withdrawals DONE', async () => {
      const done = await Promise.all(asked.map(async ({ uuid }) => (await readWithdrawal(clients[1]!, uuid)).status === 'DONE'));
      return done.every(Boolean) ? true : undefined;
    }, 90_000);
    const output = instances.instances.map((i) => i.process.output());
    await instances.stop();
    instances = undefined;
    await assertPaidExactlyOnce({ chain, token, wallet: wallet.address, keyHex, asked, outside: 0, fromBlock, db: await openPostgres(database.url!), env, output, found: [] });
  }, 240_000);
});

describe("Tron's payer paused (the stand-in node): no first send, no rebuild of an expired transaction", () => {
  let t: TestPlatform | undefined;
  let node: StandIn | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await t?.close();
    await node?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the rebuild and the queue while paused; resumed, the expired payout is rebuilt and the queue sent', async () => {
    const token = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'; // the default: USDT_CONTRACTS.Tron
    node = await startTronNode({ token });
    const funded = await fundedTronWallet(node, 'pause-tron-');
    dir = funded.dir;
    const { wallet } = funded;
    t = await livePlatform(DATABASES[0]!, {});
    await t.fund('Tron', 30_000_000n);
    const payer = new TronPayer({ db: t.db, node: new TronNode(node.url), wallet, token, feeLimitSun: 100_000_000, expirationSeconds: 60, fundsWaitHours: 72, clock: () => node!.head.timestamp });
    const to = () => toTronAddress(randomBytes(20));
    const withdraw = async (amount: number) => t!.client().createWithdrawal({ externalId: `tron-pause-${randomBytes(4).toString('hex')}`, blockchain: 'Tron', currency: 'USDT', amount, destinationAddress: to() });
    const stage = async (uuid: string) => (await t!.db.query<{ stage: string | null }>('SELECT stage FROM withdrawals WHERE uuid = $1', [uuid]))[0]!.stage;
    const sentTxIds = () => new Set(node!.broadcasts.map((b) => b.txID));

    const out = await withdraw(10);
    await payer.round();
    expect(await stage(out.uuid)).toBe('sent');
    expect(sentTxIds().size).toBe(1);
    // Never included, and expired before the solidified block: a rebuild is due after two sightings 100 solidified blocks apart.
    node.advanceTime(400_000, { include: false });
    await payoutsPauseCommand(t.platform, { blockchain: 'tron' });
    const queued = await withdraw(5);
    for (let i = 0; i < 2; i++) {
      await payer.round();
      node.advanceTime(400_000, { include: false });
    }
    await payer.round();
    expect(await t.count('payout_transactions')).toBe(1);
    expect(sentTxIds().size).toBe(1);
    expect(await stage(queued.uuid)).toBe('queued');

    // Resumed: the queued one is sent at once, and the expired one is rebuilt after its two sightings.
    await payoutsResumeCommand(t.platform, { blockchain: 'tron' });
    await payer.round();
    expect(await stage(queued.uuid)).toBe('sent');
    node.advanceTime(400_000, { include: false });
    await payer.round();
    expect(await t.count(`payout_transactions WHERE withdrawal_uuid = '${out.uuid}'`)).toBe(2);
    expect(sentTxIds().size).toBe(3);
  }, 60_000);
});

describe('payouts pause through the operator socket of a running platform on PGlite', () => {
  let platform: RunningPartnerApi | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is run by the running platform (its database is locked to it), shown by /readyz and /metrics, and resumed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pause-socket-'));
    const env = { DATA_DIR: join(dir, 'data'), DATABASE_URL: '' };
    platform = await startPartnerApi(env);
    const readyz = async () => (await fetch(`${platform!.baseUrl}/readyz`)).json() as Promise<Record<string, unknown>>;
    const gauge = async (network: string) => new RegExp(`^partner_payouts_paused\\{network="${network}"\\} (\\d)$`, 'm').exec(await (await fetch(`${platform!.baseUrl}/metrics`)).text())?.[1];

    // docs/operating.md's own lines, as written, run by bash with the shipped command.
    const [pauseBlock, resumeBlock] = recipeBlocks(operating, 'Pausing');
    expect(await runBlock(pauseBlock!, env)).toMatch(/^Ethereum: payouts paused \(key rotation\)/);
    expect(await readyz()).toMatchObject({ status: 'ready', payoutsPaused: [{ network: 'Ethereum', reason: 'key rotation' }] });
    expect(await gauge('Ethereum')).toBe('1');
    expect(await gauge('Tron')).toBe('0');
    const refused = await runCommand(['payouts', 'pause', '--blockchain', 'Bitcoin'], env);
    expect(refused).toMatchObject({ code: 64, stderr: expect.stringMatching(/--blockchain must be Tron or Ethereum/) });
    const json = await runCommand(['payouts', 'pause', '--blockchain', 'ethereum', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ network: 'Ethereum', wasPaused: true, reason: 'key rotation' }); // the first pause's reason kept

    expect(await runBlock(resumeBlock!, env)).toMatch(/^Ethereum: /);
    expect(await readyz()).not.toHaveProperty('payoutsPaused');
    expect(await gauge('Ethereum')).toBe('0');
  }, 60_000);
});
