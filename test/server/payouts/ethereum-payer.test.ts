// The Ethereum payout job's rounds on a real local chain (anvil, mining when the test says), through a
// proxy the test can take down: the node down mid-payout, a fee spike that needs a replacement under the
// same nonce, an outside transaction that takes the payout's nonce, a reverted transfer, and a reorg of
// the payout's block. Each payout ends paid exactly once (or FAILED with its hold back), the books agree.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '../../../src/server/chain/rpc.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { EthereumNode } from '../../../src/server/payouts/ethereum-node.js';
import { EthereumPayer } from '../../../src/server/payouts/ethereum-payer.js';
import { signErc20Transfer } from '../../../src/server/payouts/ethereum.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { recordOperatorPayment } from '../../../src/server/payouts/payout-store.js';
import { startChain, type Chain, type Hex, type Token } from '../../support/chain.js';
import { keyLeaks } from '../../support/key-leak.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform.js';

const CONFIRMATIONS = 2;
const GWEI = 1_000_000_000n;

/**
 * A JSON-RPC proxy to anvil: `up`, `down` (connections reset), `no-broadcast` (eth_sendRawTransaction
 * answers 503), or `blind`: a node that shows no receipt, no transaction and no log (null, null, [], and
 * blocks without their transactions), as a load-balanced provider or a node re-indexing after a restart does.
 */
async function startProxy(target: string) {
  let mode: 'up' | 'down' | 'no-broadcast' | 'blind' = 'up';
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      if (mode === 'down') return void request.socket.destroy();
      if (mode === 'no-broadcast' && body.includes('eth_sendRawTransaction')) return void response.writeHead(503).end();
      const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      const reply = (result: unknown) => void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
      if (mode === 'blind' && (call.method === 'eth_getTransactionReceipt' || call.method === 'eth_getTransactionByHash')) return reply(null);
      if (mode === 'blind' && call.method === 'eth_getLogs') return reply([]);
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await answer.text();
      if (mode === 'blind' && call.method === 'eth_getBlockByNumber' && call.params[1] === true) {
        const parsed = JSON.parse(text) as { result: { transactions: unknown[] } | null };
        if (parsed.result) return reply({ ...parsed.result, transactions: [] });
      }
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    set: (next: typeof mode) => void (mode = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the Ethereum payout job on anvil', () => {
  let chain: Chain;
  let token: Token;
  let t: TestPlatform;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const warnings: string[] = [];
  /** Every line the payers logged, and the hot wallets' keys (hex), for the key-leak check. */
  const logged: string[] = [];
  const keys: string[] = [];

  beforeAll(async () => {
    chain = await startChain({ automine: false });
    token = await chain.deployToken();
    await chain.mine(1);
    proxy = await startProxy(chain.rpcUrl);
    t = await startTestPlatform('pglite');
    await t.fund('Ethereum', 10_000_000_000n);
  });
  afterAll(async () => {
    if (t) expect(await checkLedger(t.db)).toMatchObject({ problems: [] });
    // Every line the payers logged, at every level, searched for every hot wallet's key (issue 47).
    expect(logged.length).toBeGreaterThan(0);
    for (const key of keys) expect(keyLeaks(logged, key)).toEqual([]);
    await t?.close();
    await proxy?.close();
    await chain?.stop();
  });

  beforeEach(() => proxy.set('up')); // whatever a failed test left it in

  /** A fresh hot wallet, funded (with `tokens`), and its payer (through the proxy). */
  async function payer(options: { replaceAfterSeconds?: number; tokens?: bigint; fundsWaitHours?: number; finality?: 'confirmations' | 'finalized' } = {}) {
    const key = randomBytes(32);
    keys.push(key.toString('hex')); // before the wallet holds it: what no logged line may show
    const wallet = new HotWallet('Ethereum', key);
    await chain.setBalance(wallet.address, 10n ** 19n);
    if (options.tokens !== 0n) await token.distribute([wallet.address], options.tokens ?? 1_000_000_000n);
    await chain.mine(1);
    const job = new EthereumPayer({
      db: t.db,
      node: new EthereumNode(new JsonRpcClient(proxy.url, 2000)),
      wallet,
      token: token.address,
      confirmations: CONFIRMATIONS,
      finality: options.finality ?? 'confirmations',
      maxFeePerGas: 500n * GWEI,
      replaceAfterSeconds: options.replaceAfterSeconds ?? 3600,
      fundsWaitHours: options.fundsWaitHours ?? 1,
      log: {
        info: (fields, message) => void logged.push(`${inspect(fields)} ${message}`),
        warn: (fields, message) => void (warnings.push(message), logged.push(`${inspect(fields)} ${message}`)),
        error: (fields, message) => void (warnings.push(message), logged.push(`${inspect(fields)} ${message}`)),
      },
    });
    return { wallet, job };
  }

  let count = 0;
  /** A withdrawal to a fresh address; its uuid and destination. */
  async function withdrawal(amountUnits = 12_000_000n) {
    const to = `0x${randomBytes(20).toString('hex')}`;
    const result = await t.platform.withdrawals.request({
      merchantId: t.merchant.merchantId, externalId: `eth-payer-${++count}`, network: 'Ethereum', currency: 'USDT', amountUnits, destinationAddress: to, callbackUrl: undefined, source: 'operator',
    });
    if (result.outcome !== 'created') throw new Error(result.outcome);
    return { uuid: result.row.uuid, to, amountUnits };
  }

  const read = async (uuid: string) => (await t.platform.withdrawals.read(t.merchant.merchantId, uuid))!;
  const receipt = (hash: string) => chain.rpc<{ status: string; blockNumber: string } | null>('eth_getTransactionReceipt', [hash]);
  const nonceOf = async (address: string) => BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [address, 'latest']));

  /** Mines until the payout's block is final, running the job after each block. */
  async function confirm(job: EthereumPayer) {
    for (let i = 0; i < CONFIRMATIONS; i++) {
      await chain.mine(1);
      await job.round();
    }
  }

  it('sends the same bytes again once the node is back, and pays once', async () => {
    const { wallet, job } = await payer();
    const { uuid, to, amountUnits } = await withdrawal();
    proxy.set('no-broadcast');
    await job.round(); // signed and written, the broadcast refused
    const sent = await read(uuid);
    expect(sent).toMatchObject({ status: 'PENDING', stage: 'sent', txId: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await chain.rpc('eth_getTransactionByHash', [sent.txId])).toBeNull();
    proxy.set('down');
    await expect(job.round()).rejects.toThrow();
    expect(await read(uuid)).toEqual(sent);
    proxy.set('up');
    await job.round(); // the same bytes again
    await confirm(job);
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: sent.txId });
    expect(await token.balanceOf(to)).toBe(amountUnits);
    expect(await nonceOf(wallet.address)).toBe(1n);
  });

  it('replaces a payout a fee spike left behind under the same nonce; only one is mined', async () => {
    const { wallet, job } = await payer({ replaceAfterSeconds: 1 });
    const { uuid, to, amountUnits } = await withdrawal();
    await job.round();
    const first = (await read(uuid)).txId!;
    // The base fee jumps far above what the payout offered: it is not mined.
    const offered = BigInt((await chain.rpc<{ maxFeePerGas: Hex }>('eth_getTransactionByHash', [first])).maxFeePerGas);
    await chain.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(offered * 4n).toString(16)}`]);
    await chain.mine(1);
    expect(await receipt(first)).toBeNull();
    await job.round(); // too early to replace: the same bytes again
    expect((await read(uuid)).txId).toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await job.round();
    const second = (await read(uuid)).txId!;
    expect(second).not.toBe(first);
    const replacement = await chain.rpc<{ nonce: Hex; maxFeePerGas: Hex }>('eth_getTransactionByHash', [second]);
    expect(BigInt(replacement.nonce)).toBe(0n);
    expect(BigInt(replacement.maxFeePerGas)).toBeGreaterThanOrEqual((offered * 110n) / 100n);
    await chain.mine(1);
    await job.round();
    await confirm(job);
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: second });
    expect(await receipt(first)).toBeNull();
    expect(await token.balanceOf(to)).toBe(amountUnits);
    expect(await nonceOf(wallet.address)).toBe(1n);
  });

  it('pays anew, under a new nonce, a payout whose nonce an outside transaction took', async () => {
    const { wallet, job } = await payer();
    const { uuid, to, amountUnits } = await withdrawal();
    proxy.set('no-broadcast');
    await job.round();
    const stuck = (await read(uuid)).txId!;
    proxy.set('up');
    // The hot wallet's owner spends nonce 0 elsewhere, straight to the node.
    const fees = { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI };
    const outside = signErc20Transfer(wallet, { chainId: chain.chainId, nonce: 0n, ...fees, gasLimit: 100_000n, token: token.address, to: `0x${'ee'.repeat(20)}`, amount: 1n });
    await chain.rpc('eth_sendRawTransaction', [outside.raw]);
    await chain.mine(CONFIRMATIONS);
    await job.round(); // nonce 0 is taken, final, and none of the payout's: queued again, and paid anew
    const paid = (await read(uuid)).txId!;
    const stages = (await t.db.query<{ body: string }>('SELECT body FROM callback_outbox WHERE withdrawal_uuid = $1 ORDER BY sequence', [uuid])).map((e) => JSON.parse(e.body).withdrawal.stage);
    expect(stages).toEqual(['sent', 'queued', 'sent']);
    expect(paid).not.toBe(stuck);
    await chain.mine(1);
    await confirm(job);
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: paid });
    expect(BigInt((await chain.rpc<{ nonce: Hex }>('eth_getTransactionByHash', [paid])).nonce)).toBe(1n);
    expect(await token.balanceOf(to)).toBe(amountUnits);
    expect(warnings).toContain('payout: another transaction of the hot wallet took its nonce (found with its receipt) and none of its own can be mined; it is paid anew');
  });

  it('never pays anew while the node shows no receipt of its mined payout (a blind node, for many blocks), and pays once when it sees again', async () => {
    const { wallet, job } = await payer({ replaceAfterSeconds: 0 });
    const { uuid, to, amountUnits } = await withdrawal();
    await job.round();
    const sent = (await read(uuid)).txId!;
    await chain.mine(1); // mined; then the node goes blind to it
    proxy.set('blind');
    for (let i = 0; i < 3 * CONFIRMATIONS; i++) {
      await chain.mine(1);
      await job.round(); // its nonce is spent at a final block, and nothing shows which transaction spent it
    }
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'sent', txId: sent });
    const candidates = await t.db.query<{ state: string }>('SELECT state FROM payout_transactions WHERE withdrawal_uuid = $1', [uuid]);
    expect(candidates.map((c) => c.state)).toEqual(['pending']); // never replaced, never dropped: its nonce is spent
    expect(warnings).toContain('payout: its nonce is spent in a final block but the node shows no receipt of it nor the transaction that took it; it waits, never paid again on missing evidence');
    proxy.set('up');
    await job.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: sent });
    expect(await token.balanceOf(to)).toBe(amountUnits);
    expect(await nonceOf(wallet.address)).toBe(1n); // one transaction of the hot wallet, one transfer
  });

  it('keeps the original gas in every replacement, orders more than ten candidates by number, and the one mined succeeds', async () => {
    const { wallet, job } = await payer({ replaceAfterSeconds: 0 });
    const { uuid, to, amountUnits } = await withdrawal();
    await job.round();
    const first = (await read(uuid)).txId!;
    const gasOf = async (hash: string) => BigInt((await chain.rpc<{ gas: Hex }>('eth_getTransactionByHash', [hash])).gas);
    const gas = await gasOf(first);
    // A mining stall: every round replaces the payout under its nonce, past the tenth candidate (ids 9 and 10 sort apart as text).
    for (let i = 0; i < 11; i++) await job.round();
    const candidates = await t.db.query<{ tx_hash: string }>('SELECT tx_hash FROM payout_transactions WHERE withdrawal_uuid = $1 ORDER BY id', [uuid]);
    expect(candidates).toHaveLength(12);
    const latest = candidates.at(-1)!.tx_hash;
    expect((await read(uuid)).txId).toBe(latest);
    expect(await gasOf(latest)).toBe(gas); // the node holds the latest, with its original's gas
    await chain.mine(1);
    await confirm(job);
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: latest });
    expect(BigInt((await receipt(latest))!.status)).toBe(1n);
    expect(await token.balanceOf(to)).toBe(amountUnits);
    expect(await nonceOf(wallet.address)).toBe(1n);
  });

  it("makes a payout DONE by the scanner's rule: with ETHEREUM_FINALITY=finalized, at the node's finalized block, not at the confirmations", async () => {
    const { job } = await payer({ finality: 'finalized' });
    const { uuid } = await withdrawal();
    await job.round();
    await chain.mine(1);
    for (let i = 0; i < 3 * CONFIRMATIONS; i++) {
      await chain.mine(1);
      await job.round(); // deep enough by the confirmations, above anvil's finalized block (64 below the head)
    }
    const mined = BigInt((await receipt((await read(uuid)).txId!))!.blockNumber);
    const finalized = BigInt((await chain.rpc<{ number: Hex }>('eth_getBlockByNumber', ['finalized', false])).number);
    expect(finalized).toBeLessThan(mined);
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'sent' });
    await chain.mine(64);
    await job.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE' });
  });

  it('makes a reverted transfer FAILED with its reason, and gives the hold back', async () => {
    const { job } = await payer();
    const before = (await t.client().GET('/partner/v1/platforms/balances')).data!.data.find((b) => b.blockchain === 'Ethereum')!;
    const { uuid, to } = await withdrawal();
    await job.round();
    const sent = await read(uuid);
    // The token turns into a contract that reverts every call before the payout is mined.
    const code = await chain.rpc<Hex>('eth_getCode', [token.address, 'latest']);
    await chain.rpc('anvil_setCode', [token.address, '0x60006000fd']);
    try {
      await chain.mine(1);
      expect((await receipt(sent.txId!))?.status).toBe('0x0');
    } finally {
      await chain.rpc('anvil_setCode', [token.address, code]);
    }
    await confirm(job);
    expect(await read(uuid)).toMatchObject({ status: 'FAILED', failureReason: `Its transfer ${sent.txId} reverted on chain; nothing was paid.` });
    expect(await token.balanceOf(to)).toBe(0n);
    const after = (await t.client().GET('/partner/v1/platforms/balances')).data!.data.find((b) => b.blockchain === 'Ethereum')!;
    expect(after).toEqual(before);
  });

  it('waits, and says so, while the hot wallet cannot cover a payout; pays it once funded; fails one never covered in time', async () => {
    const { wallet, job } = await payer({ tokens: 0n });
    const { uuid, to, amountUnits } = await withdrawal();
    await job.round();
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    const ready = (await (await fetch(`${t.baseUrl}/readyz`)).json()) as { status: string; payoutsWaitingForFunds?: Record<string, number> };
    expect(ready).toMatchObject({ status: 'ready', payoutsWaitingForFunds: { Ethereum: 1 } });
    const said = () => warnings.filter((w) => w.startsWith('payout waits: the hot wallet holds 0 USDT')).length;
    expect(said()).toBe(1);
    // Another round, the same wait: said once, not every round.
    await job.round();
    expect(said()).toBe(1);
    await token.distribute([wallet.address], amountUnits);
    await chain.mine(1);
    await job.round();
    await chain.mine(1);
    await confirm(job);
    expect(await read(uuid)).toMatchObject({ status: 'DONE' });
    expect(await token.balanceOf(to)).toBe(amountUnits);
    expect(((await (await fetch(`${t.baseUrl}/readyz`)).json()) as object)).not.toHaveProperty('payoutsWaitingForFunds');

    // A wallet that never covers it: past the wait (here none), FAILED with its hold back.
    const { job: broke } = await payer({ tokens: 0n, fundsWaitHours: 0 });
    const never = await withdrawal(20_000_000n);
    await broke.round();
    expect(await read(never.uuid)).toMatchObject({ status: 'FAILED', failureReason: "The platform's hot wallet did not cover it within 0 hours; nothing was paid." });
  });

  it("checks the operator's recorded payment on chain as its own: DONE when it pays exactly, queued again when it does not", async () => {
    const job = new EthereumPayer({
      db: t.db, node: new EthereumNode(new JsonRpcClient(proxy.url, 2000)), wallet: undefined, token: token.address, confirmations: CONFIRMATIONS,
      maxFeePerGas: 500n * GWEI, replaceAfterSeconds: 3600, fundsWaitHours: 1,
    });
    const operator = chain.accounts[2]!;
    await token.distribute([operator], 100_000_000n);
    await chain.mine(1);
    const exact = await withdrawal();
    const short = await withdrawal();
    const paid = await token.transfer(operator, exact.to, exact.amountUnits);
    const wrong = await token.transfer(operator, short.to, short.amountUnits - 1n);
    await chain.mine(1);
    expect(await recordOperatorPayment(t.db, { uuid: exact.uuid, network: 'Ethereum' }, paid)).toBe('recorded');
    expect(await recordOperatorPayment(t.db, { uuid: short.uuid, network: 'Ethereum' }, paid)).toBe('used');
    expect(await recordOperatorPayment(t.db, { uuid: short.uuid, network: 'Ethereum' }, wrong)).toBe('recorded');
    expect(await recordOperatorPayment(t.db, { uuid: exact.uuid, network: 'Ethereum' }, `0x${'ab'.repeat(32)}`)).toBe('refused'); // it is sent, not queued
    await job.round();
    await confirm(job);
    expect(await read(exact.uuid)).toMatchObject({ status: 'DONE', txId: paid });
    expect(await read(short.uuid)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    // Out of the next tests' way: the operator rejects it (nothing is out for it any more).
    expect(await t.platform.withdrawals.move(short.uuid, { to: 'FAILED', reason: 'Rejected by the operator.' })).toMatchObject({ status: 'FAILED' });
  });

  it('sends the same bytes again when a reorg takes the payout\'s block away, and pays once', async () => {
    const { wallet, job } = await payer();
    const { uuid, to, amountUnits } = await withdrawal();
    await job.round();
    const sent = (await read(uuid)).txId!;
    const snapshot = await chain.snapshot();
    await chain.mine(1);
    await job.round(); // mined, one block deep: not final
    expect((await read(uuid)).status).toBe('PENDING');
    await chain.revert(snapshot); // the block is gone
    await chain.mine(1); // a block of another branch, without it
    await job.round(); // not in a block, its nonce free: the same bytes again
    await chain.mine(1);
    await job.round();
    await confirm(job);
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: sent });
    expect(await token.balanceOf(to)).toBe(amountUnits);
    expect(await nonceOf(wallet.address)).toBe(1n);
  });
});
