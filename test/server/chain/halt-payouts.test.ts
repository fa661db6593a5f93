// Issue 53 item 7, on anvil: a network halted after a reorg deeper than its confirmations pays nothing and
// takes no withdrawal (503 network_halted, nothing changed); the operator's resume reverses the deposits
// the reorg removed, once each, and the books agree: one merchant's balance covers its reversal, another's
// does not (its withdrawal not yet sent is failed, the rest is owed and paid first by its next deposit).
// Tron's payer waits the same way, against the stand-in of its node.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Withdrawal, WithdrawalProblem } from '../../../src/client/index.js';
import { toTronAddress } from '../../../src/server/addresses/derivation.js';
import { halt, networkHalt, resumeNetwork } from '../../../src/server/chain/halt.js';
import { ChainScanner } from '../../../src/server/chain/scanner.js';
import { chainResumeCommand } from '../../../src/server/cli/chain-commands.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { startChain, type Chain, type Hex, type Token } from '../../support/chain.js';
import { liveEthereumEnv } from '../../support/live-env.js';
import { DATABASES, livePlatform, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { startReceiver, type Receiver } from '../../support/receiver.js';
import { startTronNode, type TronNode as StandIn } from '../../support/tron-node.js';
import { orderRequest } from '../../fixtures/orders.js';
import { fundedTronWallet } from '../../support/payouts.js';
import { claimForHand } from '../../../src/server/withdrawals/hand-payment.js';

const CONFIRMATIONS = 2;
const USDT = 1_000_000n;
const JSON_TYPE = { 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const destination = () => `0x${randomBytes(20).toString('hex')}`;

describe.each(DATABASES)('a network halted after a deep reorg, on %s', (kind) => {
  let chain: Chain;
  let token: Token;
  let receiver: Receiver;
  let dir: string;
  let t: TestPlatform;
  let other: Awaited<ReturnType<TestPlatform['createMerchant']>>;
  let sender: Hex;
  /** Pays the transfers the reorg removes: its nonces are not taken again on the new chain. */
  let victimSender: Hex;

  beforeAll(async () => {
    chain = await startChain();
    token = await chain.deployToken();
    receiver = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'halt-payouts-'));
    const keyHex = randomBytes(32).toString('hex');
    const keyFile = join(dir, 'ethereum-payout.key');
    writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    const wallet = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex'));
    await chain.setBalance(wallet.address, 10n ** 19n);
    sender = chain.accounts[1]!;
    victimSender = chain.accounts[2]!;
    await token.distribute([wallet.address, sender, victimSender], 10_000n * USDT);
    const env = {
      ...liveEthereumEnv({ rpcUrl: chain.rpcUrl, token: token.address, confirmations: CONFIRMATIONS, startBlock: await chain.blockNumber() }),
      ETHEREUM_PAYOUT_KEY_FILE: keyFile,
      ETHEREUM_WITHDRAWAL_FEE: '0',
      ETHEREUM_MIN_WITHDRAWAL: '1',
      ALLOW_PRIVATE_CALLBACKS: 'true',
    };
    t = await startTestPlatform(kind, { env });
    other = await t.createMerchant('owes after the reorg');
    for (const merchantId of [t.merchant.merchantId, other.merchantId]) await t.db.query('INSERT INTO withdrawal_policies (merchant_id, enabled) VALUES ($1, true)', [merchantId]);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await chain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const order = async (label: string, credentials = t.merchant) =>
    (await t.client(credentials).POST('/partner/v1/platforms/orders', { body: orderRequest(label, { blockchain: 'Ethereum', callbackUrl: `${receiver.url}/deposits` }) })).data!;
  const readOrder = async (uuid: string, credentials = t.merchant) => (await t.client(credentials).GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } })).data!;
  const balance = async (credentials = t.merchant) => (await t.client(credentials).GET('/partner/v1/platforms/balances')).data!.data.find((b) => b.blockchain === 'Ethereum')!;
  const withdraw = async (externalId: string, amount: number, credentials = t.merchant, destinationAddress = destination()) => {
    const body = JSON.stringify({ externalId, blockchain: 'Ethereum', currency: 'USDT', amount, destinationAddress });
    const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', { body, headers: JSON_TYPE, credentials });
    return { status: response.status, body: (await response.json()) as Withdrawal & Omit<WithdrawalProblem, 'status'> };
  };
  const readWithdrawal = async (uuid: string, credentials = t.merchant) => (await t.client(credentials).GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid } } })).data!;
  const counts = async () => ({ withdrawals: await t.count('withdrawals'), entries: await t.count('ledger_entries'), payouts: await t.count('payout_transactions') });

  it('refuses withdrawals and pays nothing while halted; resume reverses the removed deposits once, the books agree', async () => {
    const scanner = new ChainScanner({ network: 'Ethereum', chain: t.platform.config.networks.Ethereum.chain!, confirmations: CONFIRMATIONS, watchWindowSeconds: 86_400, db: t.db, now: Date.now });
    const scanAll = async () => {
      while ((await scanner.scanOnce()) !== undefined);
    };
    await scanner.prepare();
    // Before the fork: 300 USDT to the first merchant, which no reorg touches.
    const kept = await order('kept');
    const victim = await order('victim');
    const otherVictim = await order('other-victim', other);
    await token.transfer(sender, kept.address.toLowerCase(), 300n * USDT);
    const snapshot = await chain.snapshot();
    const forkParent = await chain.blockNumber();
    // After it: 777 USDT to the first merchant, 500 to the other; both confirmed and credited.
    const removed = await token.transfer(victimSender, victim.address.toLowerCase(), 777n * USDT);
    const raw = await chain.rpc<Hex>('eth_getRawTransactionByHash', [removed]);
    await token.transfer(victimSender, otherVictim.address.toLowerCase(), 500n * USDT);
    await chain.mine(CONFIRMATIONS + 1);
    await scanAll();
    expect(await balance()).toMatchObject({ available: 1_077_000_000, received: 1_077_000_000, owed: 0 });
    expect(await balance(other)).toMatchObject({ available: 500_000_000 });

    // Before the halt: the first merchant's withdrawal waits in the queue (the payer is not started yet);
    // the other merchant had 300 paid (the operator's word) and 150 queued.
    const payee = destination();
    const queued = await withdraw('before-halt', 200, t.merchant, payee);
    expect(queued).toMatchObject({ status: 201, body: { status: 'PENDING', stage: 'queued' } });
    const paid = await withdraw('other-paid', 300, other);
    expect(await t.db.transaction((tx) => claimForHand(tx, paid.body.uuid))).toMatchObject({ outcome: 'claimed' }); // paid by hand
    expect(await t.platform.withdrawals.move(paid.body.uuid, { to: 'DONE', txId: `0x${'ab'.repeat(32)}`, withoutProof: true })).toMatchObject({ status: 'DONE' });
    const otherQueued = await withdraw('other-queued', 100, other);
    expect(otherQueued.status).toBe(201);
    // And 50 claimed by the operator for hand payment (paid by hand, say, not recorded yet): never failed to pay a reversal.
    const otherClaimed = await withdraw('other-claimed', 50, other);
    expect(await t.db.transaction((tx) => claimForHand(tx, otherClaimed.body.uuid))).toMatchObject({ outcome: 'claimed' });
    expect(await balance(other)).toMatchObject({ available: 50_000_000, held: 150_000_000, withdrawn: 300_000_000 });

    // The reorg: the two transfers' blocks are gone; the new chain grows past the confirmations without them.
    await chain.revert(snapshot);
    await token.transfer(sender, destination(), 1n); // the new chain's blocks differ from the old ones
    await chain.mine(CONFIRMATIONS + 4);
    await scanAll();
    expect(await networkHalt(t.db, 'Ethereum')).toMatchObject({ reason: expect.stringMatching(/reorg deeper than 2 confirmations/) });
    const readiness = await fetch(`${t.baseUrl}/readyz`);
    expect(readiness.status).toBe(503);

    // The whole balance, still showing the removed 777: refused, saying why, and nothing changed.
    const before = await counts();
    const refused = await withdraw('whole-balance', 877);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'network_halted', status: 503, type: '/docs#/section/errors/network_halted' });
    expect(refused.body.detail).toMatch(/Withdrawals on Ethereum are paused/);
    expect(await counts()).toEqual(before);
    expect(await balance()).toMatchObject({ available: 877_000_000, held: 200_000_000 });
    // A replay of a request accepted before the halt is still the same withdrawal.
    expect(await withdraw('before-halt', 200, t.merchant, payee)).toMatchObject({ status: 200, body: { uuid: queued.body.uuid } });

    // The payer runs, rounds after rounds, and pays nothing: the queued withdrawals stay queued.
    await t.platform.startJobs();
    await sleep(4_000);
    expect(await readWithdrawal(queued.body.uuid)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    expect(await t.count('payout_transactions')).toBe(0);
    const waits = () => t.logs().filter((line) => line.includes('paying Ethereum withdrawals waits')).length;
    expect(waits()).toBe(1); // said once, not every round

    // The operator resumes from the first replaced block: both removed deposits are reversed.
    const command = await chainResumeCommand(t.platform, { blockchain: 'ethereum', 'from-block': String(forkParent + 1n) });
    const resumed = command.value as Record<string, unknown>;
    expect(command.text).toMatch(/deposits of replaced blocks: 0 found again on the chain, 2 reversed/);
    expect(command.text).toContain(`reversed deposit`);
    expect(command.text).toContain(`777 USDT of order ${victim.uuid} (receivedAmount now 0)`);
    expect(command.text).toContain(`merchant ${other.merchantId} owes 350 USDT on Ethereum: its next deposits pay it first`);
    expect(resumed).toMatchObject({ wasHalted: true, foundAgain: 0, nextBlock: String(forkParent + 1n) });
    expect((resumed.reversed as { orderUuid: string; amount: string }[]).map((r) => [r.orderUuid, r.amount]).sort()).toEqual(
      [[victim.uuid, '777000000'], [otherVictim.uuid, '500000000']].sort(),
    );
    // Covered: 877 available less 777; the queued 200 stays held, to be paid.
    expect(await balance()).toEqual({ blockchain: 'Ethereum', currency: 'USDT', available: 100_000_000, held: 200_000_000, received: 300_000_000, withdrawn: 0, owed: 0 });
    // Not covered: 50 available taken, the queued 100 failed and released to pay, 350 still owed; the
    // claimed 50 stays held (the operator's to settle: its payment by hand may be out).
    expect(resumed).toMatchObject({ failedWithdrawals: [{ uuid: otherQueued.body.uuid, released: '100000000' }], owed: [{ merchantId: other.merchantId, owed: '350000000' }] });
    expect(await balance(other)).toEqual({ blockchain: 'Ethereum', currency: 'USDT', available: 0, held: 50_000_000, received: 0, withdrawn: 300_000_000, owed: 350_000_000 });
    expect(await readWithdrawal(otherQueued.body.uuid, other)).toMatchObject({ status: 'FAILED', failureReason: expect.stringMatching(/reversed/) });
    expect(await readWithdrawal(otherClaimed.body.uuid, other)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    expect(await readOrder(victim.uuid)).toMatchObject({ receivedAmount: 0 });
    expect(await readOrder(otherVictim.uuid, other)).toMatchObject({ receivedAmount: 0 });
    expect(await checkLedger(t.db)).toMatchObject({ problems: [] });

    // Resumed again: nothing is reversed twice.
    const again = (await chainResumeCommand(t.platform, { blockchain: 'ethereum' })).value;
    expect(again).toMatchObject({ wasHalted: false, reversed: [] });
    expect(await t.count("ledger_entries WHERE kind = 'reversal'")).toBe(2);

    // The payer goes on: the withdrawal queued before the halt is paid, once.
    const paidOut = async () => {
      await chain.mine(1);
      return (await readWithdrawal(queued.body.uuid)).status;
    };
    await expect.poll(paidOut, { timeout: 30_000, interval: 500 }).toBe('DONE');
    expect(await token.balanceOf(payee)).toBe(200n * USDT);
    expect(await t.count('payout_transactions')).toBe(1);

    // The other merchant's next deposit pays what it owes first; until covered, nothing is available.
    const later = await order('other-later', other);
    await token.transfer(sender, later.address.toLowerCase(), 120n * USDT);
    await chain.mine(CONFIRMATIONS + 1);
    await expect.poll(async () => (await balance(other)).owed, { timeout: 20_000, interval: 300 }).toBe(230_000_000);
    expect(await balance(other)).toMatchObject({ available: 0, received: 120_000_000 });
    expect((await withdraw('other-after', 1, other)).body).toMatchObject({ code: 'insufficient_balance', available: 0 });
    expect(await readOrder(victim.uuid)).toMatchObject({ receivedAmount: 0 }); // the rescan from the fork credits nothing removed

    // The removed 777 mined again later, on the new chain: a reversed deposit is no longer credited, so it is credited anew, once.
    await chain.rpc('eth_sendRawTransaction', [raw]);
    await chain.mine(CONFIRMATIONS + 1);
    await expect.poll(async () => (await readOrder(victim.uuid)).receivedAmount, { timeout: 20_000, interval: 300 }).toBe(777_000_000);
    expect(await balance()).toEqual({ blockchain: 'Ethereum', currency: 'USDT', available: 877_000_000, held: 0, received: 1_077_000_000, withdrawn: 200_000_000, owed: 0 });
    await chain.mine(3);
    await sleep(1_500); // more scans: not credited twice
    expect(await t.count(`deposits WHERE order_uuid = '${victim.uuid}'`)).toBe(2); // the reversed one and the new one
    expect((await readOrder(victim.uuid)).receivedAmount).toBe(777_000_000);
    expect(await checkLedger(t.db)).toMatchObject({ problems: [] });
    expect(t.errorLogs().filter((line) => !line.includes('HALTED') && !line.includes('deep reorg'))).toEqual([]);
  }, 120_000);
});

describe("Tron's payer while Tron is halted (the stand-in node)", () => {
  let t: TestPlatform | undefined;
  let node: StandIn | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await t?.close();
    await node?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends nothing while halted, the queued withdrawal stays queued; once resumed it is sent', async () => {
    const token = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'; // the default: USDT_CONTRACTS.Tron
    node = await startTronNode({ token });
    const funded = await fundedTronWallet(node, 'halt-tron-');
    dir = funded.dir;
    const { keyFile } = funded;
    // Live: a sandbox refuses a payout key (its balances are made up).
    t = await livePlatform(DATABASES[0]!, { TRON_API_URL: node.url, TRON_PAYOUT_KEY_FILE: keyFile });
    await t.fund('Tron', 30_000_000n);
    const to = toTronAddress(sha256(new TextEncoder().encode(`halted destination ${Date.now()}`)).subarray(0, 20));
    const body = JSON.stringify({ externalId: 'tron-halted-1', blockchain: 'Tron', currency: 'USDT', amount: 10, destinationAddress: to });
    const created = (await (await t.signed('POST', '/partner/v1/platforms/withdrawals', { body, headers: JSON_TYPE })).json()) as Withdrawal;
    // Halted after it was queued (a scan position of Tron's, as the scanner keeps it), before the payer starts.
    await t.db.query("INSERT INTO chain_cursors (network, next_block) VALUES ('Tron', 1)");
    await halt(t.db, 'Tron', new Date(), 'a reorg deeper than 20 confirmations');
    await t.platform.startJobs();
    await sleep(7_000); // two rounds of Tron's payer at least (every 3 s)
    const read = async () => (await t!.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: created.uuid } } })).data!;
    expect(await read()).toMatchObject({ status: 'PENDING', stage: 'queued' });
    expect(node.broadcasts).toEqual([]);
    expect(await t.count('payout_transactions')).toBe(0);
    expect(t.logs().filter((line) => line.includes('paying Tron withdrawals waits'))).toHaveLength(1);
    await resumeNetwork(t.db, 'Tron');
    await expect.poll(async () => (await read()).stage, { timeout: 20_000, interval: 200 }).toBe('sent');
    expect(node.broadcasts.length).toBeGreaterThan(0);
  }, 60_000);
});
