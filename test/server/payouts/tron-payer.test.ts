// The Tron payout job's round (src/server/payouts/tron-payer.ts) on a real test platform, against the
// stand-in of a java-tron node (test/support/tron-node.ts) that verifies each broadcast's signature and
// executes the token's transfers: no Tron node runs here. Withdrawals are asked for through the API; each
// round is run by hand, the chain's blocks made by the test. Every test
// ends with the books agreeing with their entries, and no log line showing the hot wallet's key.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Balance, Withdrawal } from '../../../src/client/index.js';
import { toTronAddress } from '../../../src/server/addresses/derivation.js';
import { createMetrics, type Metrics } from '../../../src/server/http/metrics.js';
import { LeaseLostError } from '../../../src/server/db/fence.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { HotWallet, loadHotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { recordOperatorPayment } from '../../../src/server/payouts/payout-store.js';
import { provesTransfer } from '../../../src/server/payouts/transfer-proof.js';
import { signTrc20Transfer } from '../../../src/server/payouts/tron.js';
import { TronNode } from '../../../src/server/payouts/tron-node.js';
import { TronPayer, UNKNOWN_AGAIN_AFTER_BLOCKS, type TronPayerOptions } from '../../../src/server/payouts/tron-payer.js';
import { keyLeaks } from '../../support/key-leak.js';
import { DATABASES, livePlatform, type TestPlatform } from '../../support/platform.js';
import { startTronNode, TRANSFER_ENERGY, type TronNode as StandIn } from '../../support/tron-node.js';
import { fundedTronWallet } from '../../support/payouts.js';

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** 100 TRX: what each payout may burn for its energy, and what the hot wallet must hold for it. */
const FEE_LIMIT = 100_000_000;
const SOLID_LAG = 19;
const JSON_TYPE = { 'Content-Type': 'application/json' };

interface PayoutRow {
  tx_hash: string;
  payer: string;
  state: string;
  raw: string | null;
  expires_at: Date | null;
  block_number: bigint | null;
  broadcast_at: Date | null;
}

describe.each(DATABASES)('the Tron payer on %s', (kind) => {
  let t: TestPlatform;
  let node: StandIn;
  let dir: string;
  let keyHex: string;
  let wallet: HotWallet;
  let metrics: Metrics;
  let lines: string[];
  let destinations = 0;
  const destination = () => toTronAddress(sha256(new TextEncoder().encode(`payer destination ${kind} ${++destinations} ${Date.now()}`)).subarray(0, 20));

  beforeEach(async () => {
    node = await startTronNode({ token: USDT, solidLag: SOLID_LAG });
    node.produceBlocks(30);
    dir = mkdtempSync(join(tmpdir(), 'tron-payer-'));
    keyHex = randomBytes(32).toString('hex');
    const keyFile = join(dir, 'tron-payout.key');
    writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    wallet = await loadHotWallet('Tron', keyFile);
    node.setTokenBalance(wallet.address, 1_000_000_000n); // 1,000 USDT
    node.setTrxBalance(wallet.address, 1_000_000_000n); // 1,000 TRX
    node.produceBlocks(SOLID_LAG + 1); // the payer reads the token balance at the solidified block
    // With a Tron key file the platform pays Tron withdrawals on chain: in live mode only (a sandbox refuses the file).
    t = await livePlatform(kind, { TRON_PAYOUT_KEY_FILE: keyFile });
    await t.fund('Tron', 100_000_000n);
    metrics = createMetrics();
    lines = [];
  });
  afterEach(async () => {
    if (t) expect(await checkLedger(t.db)).toMatchObject({ problems: [] });
    expect(keyLeaks(lines, keyHex)).toEqual([]);
    await t?.close();
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const record = (level: string) => (fields: object, message: string) => void lines.push(JSON.stringify({ level, ...fields, message }));
  const log = { info: record('info'), warn: record('warn'), error: record('error') };

  function payer(overrides: Partial<TronPayerOptions> = {}): TronPayer {
    return new TronPayer({
      db: t.db,
      node: new TronNode(node.url),
      wallet,
      token: USDT,
      feeLimitSun: FEE_LIMIT,
      expirationSeconds: 600,
      fundsWaitHours: 72,
      log,
      gauges: metrics.payouts,
      // The payer's own clock is the chain's true time, which only the test moves (3 s a block it makes), never a backend's answer.
      clock: () => node.head.timestamp,
      ...overrides,
    });
  }

  /** A withdrawal asked for through the API; its uuid. */
  async function ask(amount: number, to: string): Promise<string> {
    const body = JSON.stringify({ externalId: `tron-payout-${randomBytes(6).toString('hex')}`, blockchain: 'Tron', currency: 'USDT', amount, destinationAddress: to });
    const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', { body, headers: JSON_TYPE });
    expect(response.status).toBe(201);
    return ((await response.json()) as Withdrawal).uuid;
  }

  async function read(uuid: string): Promise<Withdrawal> {
    const { data } = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid } } });
    return data!;
  }

  const transactions = (uuid: string) =>
    t.db.query<PayoutRow>('SELECT tx_hash, payer, state, raw, expires_at, block_number, broadcast_at FROM payout_transactions WHERE withdrawal_uuid = $1 ORDER BY id', [uuid]);

  async function tronBalance(): Promise<Balance> {
    const { data } = await t.client().GET('/partner/v1/platforms/balances');
    return data!.data.find((b) => b.blockchain === 'Tron')!;
  }

  async function nodeSays(path: string, txId: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${node.url}${path}`, { method: 'POST', body: JSON.stringify({ value: txId }) });
    return (await response.json()) as Record<string, unknown>;
  }

  /** Makes blocks until the payout's block is solidified (its block and 19 more). */
  const solidify = () => node.produceBlocks(SOLID_LAG + 1);

  const gauge = async (state: string) => (await metrics.payouts.payouts.get()).values.find((v) => v.labels.network === 'Tron' && v.labels.state === state)?.value;
  const counter = async (name: 'confirmed' | 'failed') => (await metrics.payouts[name].get()).values.find((v) => v.labels.network === 'Tron')?.value ?? 0;

  it('pays a withdrawal: signed and written before its broadcast, DONE only once solidified, with the txId the node knows and the exact Transfer', async () => {
    const to = destination();
    const uuid = await ask(12.5, to);
    const round = payer();
    expect(await round.round()).toBe(false);

    const [written] = await transactions(uuid);
    const head = node.head;
    expect(written).toMatchObject({ payer: 'hot_wallet', state: 'pending', broadcast_at: expect.any(Date) });
    expect(written!.expires_at!.getTime()).toBe(head.timestamp + 600_000);
    const raw = JSON.parse(written!.raw!) as { txID: string; raw_data: { ref_block_hash: string; expiration: number; fee_limit: number } };
    expect(raw).toMatchObject({ txID: written!.tx_hash, raw_data: { ref_block_hash: head.blockID.slice(16, 32), expiration: head.timestamp + 600_000, fee_limit: FEE_LIMIT } });
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'sent', txId: written!.tx_hash });
    expect(node.pending()).toEqual([written!.tx_hash]);
    expect(await gauge('in_flight')).toBe(1);

    // In a block, not yet solidified: it stays sent, its same bytes sent again (DUP: known).
    node.produceBlocks(1);
    await round.round();
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'sent' });
    node.produceBlocks(SOLID_LAG - 1);
    await round.round();
    expect((await read(uuid)).status).toBe('PENDING');
    node.produceBlocks(1);
    await round.round();

    const done = await read(uuid);
    expect(done).toMatchObject({ status: 'DONE', txId: written!.tx_hash });
    expect(done.stage).toBeUndefined();
    const [mined] = await transactions(uuid);
    expect(mined).toMatchObject({ state: 'mined', block_number: BigInt(node.head.number - SOLID_LAG) });
    // The node knows the txId, and its info holds exactly this Transfer: hot wallet → destination, 12.5 USDT.
    expect(await nodeSays('/walletsolidity/gettransactionbyid', done.txId!)).toMatchObject({ txID: done.txId, ret: [{ contractRet: 'SUCCESS' }] });
    const info = await nodeSays('/walletsolidity/gettransactioninfobyid', done.txId!);
    const logs = info.log as { address: string; topics: string[]; data: string }[];
    expect(logs).toHaveLength(1);
    expect(provesTransfer('Tron', logs, { token: USDT, from: wallet.address, to, amount: 12_500_000n })).toBe(true);
    expect(node.tokenBalance(to)).toBe(12_500_000n);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 12_500_000n);
    expect(node.trxBalance(wallet.address)).toBe(1_000_000_000n - BigInt(TRANSFER_ENERGY.toNewHolder * 210));
    expect(await tronBalance()).toMatchObject({ available: 86_500_000, held: 0, withdrawn: 13_500_000, received: 100_000_000 });
    expect(await counter('confirmed')).toBe(1);
    expect((await metrics.payouts.hotWallet.get()).values).toEqual(
      expect.arrayContaining([expect.objectContaining({ labels: { network: 'Tron', asset: 'token' }, value: 987_500_000 })]),
    );
    // Each step in the log with the withdrawal and its txId.
    for (const message of ['payout signed and written', 'payout broadcast', 'payout confirmed: DONE']) {
      expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(expect.objectContaining({ withdrawal: uuid, txId: done.txId, message }));
    }
    // Nothing more to do: another round sends nothing.
    const broadcasts = node.broadcasts.length;
    await round.round();
    expect(node.broadcasts.length).toBe(broadcasts);
  });

  it('pays two withdrawals of one amount to one address in one round as two transactions (two txIDs), each once', async () => {
    const to = destination();
    const [a, b] = [await ask(5, to), await ask(5, to)];
    const round = payer();
    await round.round();
    const [[ta], [tb]] = [await transactions(a), await transactions(b)];
    expect(ta!.tx_hash).not.toBe(tb!.tx_hash);
    expect(node.pending().sort()).toEqual([ta!.tx_hash, tb!.tx_hash].sort());
    solidify();
    await round.round();
    expect(await read(a)).toMatchObject({ status: 'DONE', txId: ta!.tx_hash });
    expect(await read(b)).toMatchObject({ status: 'DONE', txId: tb!.tx_hash });
    expect(node.tokenBalance(to)).toBe(10_000_000n);
  });

  it('ends its round at the first write its lease refuses: what it wrote before stands, nothing after it is signed or sent', async () => {
    const [a, b] = [await ask(3, destination()), await ask(4, destination())];
    // The round's fence passes A's intent, then refuses: another instance took the job over meanwhile (on
    // PostgreSQL, tron-overlap.test.ts; here the fence alone, since on PGlite no other instance can exist).
    let proofs = 0;
    const fence = async () => {
      if (++proofs > 1) throw new LeaseLostError('payout:Tron');
    };
    await expect(payer().round(fence)).rejects.toBeInstanceOf(LeaseLostError);
    const [written] = await transactions(a);
    // A's intent was written, then sent; the mark of its broadcast was refused, and B was never signed.
    expect(written).toMatchObject({ state: 'pending', broadcast_at: null });
    expect(node.broadcasts.map((sent) => sent.txID)).toEqual([written!.tx_hash]);
    expect(await transactions(b)).toEqual([]);
    expect(await read(b)).toMatchObject({ stage: 'queued' });
    expect(lines.some((line) => line.includes('broadcast failed'))).toBe(false);
    // The next holder's round carries on: A sent again (known), B paid.
    await payer().round();
    solidify();
    await payer().round();
    expect((await read(a)).status).toBe('DONE');
    expect((await read(b)).status).toBe('DONE');
    expect(await transactions(a)).toHaveLength(1);
  });

  it.each(['request', 'answer'] as const)('sends the same bytes again after a broadcast lost (its %s), and the payout is paid once', async (how) => {
    const to = destination();
    const uuid = await ask(7, to);
    node.loseNextBroadcast(how);
    await payer().round(); // the broadcast fails: logged, the intent kept
    const [first] = await transactions(uuid);
    expect(first!.broadcast_at).toBeNull();
    expect(await read(uuid)).toMatchObject({ stage: 'sent', txId: first!.tx_hash });
    expect(node.pending()).toEqual(how === 'request' ? [] : [first!.tx_hash]);

    // Another payer (as after a restart) sends the same bytes: taken, or DUP.
    await payer().round();
    expect(node.broadcasts.at(-1)).toEqual({ txID: first!.tx_hash, answer: how === 'request' ? { result: true, txid: first!.tx_hash } : expect.objectContaining({ code: 'DUP_TRANSACTION_ERROR' }) });
    expect(node.pending()).toEqual([first!.tx_hash]);
    solidify();
    await payer().round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: first!.tx_hash });
    expect(await transactions(uuid)).toHaveLength(1);
    expect(node.tokenBalance(to)).toBe(7_000_000n);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 7_000_000n);
  });

  it('rebuilds a transaction that expired unknown to the node only once the solidified time is past its expiration and it is still unknown UNKNOWN_AGAIN_AFTER_BLOCKS solidified blocks later, and pays once', async () => {
    const to = destination();
    const uuid = await ask(9.25, to);
    const round = payer({ expirationSeconds: 60 });
    node.loseNextBroadcast('dropped'); // the node answers success, then forgets it: never included
    await round.round();
    const [first] = await transactions(uuid);
    const expiration = first!.expires_at!.getTime();
    expect(expiration).toBe(node.head.timestamp + 60_000);

    // Before its expiration: sent again (the node's cache answers DUP), never rebuilt.
    node.produceBlocks(5);
    await round.round();
    expect(node.broadcasts.at(-1)).toMatchObject({ txID: first!.tx_hash, answer: { code: 'DUP_TRANSACTION_ERROR' } });
    // Past its expiration at the head, not yet at the solidified block: it waits.
    while (node.head.timestamp <= expiration) node.produceBlocks(1);
    const broadcasts = node.broadcasts.length;
    while (node.solid.timestamp + 3_000 <= expiration) {
      node.produceBlocks(1);
      await round.round();
    }
    expect(node.solid.timestamp).toBeLessThanOrEqual(expiration);
    expect(node.broadcasts.length).toBe(broadcasts); // nothing sent once expired
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'pending' })]);

    // The solidified block passes its expiration, and no read of the node knows the txID: seen once, kept.
    node.produceBlocks(1);
    expect(node.solid.timestamp).toBeGreaterThan(expiration);
    await round.round();
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'pending' })]);
    // Still unknown everywhere UNKNOWN_AGAIN_AFTER_BLOCKS solidified blocks later (not one sooner): a new transaction.
    node.produceBlocks(UNKNOWN_AGAIN_AFTER_BLOCKS - 1);
    await round.round();
    expect(await transactions(uuid)).toHaveLength(1);
    node.produceBlocks(1);
    // A payer that has just started (a restart, a take-over) has seen it once only: it waits.
    await payer({ expirationSeconds: 60 }).round();
    expect(await transactions(uuid)).toHaveLength(1);
    await round.round();
    const [dropped, rebuilt] = await transactions(uuid);
    expect(dropped).toMatchObject({ tx_hash: first!.tx_hash, state: 'dropped' });
    expect(rebuilt).toMatchObject({ state: 'pending', broadcast_at: expect.any(Date) });
    expect(rebuilt!.tx_hash).not.toBe(first!.tx_hash);
    const raw = JSON.parse(rebuilt!.raw!) as { raw_data: { ref_block_hash: string; expiration: number } };
    expect(raw.raw_data).toMatchObject({ ref_block_hash: node.head.blockID.slice(16, 32), expiration: node.head.timestamp + 60_000 });
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'sent', txId: rebuilt!.tx_hash });

    solidify();
    await round.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: rebuilt!.tx_hash });
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ state: 'dropped' }), expect.objectContaining({ tx_hash: rebuilt!.tx_hash, state: 'mined' })]);
    expect(await nodeSays('/wallet/gettransactionbyid', first!.tx_hash)).toEqual({});
    expect(node.tokenBalance(to)).toBe(9_250_000n);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 9_250_000n);
  });

  it('never rebuilds a transaction the node knows in a block, though the solidified time is past its expiration and a lagging solidity backend has no info for it yet', async () => {
    const to = destination();
    const uuid = await ask(6.5, to);
    const round = payer({ expirationSeconds: 60 });
    node.produceBlocks(1, { include: false }); // congested: not in the next blocks
    await round.round();
    const [first] = await transactions(uuid);
    const expiration = first!.expires_at!.getTime();
    // Included in the last block before it expires.
    while (node.head.timestamp + 3_000 < expiration) node.produceBlocks(1, { include: false });
    node.produceBlocks(1);
    expect(await nodeSays('/wallet/gettransactionbyid', first!.tx_hash)).toMatchObject({ txID: first!.tx_hash });
    // The solidified block passes the expiration, but the backend answering the solidity API's transaction reads lags.
    node.lagSolidityReads(30);
    while (node.solid.timestamp <= expiration + 9_000) {
      node.produceBlocks(1);
      await round.round();
    }
    expect(await nodeSays('/walletsolidity/gettransactioninfobyid', first!.tx_hash)).toEqual({});
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'pending' })]);
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'sent', txId: first!.tx_hash });

    node.lagSolidityReads(0);
    await round.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: first!.tx_hash });
    expect(node.tokenBalance(to)).toBe(6_500_000n);
  });

  it("never rebuilds a transaction that backends behind the others do not know yet: the full node's reads 100 blocks behind the head, the solidity node's 120", async () => {
    const to = destination();
    const uuid = await ask(9.25, to);
    const round = payer({ expirationSeconds: 60 });
    node.produceBlocks(1, { include: false }); // congested: not in the next blocks
    await round.round();
    const [first] = await transactions(uuid);
    const expiration = first!.expires_at!.getTime();
    // Included in the last block before it expires, then behind every backend that answers transaction reads.
    while (node.head.timestamp + 3_000 < expiration) node.produceBlocks(1, { include: false });
    node.lagWalletReads(100);
    node.lagSolidityReads(120);
    node.produceBlocks(1);
    const included = node.head.number;
    expect(node.head.transactions).toEqual([first!.tx_hash]);
    // A round every 5 blocks: from the one whose solidified block passes the expiration (19 blocks on) to the
    // last before the full node's backend reaches the block, no read knows it, for 80 blocks (where one
    // /wallet/gettransactionbyid used to be enough for a rebuild).
    const broadcasts = node.broadcasts.length;
    while (node.head.number < included + 95) {
      node.produceBlocks(5);
      await round.round();
    }
    node.produceBlocks(4);
    await round.round();
    expect(node.solid.number).toBe(included + 80);
    expect(node.solid.timestamp).toBeGreaterThan(expiration);
    for (const path of ['/wallet/gettransactionbyid', '/walletsolidity/gettransactionbyid', '/wallet/gettransactioninfobyid', '/walletsolidity/gettransactioninfobyid']) {
      expect(await nodeSays(path, first!.tx_hash)).toEqual({});
    }
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'pending' })]);
    // Then the full node's backend knows it: never rebuilt, nothing sent, while the solidity node's catches up.
    node.produceBlocks(1);
    expect(await nodeSays('/wallet/gettransactionbyid', first!.tx_hash)).toMatchObject({ txID: first!.tx_hash });
    while (node.solid.number - 120 < included) {
      await round.round();
      node.produceBlocks(5);
    }
    expect(node.broadcasts.length).toBe(broadcasts);
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'pending' })]);
    await round.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: first!.tx_hash });
    expect(node.tokenBalance(to)).toBe(9_250_000n);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 9_250_000n);
  });

  it("never rebuilds again once a dropped transaction turns up in a block: backends further behind than the margin fooled the rule once, and the error is the operator's", async () => {
    const to = destination();
    const uuid = await ask(9.25, to);
    const round = payer({ expirationSeconds: 60 });
    node.produceBlocks(1, { include: false });
    await round.round();
    const [first] = await transactions(uuid);
    const expiration = first!.expires_at!.getTime();
    // Included before it expires, and every transaction read answered by backends 400 blocks behind: more
    // than the rule's margin (what it cannot tell from a transaction that never was).
    while (node.head.timestamp + 3_000 < expiration) node.produceBlocks(1, { include: false });
    node.lagWalletReads(400);
    node.lagSolidityReads(400);
    node.produceBlocks(1);
    while (node.solid.timestamp <= expiration) node.produceBlocks(1);
    await round.round();
    node.produceBlocks(UNKNOWN_AGAIN_AFTER_BLOCKS);
    node.loseNextBroadcast('dropped'); // the rebuilt one is lost: never included
    await round.round();
    const [dropped, rebuilt] = await transactions(uuid);
    expect(dropped).toMatchObject({ tx_hash: first!.tx_hash, state: 'dropped' });
    const rebuiltExpiration = rebuilt!.expires_at!.getTime();

    // The backends catch up: the dropped one is in a block. The rebuilt one expires unknown, yet nothing is rebuilt again.
    node.lagWalletReads(0);
    node.lagSolidityReads(0);
    while (node.solid.timestamp <= rebuiltExpiration) node.produceBlocks(1);
    await round.round();
    node.produceBlocks(UNKNOWN_AGAIN_AFTER_BLOCKS);
    await round.round();
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ state: 'dropped' }), expect.objectContaining({ tx_hash: rebuilt!.tx_hash, state: 'pending' })]);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ level: 'error', withdrawal: uuid, txId: first!.tx_hash, message: 'a dropped payout transaction is known to the node: nothing is rebuilt, left for the operator' }),
    );
    expect(node.tokenBalance(to)).toBe(9_250_000n);
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'sent' });
  });

  it('never rebuilds sooner because every second answer comes from a backend 150 blocks behind: the wait is counted on the highest solidified block seen and on its own clock', async () => {
    const to = destination();
    const uuid = await ask(9.25, to);
    const round = payer({ expirationSeconds: 60 });
    node.loseNextBroadcast('dropped'); // never included: its rebuild is due, but not one block sooner
    await round.round();
    const [first] = await transactions(uuid);
    const expiration = first!.expires_at!.getTime();
    // Even the backend behind has solidified past the expiration.
    while (node.solid.timestamp <= expiration + 150 * 3_000) node.produceBlocks(1);
    node.lagAlternateRequests(150);
    // First sighting on the backend behind's solidified height (the second request of the round), then
    // the up-to-date one's, 150 blocks higher: no time has passed, nothing is rebuilt.
    for (let i = 0; i < 4; i++) await round.round();
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'pending' })]);
    const sightings = lines.map((line) => JSON.parse(line) as { message: string; solidBlock?: number }).filter((l) => l.message.startsWith('payout expired and unknown to the node'));
    expect(sightings).toEqual([expect.objectContaining({ solidBlock: node.solid.number - 150 })]);
    node.produceBlocks(UNKNOWN_AGAIN_AFTER_BLOCKS - 1);
    await round.round();
    await round.round();
    expect(await transactions(uuid)).toHaveLength(1);
    node.produceBlocks(1);
    await round.round();
    const [dropped, rebuilt] = await transactions(uuid);
    expect(dropped).toMatchObject({ tx_hash: first!.tx_hash, state: 'dropped' });
    expect(rebuilt).toMatchObject({ state: 'pending' });
    node.lagAlternateRequests(0);
    solidify();
    await round.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: rebuilt!.tx_hash });
    expect(node.tokenBalance(to)).toBe(9_250_000n);
  });

  it('never rebuilds an included transaction whatever every second answer from a backend far behind says: its /wallet reads answer {} while the others know it', async () => {
    const to = destination();
    const uuid = await ask(6.5, to);
    const round = payer({ expirationSeconds: 60 });
    node.produceBlocks(1, { include: false }); // congested: not in the next blocks
    await round.round();
    const [first] = await transactions(uuid);
    const expiration = first!.expires_at!.getTime();
    while (node.head.timestamp + 3_000 < expiration) node.produceBlocks(1, { include: false });
    node.produceBlocks(1); // included in the last block before it expires
    // Every second request from a backend 400 blocks behind: more than the rule's margin, it knows nothing of the payout.
    node.lagAlternateRequests(400);
    const known = async (path: string) => typeof (await nodeSays(path, first!.tx_hash)).txID === 'string';
    expect([await known('/wallet/gettransactionbyid'), await known('/wallet/gettransactionbyid')]).toEqual([true, false]);
    // A round every 5 blocks until the solidified block is 150 blocks past the expiration.
    while (node.solid.timestamp <= expiration + 150 * 3_000) {
      node.produceBlocks(5);
      await round.round();
    }
    // Its same bytes sent again while a head from the backend behind showed it unexpired (known: DUP), nothing else.
    expect(new Set(node.broadcasts.map((sent) => sent.txID))).toEqual(new Set([first!.tx_hash]));
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'mined' })]);
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: first!.tx_hash });
    expect(node.tokenBalance(to)).toBe(6_500_000n);
  });

  it("waits for funds when the node refuses the payout for the hot wallet's bandwidth (BANDWITH_ERROR): the refusal logged once, the payout queued again once it can never be included, and paid once after a top-up", async () => {
    const to = destination();
    const uuid = await ask(7, to);
    const round = payer({ expirationSeconds: 60 });
    node.setBandwidth(wallet.address, 0); // no free or staked bandwidth: each transfer burns TRX for it
    // The wallet's TRX covers the fee limit when the round reads it, and is spent elsewhere before the broadcast arrives.
    const held = node.holdNext('/wallet/broadcasttransaction');
    const paying = round.round();
    await held.reached;
    node.setTrxBalance(wallet.address, 0n);
    held.release();
    await paying;
    const [first] = await transactions(uuid);
    expect(node.broadcasts.at(-1)).toEqual({ txID: first!.tx_hash, answer: { code: 'BANDWITH_ERROR', txid: first!.tx_hash, message: Buffer.from('AccountResourceInsufficient error').toString('hex') } });
    expect(first).toMatchObject({ state: 'pending', broadcast_at: null });
    const refusals = () => lines.filter((line) => line.includes('payout broadcast refused') && line.includes('BANDWITH_ERROR: AccountResourceInsufficient error'));
    expect(refusals()).toHaveLength(1);

    // Not sent again (it would be refused again): it expires unincluded; once it can never be included it goes back to the queue and waits.
    const broadcasts = node.broadcasts.length;
    while (node.solid.timestamp <= first!.expires_at!.getTime()) {
      node.produceBlocks(5);
      await round.round();
    }
    node.produceBlocks(UNKNOWN_AGAIN_AFTER_BLOCKS);
    await round.round();
    expect(node.broadcasts.length).toBe(broadcasts);
    expect(refusals()).toHaveLength(1);
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ tx_hash: first!.tx_hash, state: 'dropped' })]);
    expect(await read(uuid)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    const awaited = (await t.db.query<{ since: Date | null }>('SELECT funds_awaited_since AS since FROM withdrawals WHERE uuid = $1', [uuid]))[0]!.since;
    expect(awaited).toBeInstanceOf(Date);
    expect(await gauge('waiting_for_funds')).toBe(1);
    expect(lines.some((line) => line.includes(uuid) && line.includes(`payout waits: the hot wallet holds 0 sun of TRX, less than the fee limit of ${FEE_LIMIT} sun`))).toBe(true);

    // The operator tops the wallet up: paid once, its bandwidth burnt from the TRX.
    node.setTrxBalance(wallet.address, BigInt(FEE_LIMIT));
    await round.round();
    const [, paid] = await transactions(uuid);
    expect(node.broadcasts.at(-1)).toEqual({ txID: paid!.tx_hash, answer: { result: true, txid: paid!.tx_hash } });
    expect(await gauge('waiting_for_funds')).toBe(0);
    solidify();
    await round.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE', txId: paid!.tx_hash });
    expect(node.tokenBalance(to)).toBe(7_000_000n);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 7_000_000n);
    expect(node.trxBalance(wallet.address)).toBe(BigInt(FEE_LIMIT) - 345_000n - BigInt(TRANSFER_ENERGY.toNewHolder * 210));
  });

  it.each([
    ['REVERT', {}],
    ['OUT_OF_ENERGY', { feeLimitSun: 5_000_000 }], // 5 TRX buys 23,809 energy; the transfer needs 130,285
  ] as const)('fails a payout whose transfer failed on chain (%s): FAILED with its reason, the merchant given its balance back', async (result, overrides) => {
    const to = destination();
    const uuid = await ask(20, to);
    expect(await tronBalance()).toMatchObject({ available: 79_000_000, held: 21_000_000 });
    if (result === 'REVERT') node.revertNextBroadcast();
    const round = payer(overrides);
    await round.round();
    const [sent] = await transactions(uuid);
    solidify();
    await round.round();

    const failed = await read(uuid);
    expect(failed).toMatchObject({ status: 'FAILED', txId: sent!.tx_hash });
    expect(failed.failureReason).toBe(`Its transfer ${sent!.tx_hash} failed on chain (${result}); nothing was paid.`);
    expect(await transactions(uuid)).toEqual([expect.objectContaining({ state: 'failed' })]);
    expect(await tronBalance()).toMatchObject({ available: 100_000_000, held: 0, withdrawn: 0 });
    expect(node.tokenBalance(to)).toBe(0n);
    expect(await counter('failed')).toBe(1);
    // Final: never sent again.
    const broadcasts = node.broadcasts.length;
    await round.round();
    expect(node.broadcasts.length).toBe(broadcasts);
  });

  it('waits while the solidified token balance, less the payouts out, does not cover it (funds_awaited_since, a metric), and pays once funded', async () => {
    node.setTokenBalance(wallet.address, 20_000_000n);
    solidify();
    const [toA, toB] = [destination(), destination()];
    const a = await ask(12.5, toA);
    const b = await ask(12.5, toB);
    const round = payer();
    await round.round();
    // A takes 12.5 of the 20: B waits.
    expect(await read(a)).toMatchObject({ stage: 'sent' });
    expect(await read(b)).toMatchObject({ stage: 'queued' });
    const awaited = async () => (await t.db.query<{ since: Date | null }>('SELECT funds_awaited_since AS since FROM withdrawals WHERE uuid = $1', [b]))[0]!.since;
    expect(await awaited()).toBeInstanceOf(Date);
    expect(await gauge('waiting_for_funds')).toBe(1);
    expect(await gauge('queued')).toBe(1);
    expect(await gauge('in_flight')).toBe(1);
    expect(lines.some((line) => line.includes(b) && line.includes('payout waits: the hot wallet holds 7.5 USDT beyond the payouts out'))).toBe(true);

    // The operator tops the wallet up by 5: counted once solidified (A not in a block meanwhile).
    node.setTokenBalance(wallet.address, node.tokenBalance(wallet.address) + 5_000_000n);
    node.produceBlocks(1, { include: false });
    await round.round();
    expect(await read(b)).toMatchObject({ stage: 'queued' });
    expect(await transactions(b)).toEqual([]);
    node.produceBlocks(SOLID_LAG, { include: false });
    // A is included now, not solidified: the solidified 25 less A's 12.5 covers B (the head's 12.5 less A's would not).
    node.produceBlocks(1);
    await round.round();
    expect(await read(a)).toMatchObject({ status: 'PENDING', stage: 'sent' });
    expect(await read(b)).toMatchObject({ stage: 'sent' });
    expect(await awaited()).toBeNull();
    expect(await gauge('waiting_for_funds')).toBe(0);
    solidify();
    await round.round();
    expect(await read(a)).toMatchObject({ status: 'DONE' });
    expect(await read(b)).toMatchObject({ status: 'DONE' });
    expect([node.tokenBalance(toA), node.tokenBalance(toB), node.tokenBalance(wallet.address)]).toEqual([12_500_000n, 12_500_000n, 0n]);
  });

  it('waits while the hot wallet holds less TRX than the fee limit, pays once it has it, and fails one never covered within PAYOUT_FUNDS_WAIT_HOURS', async () => {
    node.setTrxBalance(wallet.address, BigInt(FEE_LIMIT) - 1n);
    const to = destination();
    const uuid = await ask(3, to);
    const round = payer();
    await round.round();
    expect(await read(uuid)).toMatchObject({ stage: 'queued' });
    expect(await gauge('waiting_for_funds')).toBe(1);
    expect(lines.some((line) => line.includes(uuid) && line.includes(`less than the fee limit of ${FEE_LIMIT} sun`))).toBe(true);
    node.setTrxBalance(wallet.address, BigInt(FEE_LIMIT));
    await round.round();
    solidify();
    await round.round();
    expect(await read(uuid)).toMatchObject({ status: 'DONE' });
    expect(node.tokenBalance(to)).toBe(3_000_000n);

    // Never covered: it waits; past PAYOUT_FUNDS_WAIT_HOURS (by the database's clock: a payer allowing 0 hours) it is FAILED, its hold released.
    node.setTokenBalance(wallet.address, 0n);
    solidify();
    const never = await ask(5, destination());
    await round.round();
    await round.round();
    expect(await read(never)).toMatchObject({ status: 'PENDING', stage: 'queued' });
    await payer({ fundsWaitHours: 0 }).round();
    expect(await read(never)).toMatchObject({ status: 'FAILED', failureReason: "The platform's hot wallet did not cover it within 0 hours; nothing was paid." });
    expect(await tronBalance()).toMatchObject({ held: 0, withdrawn: 4_000_000 });
  });

  it('changes nothing while the node is down for a round, then carries on and pays each once', async () => {
    const [toA, toB] = [destination(), destination()];
    const a = await ask(4, toA);
    await payer().round();
    const b = await ask(6, toB);
    const state = async () => ({
      withdrawals: await t.db.query('SELECT uuid, status, stage, tx_id, funds_awaited_since, updated_at FROM withdrawals ORDER BY uuid'),
      transactions: await t.db.query('SELECT * FROM payout_transactions ORDER BY id'),
      entries: await t.count('ledger_entries'),
      events: await t.count('callback_outbox'),
    });
    const before = await state();
    const calls = node.calls.length;
    node.setDown(true);
    await expect(payer().round()).rejects.toThrow(/^\/wallet\/getnowblock: connection failed/);
    node.setDown(false);
    expect(await state()).toEqual(before);
    expect(node.calls.length).toBe(calls);

    await payer().round();
    expect(await read(b)).toMatchObject({ stage: 'sent' });
    solidify();
    await payer().round();
    expect(await read(a)).toMatchObject({ status: 'DONE' });
    expect(await read(b)).toMatchObject({ status: 'DONE' });
    expect([node.tokenBalance(toA), node.tokenBalance(toB)]).toEqual([4_000_000n, 6_000_000n]);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 10_000_000n);
  });

  it("without a hot wallet, follows the operator's recorded transactions: DONE on its transfer from any address, queued again when it failed", async () => {
    const operator = new HotWallet('Tron', sha256(new TextEncoder().encode(`the operator's own wallet ${kind}`)));
    node.setTokenBalance(operator.address, 100_000_000n);
    const [toA, toB] = [destination(), destination()];
    const a = await ask(8, toA);
    const b = await ask(2, toB);
    const pay = async (uuid: string, to: string, amount: bigint) => {
      const referenceBlock = { number: node.head.number, hash: node.head.blockID, timestamp: node.head.timestamp };
      const tx = signTrc20Transfer(operator, { referenceBlock, expiration: referenceBlock.timestamp + 60_000, feeLimit: FEE_LIMIT, token: USDT, to, amount });
      await fetch(`${node.url}/wallet/broadcasttransaction`, { method: 'POST', body: JSON.stringify(tx) });
      // What `withdrawals record-tx` writes: the operator's txId, no bytes, no sender.
      expect(await recordOperatorPayment(t.db, { uuid, network: 'Tron' }, tx.txID)).toBe('recorded');
      return tx.txID;
    };
    const paidA = await pay(a, toA, 8_000_000n);
    node.revertNextBroadcast();
    const paidB = await pay(b, toB, 2_000_000n);
    const round = payer({ wallet: undefined });
    const broadcasts = node.broadcasts.length;
    await round.round();
    expect(await read(a)).toMatchObject({ status: 'PENDING', stage: 'sent', txId: paidA });
    solidify();
    await round.round();
    expect(await read(a)).toMatchObject({ status: 'DONE', txId: paidA });
    const requeued = await read(b);
    expect(requeued).toMatchObject({ status: 'PENDING', stage: 'queued' });
    expect(requeued.txId).toBeUndefined();
    expect(await transactions(b)).toEqual([expect.objectContaining({ tx_hash: paidB, payer: 'operator', state: 'failed' })]);
    // It signed nothing, sent nothing and asked no balance.
    expect(node.broadcasts.length).toBe(broadcasts);
    expect(node.calls.filter((c) => c.path === '/wallet/getaccount' || c.path === '/wallet/triggerconstantcontract')).toEqual([]);
    expect(node.tokenBalance(toA)).toBe(8_000_000n);
  });
});

describe('the Tron payer wired into the jobs (TRON_API_URL, TRON_API_KEY, TRON_PAYOUT_KEY_FILE)', () => {
  let t: TestPlatform | undefined;
  let node: StandIn | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    await node?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("pays a withdrawal asked for through the API by itself, under the lease payout:Tron, with the hot wallet read from its key file and TronGrid's API key on every request", async () => {
    const apiKey = randomBytes(16).toString('hex');
    // The default token (USDT_CONTRACTS.Tron); a node that answers only requests carrying the key (401 otherwise).
    node = await startTronNode({ token: USDT, apiKey });
    const funded = await fundedTronWallet(node, 'tron-payer-jobs-', SOLID_LAG + 1);
    dir = funded.dir;
    const { keyFile } = funded;
    t = await livePlatform(DATABASES[0]!, { TRON_API_URL: node.url, TRON_API_KEY: apiKey, TRON_PAYOUT_KEY_FILE: keyFile });
    await t.fund('Tron', 30_000_000n);
    await t.platform.startJobs();
    const to = toTronAddress(sha256(new TextEncoder().encode(`jobs destination ${Date.now()}`)).subarray(0, 20));
    const body = JSON.stringify({ externalId: 'tron-jobs-1', blockchain: 'Tron', currency: 'USDT', amount: 10, destinationAddress: to });
    const created = (await (await t.signed('POST', '/partner/v1/platforms/withdrawals', { body, headers: JSON_TYPE })).json()) as Withdrawal;
    const read = async () => (await t!.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: created.uuid } } })).data!;
    await expect.poll(async () => (await read()).stage, { timeout: 20_000, interval: 200 }).toBe('sent');
    // The gauges are set at the end of the round that sent it.
    const metrics = async () => (await fetch(`${t!.baseUrl}/metrics`)).text();
    await expect.poll(metrics, { timeout: 10_000, interval: 200 }).toMatch(/^partner_payouts\{network="Tron",state="in_flight"\} 1$/m);
    expect(await metrics()).toMatch(/^partner_job_leader\{job="payout:Tron"\} 1$/m);
    expect(await metrics()).toMatch(/^partner_payout_hot_wallet_balance\{network="Tron",asset="token"\} 50000000$/m);
    node.produceBlocks(SOLID_LAG + 1);
    await expect.poll(async () => (await read()).status, { timeout: 20_000, interval: 200 }).toBe('DONE');
    expect(node.tokenBalance(to)).toBe(10_000_000n);
    expect((await read()).txId).toBe(node.broadcasts.find((b) => b.answer !== 'lost')!.txID);
    expect(await checkLedger(t.db)).toMatchObject({ problems: [] });
    // Every request carried the key; none was refused, and no log line shows it.
    expect(node.calls.length).toBeGreaterThan(0);
    expect(node.calls.filter((call) => call.apiKey !== apiKey)).toEqual([]);
    expect(t.logs().filter((line) => line.includes(apiKey))).toEqual([]);
  });
});
