// Issue 4 end to end: the real `partner-api serve` process in live mode, scanning a real local EVM
// chain (anvil) for Transfer logs of a 6-decimal USDT, for Ethereum and — through the address
// conversion, on the same chain — for Tron; confirmed deposits credited exactly once, the order
// lifecycle (NEW → DONE, NEW → EXPIRED, EXPIRED → DONE), signed callbacks to a loopback receiver
// (each event once, by webhook-id), and a reorg that removes a transfer before its confirmations.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  verifyCallback,
  type CreatedDepositOrder,
  type DepositOrder,
  type DepositOrderCallback,
  type OrderStatus,
  type PartnerClient,
} from '../../../src/client/index.js';
import { createAddressDeriver, tronAddressToId } from '../../../src/server/addresses/derivation.js';
import type { Network } from '../../../src/server/shared/network.js';
import { startChain, type Chain, type Hex, type Receipt, type Token } from '../../support/chain.js';
import { runCommand } from '../../support/cli.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';
import type { Started } from '../../support/processes.js';
import { startReceiver, type Delivery, type Receiver } from '../../support/receiver.js';
import { orderRequest } from '../../fixtures/orders.js';
import { copiedDataDirectory } from '../../support/database-templates.js';


const CONFIRMATIONS = 3;
const LIFETIME_SECONDS = 10;
const MIN: Record<Network, number> = { Ethereum: 10_000_000, Tron: 1_000_000 };
/** Bounded waits: generous, for a slow shared machine. */
const WAIT_MS = 30_000;
const POLL_MS = 200;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Merchant {
  apiKey: string;
  apiSecret: string;
  callbackSecret: string;
}

/** What one callback must say (the order's fields are compared with the read endpoint separately). */
interface ExpectedEvent {
  event: 'order.deposit' | 'order.expired';
  status: OrderStatus;
  receivedAmount: number;
  amount?: number;
  txId?: string;
}

describe('issue 4 end to end: the live platform on a local EVM chain', () => {
  let chain: Chain;
  let token: Token;
  let receiver: Receiver;
  let platform: RunningPartnerApi;
  let server: Started | undefined;
  let dataDir: string;
  let merchant: Merchant;
  let client: PartnerClient;
  const xpubs = {} as Record<Network, string>;
  const runId = randomBytes(4).toString('hex');
  /** The funded senders: anvil's default accounts 1..9 (account 0 deployed the token and holds the supply). */
  let senders: Hex[];

  beforeAll(async () => {
    chain = await startChain();
    token = await chain.deployToken();
    senders = chain.accounts.slice(1);
    await token.distribute(senders, 1_000_000_000n); // 1,000 USDT each
    receiver = await startReceiver();

    // Account-level xpubs of a random wallet made for this run (never anvil's, never the test wallet).
    const seed = randomBytes(32);
    xpubs.Ethereum = HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").publicExtendedKey;
    xpubs.Tron = HDKey.fromMasterSeed(seed).derive("m/44'/195'/0'").publicExtendedKey;

    dataDir = copiedDataDirectory('partner-e2e-');
    const startBlock = String(await chain.blockNumber());
    const env: Record<string, string> = {
      PARTNER_API_MODE: 'live',
      PUBLIC_URL: 'https://pay.partner.example',
      HOST: '127.0.0.1',
      DATABASE_URL: '', // never a PostgreSQL server from the caller's environment: PGlite in DATA_DIR
      DATA_DIR: dataDir,
      SECRET_KEY: randomBytes(32).toString('base64'),
      ETHEREUM_XPUB: xpubs.Ethereum,
      TRON_XPUB: xpubs.Tron,
      ETHEREUM_RPC_URL: chain.rpcUrl,
      TRON_RPC_URL: chain.rpcUrl,
      ETHEREUM_TOKEN_CONTRACT: token.address,
      TRON_TOKEN_CONTRACT: token.address,
      ETHEREUM_CONFIRMATIONS: String(CONFIRMATIONS),
      TRON_CONFIRMATIONS: String(CONFIRMATIONS),
      ETHEREUM_POLL_SECONDS: '1',
      TRON_POLL_SECONDS: '1',
      ETHEREUM_START_BLOCK: startBlock,
      TRON_START_BLOCK: startBlock,
      ALLOW_PRIVATE_CALLBACKS: 'true',
      ORDER_LIFETIME_SECONDS: String(LIFETIME_SECONDS),
      EXPIRY_INTERVAL_SECONDS: '1',
      CALLBACK_TIMEOUT_SECONDS: '5',
      LOG_LEVEL: 'warn',
      RATE_LIMIT: '100000/60',
    };

    // Live mode prints no credentials: the operator creates the merchant first, on the same data directory.
    const created = await runCommand(['merchants', 'create', '--name', 'e2e', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    merchant = JSON.parse(created.stdout) as Merchant;
    expect(merchant.apiKey).toMatch(/^pk_live_/);

    platform = await startPartnerApi(env);
    server = platform.process;
    expect(server.output()).toContain('(live mode)');
    expect(platform.sandbox).toBeUndefined(); // no sandbox credentials in live mode
    client = platform.client(merchant);
  });

  afterAll(async () => {
    await server?.stop(); // SIGTERM: graceful shutdown, with the scanners and the dispatcher running
    await chain?.stop();
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (server) expect(server.process.exitCode, `server exit:\n${serverLog()}`).toBe(0);
  });

  // ---- helpers ----

  /** The last lines the server wrote (its warnings), for failure messages. */
  const serverLog = () => (server?.output() ?? '').split('\n').slice(-15).join('\n');

  const callbackPath = (label: string) => `/ok/${runId}/${label}`;

  async function createOrder(blockchain: Network, label: string): Promise<CreatedDepositOrder> {
    const { data, error, response } = await client.POST('/partner/v1/platforms/orders', {
      body: orderRequest(`${runId}-${label}`, { blockchain, customerId: `cust-${label}`, callbackUrl: receiver.url + callbackPath(label) }),
    });
    if (response.status !== 201 || !data) throw new Error(`create ${label}: ${response.status} ${JSON.stringify(error)}`);
    expect(data).toMatchObject({ blockchain, status: 'NEW', minAmount: MIN[blockchain] });
    return data;
  }

  async function read(uuid: string): Promise<DepositOrder> {
    const { data, error, response } = await client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } });
    if (!data) throw new Error(`read ${uuid}: ${response.status} ${JSON.stringify(error)}`);
    return data;
  }

  /** Polls the read endpoint until `done` holds (bounded); the order as last read. */
  async function waitForOrder(uuid: string, done: (order: DepositOrder) => boolean, what: string, timeoutMs = WAIT_MS): Promise<DepositOrder> {
    const end = Date.now() + timeoutMs;
    let last = await read(uuid);
    while (!done(last)) {
      if (Date.now() > end) {
        throw new Error(`order ${uuid}: ${what} not reached within ${timeoutMs} ms; last read ${JSON.stringify({ status: last.status, receivedAmount: last.receivedAmount })}\nserver:\n${serverLog()}`);
      }
      await sleep(POLL_MS);
      last = await read(uuid);
    }
    return last;
  }

  /** The 0x-hex 20-byte account a transfer to this order's address pays (Tron: the id behind its T-address). */
  function payee(order: CreatedDepositOrder): Hex {
    return order.blockchain === 'Tron' ? (`0x${Buffer.from(tronAddressToId(order.address)).toString('hex')}` as Hex) : (order.address.toLowerCase() as Hex);
  }

  /** The txId a callback carries for a chain transaction: 0x-hex on Ethereum, bare hex on Tron. */
  function txId(network: Network, hash: Hex): string {
    return network === 'Tron' ? hash.slice(2) : hash;
  }

  async function pay(from: Hex, order: CreatedDepositOrder, amount: number): Promise<Hex> {
    return token.transfer(from, payee(order), BigInt(amount));
  }

  /** Sends several transfers into ONE block (automine off, send all, mine 1) and checks they landed together. */
  async function payInOneBlock(transfers: { from: Hex; order: CreatedDepositOrder; amount: number }[]): Promise<Receipt[]> {
    await chain.setAutomine(false);
    let hashes: Hex[];
    try {
      hashes = [];
      for (const t of transfers) hashes.push(await pay(t.from, t.order, t.amount));
      await chain.mine(1);
    } finally {
      await chain.setAutomine(true);
    }
    const receipts = await Promise.all(hashes.map((hash) => chain.waitForReceipt(hash)));
    expect(receipts.map((r) => r.status)).toEqual(receipts.map(() => '0x1'));
    expect(new Set(receipts.map((r) => r.blockNumber)).size).toBe(1);
    return receipts;
  }

  function deliveriesFor(label: string): Delivery[] {
    return receiver.deliveries.filter((d) => d.path === callbackPath(label));
  }

  /**
   * Orders of a scanned network expire by chain time: once the clock is past their expiredAt, mines
   * a block stamped after it and confirms it. (anvil stamps blocks with the clock, less the time an
   * evm_revert took back: after the reorg test's revert its chain runs behind, so the stamp is set.)
   */
  async function mineUntilExpired(orders: readonly { expiredAt: string }[]): Promise<void> {
    const last = Math.max(...orders.map((o) => Date.parse(o.expiredAt.replace(' ', 'T') + 'Z')));
    await sleep(Math.max(0, last + 1000 - Date.now()));
    const head = (await chain.rpc('eth_getBlockByNumber', ['latest', false])) as { timestamp: string };
    const after = Math.floor(last / 1000) + 1;
    if (Number(head.timestamp) < after) await chain.rpc('evm_setNextBlockTimestamp', [after]);
    await chain.mine(CONFIRMATIONS);
  }

  const webhookId = (d: Delivery) => String(d.headers['webhook-id']);

  /** Waits for `count` deliveries to an order's callback URL, then verifies each with the client's verifier. */
  async function verifiedCallbacks(label: string, count: number): Promise<{ id: string; event: DepositOrderCallback }[]> {
    await receiver.waitFor(count, (d) => d.path === callbackPath(label), WAIT_MS).catch((error: Error) => {
      throw new Error(`${label}: ${error.message}\nserver:\n${serverLog()}`);
    });
    return Promise.all(deliveriesFor(label).map(async (d) => ({ id: webhookId(d), event: await verifyCallback(d.body, d.headers, merchant.callbackSecret) })));
  }

  /** Each expected event exactly once, by webhook-id, with the right fields (in any arrival order). */
  function expectEvents(label: string, callbacks: { id: string; event: DepositOrderCallback }[], expected: ExpectedEvent[]) {
    expect(new Set(callbacks.map((c) => c.id)).size, `${label}: distinct webhook-ids`).toBe(callbacks.length);
    const key = (e: ExpectedEvent) => `${e.event}|${e.txId ?? ''}|${e.receivedAmount}`;
    const seen = callbacks
      .map(({ event }): ExpectedEvent => {
        const { event: type, status, receivedAmount, amount, txId } = event;
        return { event: type, status, receivedAmount, ...(amount !== undefined ? { amount } : {}), ...(txId !== undefined ? { txId } : {}) };
      })
      .sort((a, b) => key(a).localeCompare(key(b)));
    expect(seen, `${label}: callbacks`).toEqual([...expected].sort((a, b) => key(a).localeCompare(key(b))));
  }

  /** The order fields of a callback: everything but the event's own fields. */
  function orderPart(event: DepositOrderCallback): Omit<DepositOrder, 'paymentUrl'> {
    const { event: _event, amount: _amount, txId: _txId, occurredAt: _occurredAt, sequence: _sequence, ...order } = event;
    return order;
  }

  // ---- the tests ----

  it('credits confirmed transfers exactly once, runs the order lifecycle and calls back once per event', async () => {
    const networks: Network[] = ['Ethereum', 'Tron'];
    const [s1, s2, s3, s4, s5, s6, s7, s8] = senders as [Hex, Hex, Hex, Hex, Hex, Hex, Hex, Hex];

    // Per network: full (one payment ≥ min), pair (two transfers in one block summing to min or more),
    // batch (two Transfer logs of ONE transaction: same tx hash, distinct log indexes, both credited),
    // under (below min: stays NEW, then EXPIRED), late (below min, EXPIRED, then a late transfer lifts it to DONE).
    const amounts = {
      Ethereum: { full: 12_345_678, pair: [4_000_000, 6_000_000], batch: [3_000_000, 7_000_000], under: 9_999_999, latePre: 2_500_000, lateTop: 7_500_001 },
      Tron: { full: 1_000_000, pair: [600_000, 700_001], batch: [400_000, 600_000], under: 999_999, latePre: 250_000, lateTop: 750_000 },
    } as const;

    const orders = {} as Record<Network, Record<'full' | 'pair' | 'batch' | 'under' | 'late', CreatedDepositOrder>>;
    for (const network of networks) {
      const n = network.toLowerCase();
      orders[network] = {
        full: await createOrder(network, `${n}-full`),
        pair: await createOrder(network, `${n}-pair`),
        batch: await createOrder(network, `${n}-batch`),
        under: await createOrder(network, `${n}-under`),
        late: await createOrder(network, `${n}-late`),
      };
    }

    // Fresh addresses from this run's xpubs, in each network's form.
    for (const network of networks) {
      const derive = createAddressDeriver(network, xpubs[network]);
      const ours = new Set(Array.from({ length: 64 }, (_, i) => derive(i)));
      const addresses = Object.values(orders[network]).map((o) => o.address);
      expect(new Set(addresses).size).toBe(addresses.length);
      for (const address of addresses) {
        expect(ours.has(address), `${address} derived from the ${network} xpub`).toBe(true);
        expect(address).toMatch(network === 'Tron' ? /^T[1-9A-HJ-NP-Za-km-z]{33}$/ : /^0x[0-9a-fA-F]{40}$/);
      }
    }

    // (a) one full payment each, (c) one below-min payment each, and the late orders' first part.
    const E = orders.Ethereum;
    const T = orders.Tron;
    const fullEth = await pay(s1, E.full, amounts.Ethereum.full);
    const fullTron = await pay(s2, T.full, amounts.Tron.full);
    const underEth = await pay(s3, E.under, amounts.Ethereum.under);
    const underTron = await pay(s4, T.under, amounts.Tron.under);
    const latePreEth = await pay(s5, E.late, amounts.Ethereum.latePre);
    const latePreTron = await pay(s6, T.late, amounts.Tron.latePre);
    // (b) two transfers to the same order in ONE block, for both networks (four transfers, one block).
    const pairReceipts = await payInOneBlock([
      { from: s7, order: E.pair, amount: amounts.Ethereum.pair[0] },
      { from: s8, order: E.pair, amount: amounts.Ethereum.pair[1] },
      { from: s1, order: T.pair, amount: amounts.Tron.pair[0] },
      { from: s2, order: T.pair, amount: amounts.Tron.pair[1] },
    ]);
    const [pairEth1, pairEth2, pairTron1, pairTron2] = pairReceipts.map((r) => r.transactionHash) as [Hex, Hex, Hex, Hex];
    // One transaction, four Transfer logs: two to each network's batch order (exactly once is per log, not per tx).
    const batchTx = await token.transferBatch(s3, [
      { to: payee(E.batch), amount: BigInt(amounts.Ethereum.batch[0]) },
      { to: payee(T.batch), amount: BigInt(amounts.Tron.batch[0]) },
      { to: payee(E.batch), amount: BigInt(amounts.Ethereum.batch[1]) },
      { to: payee(T.batch), amount: BigInt(amounts.Tron.batch[1]) },
    ]);
    // Nothing counts before its confirmations: the newest block needs CONFIRMATIONS − 1 more on top.
    await chain.mine(CONFIRMATIONS);

    const done = await Promise.all([
      waitForOrder(E.full.uuid, (o) => o.status === 'DONE', 'Ethereum full payment DONE'),
      waitForOrder(T.full.uuid, (o) => o.status === 'DONE', 'Tron full payment DONE'),
      waitForOrder(E.pair.uuid, (o) => o.status === 'DONE', 'Ethereum pair DONE'),
      waitForOrder(T.pair.uuid, (o) => o.status === 'DONE', 'Tron pair DONE'),
      waitForOrder(E.batch.uuid, (o) => o.status === 'DONE', 'Ethereum batch DONE'),
      waitForOrder(T.batch.uuid, (o) => o.status === 'DONE', 'Tron batch DONE'),
    ]);
    expect(done.map((o) => o.receivedAmount)).toEqual([
      amounts.Ethereum.full,
      amounts.Tron.full,
      amounts.Ethereum.pair[0] + amounts.Ethereum.pair[1],
      amounts.Tron.pair[0] + amounts.Tron.pair[1],
      amounts.Ethereum.batch[0] + amounts.Ethereum.batch[1],
      amounts.Tron.batch[0] + amounts.Tron.batch[1],
    ]);

    // (c) below minAmount: credited, still NEW (the order's lifetime is 10 s: this is well before it).
    const credited = await Promise.all(
      [
        [E.under, amounts.Ethereum.under],
        [T.under, amounts.Tron.under],
        [E.late, amounts.Ethereum.latePre],
        [T.late, amounts.Tron.latePre],
      ].map(([order, amount]) => waitForOrder((order as CreatedDepositOrder).uuid, (o) => o.receivedAmount === amount, `receivedAmount ${amount as number}`)),
    );
    expect(credited.map((o) => o.status)).toEqual(['NEW', 'NEW', 'NEW', 'NEW']);

    // ... then EXPIRED once the scanned chain has passed expiredAt, each with an order.expired callback.
    await mineUntilExpired([E.under, T.under, E.late, T.late]);
    const expired = await Promise.all(
      [E.under, T.under, E.late, T.late].map((order) => waitForOrder(order.uuid, (o) => o.status === 'EXPIRED', 'EXPIRED')),
    );
    expect(expired.map((o) => o.receivedAmount)).toEqual([amounts.Ethereum.under, amounts.Tron.under, amounts.Ethereum.latePre, amounts.Tron.latePre]);
    await Promise.all(
      ['ethereum-late', 'tron-late'].map((label) => receiver.waitFor(1, (d) => d.path === callbackPath(label) && JSON.parse(d.body).event === 'order.expired', WAIT_MS)),
    );

    // (d) a late transfer lifts an EXPIRED order to DONE: a late payment is honoured.
    const lateEth = await pay(s3, E.late, amounts.Ethereum.lateTop);
    const lateTron = await pay(s4, T.late, amounts.Tron.lateTop);
    await chain.mine(CONFIRMATIONS);
    const late = await Promise.all([
      waitForOrder(E.late.uuid, (o) => o.status === 'DONE', 'Ethereum late payment DONE'),
      waitForOrder(T.late.uuid, (o) => o.status === 'DONE', 'Tron late payment DONE'),
    ]);
    expect(late.map((o) => o.receivedAmount)).toEqual([
      amounts.Ethereum.latePre + amounts.Ethereum.lateTop,
      amounts.Tron.latePre + amounts.Tron.lateTop,
    ]);

    // The callbacks: one per credited transfer and one per expiry, each once by webhook-id, signed.
    const expected: Record<string, ExpectedEvent[]> = {};
    for (const network of networks) {
      const n = network.toLowerCase();
      const a = amounts[network];
      const tx = (hash: Hex) => txId(network, hash);
      const [pair1, pair2] = network === 'Ethereum' ? [pairEth1, pairEth2] : [pairTron1, pairTron2];
      expected[`${n}-full`] = [{ event: 'order.deposit', status: 'DONE', amount: a.full, receivedAmount: a.full, txId: tx(network === 'Ethereum' ? fullEth : fullTron) }];
      expected[`${n}-pair`] = [
        // Credited in log order: the first leaves the order NEW, the second reaches minAmount.
        { event: 'order.deposit', status: 'NEW', amount: a.pair[0], receivedAmount: a.pair[0], txId: tx(pair1) },
        { event: 'order.deposit', status: 'DONE', amount: a.pair[1], receivedAmount: a.pair[0] + a.pair[1], txId: tx(pair2) },
      ];
      expected[`${n}-batch`] = [
        { event: 'order.deposit', status: 'NEW', amount: a.batch[0], receivedAmount: a.batch[0], txId: tx(batchTx) },
        { event: 'order.deposit', status: 'DONE', amount: a.batch[1], receivedAmount: a.batch[0] + a.batch[1], txId: tx(batchTx) },
      ];
      expected[`${n}-under`] = [
        { event: 'order.deposit', status: 'NEW', amount: a.under, receivedAmount: a.under, txId: tx(network === 'Ethereum' ? underEth : underTron) },
        { event: 'order.expired', status: 'EXPIRED', receivedAmount: a.under },
      ];
      expected[`${n}-late`] = [
        { event: 'order.deposit', status: 'NEW', amount: a.latePre, receivedAmount: a.latePre, txId: tx(network === 'Ethereum' ? latePreEth : latePreTron) },
        { event: 'order.expired', status: 'EXPIRED', receivedAmount: a.latePre },
        { event: 'order.deposit', status: 'DONE', amount: a.lateTop, receivedAmount: a.latePre + a.lateTop, txId: tx(network === 'Ethereum' ? lateEth : lateTron) },
      ];
    }
    const received: Record<string, { id: string; event: DepositOrderCallback }[]> = {};
    for (const [label, events] of Object.entries(expected)) received[label] = await verifiedCallbacks(label, events.length);
    await sleep(2_000); // a duplicate (or an extra event) would arrive meanwhile
    for (const [label, events] of Object.entries(expected)) {
      expect(deliveriesFor(label), `${label}: no further delivery`).toHaveLength(events.length);
      expectEvents(label, received[label]!, events);
    }
    // Tron tx ids are bare hex, Ethereum's 0x-hex.
    expect(received['tron-full']![0]!.event.txId).toMatch(/^[0-9a-f]{64}$/);
    expect(received['ethereum-full']![0]!.event.txId).toMatch(/^0x[0-9a-f]{64}$/);

    // Each callback body is the order as the read endpoint returns it (at the time of the event):
    // the last event of each order equals the order as it reads now.
    for (const network of networks) {
      for (const [kind, order] of Object.entries(orders[network])) {
        const label = `${network.toLowerCase()}-${kind}`;
        // Delivered in sequence order, numbered 1, 2, …; the last is the latest.
        const events = received[label]!.map((c) => c.event);
        expect(events.map((e) => e.sequence), label).toEqual(events.map((_, i) => i + 1));
        const last = events.at(-1)!;
        // The read carries the payment page's link and the unconfirmed transfers too, which callbacks leave out.
        const { paymentUrl: _paymentUrl, unconfirmedDeposits, ...now } = await read(order.uuid);
        expect(orderPart(last), label).toEqual(now);
        expect(unconfirmedDeposits, label).toEqual([]); // every transfer confirmed and credited
        expect(last.uuid).toBe(order.uuid);
      }
    }
    const final = await Promise.all([E.full, E.pair, E.batch, E.under, E.late, T.full, T.pair, T.batch, T.under, T.late].map((o) => read(o.uuid)));
    expect(final.map((o) => [o.status, o.receivedAmount])).toEqual([
      ['DONE', amounts.Ethereum.full],
      ['DONE', amounts.Ethereum.pair[0] + amounts.Ethereum.pair[1]],
      ['DONE', amounts.Ethereum.batch[0] + amounts.Ethereum.batch[1]],
      ['EXPIRED', amounts.Ethereum.under],
      ['DONE', amounts.Ethereum.latePre + amounts.Ethereum.lateTop],
      ['DONE', amounts.Tron.full],
      ['DONE', amounts.Tron.pair[0] + amounts.Tron.pair[1]],
      ['DONE', amounts.Tron.batch[0] + amounts.Tron.batch[1]],
      ['EXPIRED', amounts.Tron.under],
      ['DONE', amounts.Tron.latePre + amounts.Tron.lateTop],
    ]);
    // No webhook-id was delivered twice, across every order of the run.
    const ids = receiver.deliveries.map(webhookId);
    expect(new Set(ids).size).toBe(ids.length);
  }, 180_000);

  it('never credits a transfer that a reorg removed before its confirmations, and credits the chain that replaced it', async () => {
    const [s1, s2, s3, s4] = senders.slice(4) as [Hex, Hex, Hex, Hex];
    // Victims receive only the transfer the reorg removes; controls receive a transfer after the reorg.
    const victimEth = await createOrder('Ethereum', 'reorg-eth-victim');
    const victimTron = await createOrder('Tron', 'reorg-tron-victim');
    const controlEth = await createOrder('Ethereum', 'reorg-eth-control');
    const controlTron = await createOrder('Tron', 'reorg-tron-control');

    const snapshot = await chain.snapshot();
    const snapshotHead = await chain.blockNumber();
    // Both doomed transfers in one block N; then one block on top: 2 confirmations of the 3 needed
    // (the scanner counts blocks ≤ head − confirmations + 1 = N − 1).
    const doomed = await payInOneBlock([
      { from: s1, order: victimEth, amount: 50_000_000 },
      { from: s2, order: victimTron, amount: 5_000_000 },
    ]);
    const doomedBlock = BigInt(doomed[0]!.blockNumber);
    expect(doomedBlock).toBe(snapshotHead + 1n);
    await chain.mine(CONFIRMATIONS - 2);
    expect(await chain.blockNumber()).toBe(doomedBlock + BigInt(CONFIRMATIONS) - 2n);
    // The scanners poll every second: for a few polls the unconfirmed transfers stay uncredited.
    const watchUntil = Date.now() + 2_000;
    while (Date.now() < watchUntil) {
      const reads = await Promise.all([read(victimEth.uuid), read(victimTron.uuid)]);
      expect(reads.map((o) => o.receivedAmount)).toEqual([0, 0]);
      await sleep(POLL_MS);
    }

    // The reorg: the doomed block is gone, and the chain grows well past the confirmations without it.
    await chain.revert(snapshot);
    expect(await chain.blockNumber()).toBe(snapshotHead);
    for (const r of doomed) expect(await chain.rpc('eth_getTransactionReceipt', [r.transactionHash])).toBeNull();
    await chain.mine(2 * CONFIRMATIONS);

    // A transfer after the reorg, at a higher block than the doomed one, reaches its confirmations
    // and IS credited: once it is, the scanners have scanned past the doomed block's height.
    const controlEthTx = await pay(s3, controlEth, 11_000_000);
    const controlTronTx = await pay(s4, controlTron, 1_100_000);
    await chain.mine(CONFIRMATIONS);
    const controls = await Promise.all([
      waitForOrder(controlEth.uuid, (o) => o.status === 'DONE', 'Ethereum control credited'),
      waitForOrder(controlTron.uuid, (o) => o.status === 'DONE', 'Tron control credited'),
    ]);
    expect(controls.map((o) => o.receivedAmount)).toEqual([11_000_000, 1_100_000]);

    const victims = await Promise.all([read(victimEth.uuid), read(victimTron.uuid)]);
    expect(victims.map((o) => [o.status, o.receivedAmount])).toEqual([
      ['NEW', 0],
      ['NEW', 0],
    ]);

    // The controls' deposit callbacks; the victims get only their expiry, with nothing received.
    expectEvents('reorg-eth-control', await verifiedCallbacks('reorg-eth-control', 1), [
      { event: 'order.deposit', status: 'DONE', amount: 11_000_000, receivedAmount: 11_000_000, txId: controlEthTx },
    ]);
    expectEvents('reorg-tron-control', await verifiedCallbacks('reorg-tron-control', 1), [
      { event: 'order.deposit', status: 'DONE', amount: 1_100_000, receivedAmount: 1_100_000, txId: txId('Tron', controlTronTx) },
    ]);
    await mineUntilExpired([victimEth, victimTron]);
    for (const label of ['reorg-eth-victim', 'reorg-tron-victim']) {
      expectEvents(label, await verifiedCallbacks(label, 1), [{ event: 'order.expired', status: 'EXPIRED', receivedAmount: 0 }]);
    }
    await sleep(2_000);
    for (const label of ['reorg-eth-victim', 'reorg-tron-victim', 'reorg-eth-control', 'reorg-tron-control']) {
      expect(deliveriesFor(label), `${label}: no further delivery`).toHaveLength(1);
    }
    const after = await Promise.all([read(victimEth.uuid), read(victimTron.uuid)]);
    expect(after.map((o) => [o.status, o.receivedAmount])).toEqual([
      ['EXPIRED', 0],
      ['EXPIRED', 0],
    ]);
    // No callback anywhere names a removed transaction.
    const doomedIds = doomed.flatMap((r) => [r.transactionHash, r.transactionHash.slice(2)]);
    for (const d of receiver.deliveries) expect(doomedIds).not.toContain(JSON.parse(d.body).txId);
    const ids = receiver.deliveries.map(webhookId);
    expect(new Set(ids).size).toBe(ids.length);
  }, 180_000);

  it('credits a payment mined before expiredAt but confirmed after it: DONE, never EXPIRED first', async () => {
    const sender = senders[8]!;
    const order = await createOrder('Ethereum', 'on-time-late-confirmed');
    const txHash = await pay(sender, order, MIN.Ethereum);
    const receipt = (await chain.rpc('eth_getTransactionReceipt', [txHash])) as { blockNumber: string };
    const block = (await chain.rpc('eth_getBlockByNumber', [receipt.blockNumber, false])) as { timestamp: string };
    const expiredAt = Date.parse(order.expiredAt.replace(' ', 'T') + 'Z');
    expect(Number(block.timestamp) * 1000).toBeLessThan(expiredAt); // mined on time
    // The clock passes expiredAt (the expiry job runs every second) while the payment waits for its confirmations.
    await sleep(expiredAt + 3_000 - Date.now());
    expect(await read(order.uuid)).toMatchObject({ status: 'NEW', receivedAmount: 0 });
    await chain.mine(CONFIRMATIONS);
    await waitForOrder(order.uuid, (o) => o.status === 'DONE', 'on-time payment DONE');
    await sleep(2_000);
    const [delivery, ...more] = await verifiedCallbacks('on-time-late-confirmed', 1);
    expect(more).toHaveLength(0);
    expect(delivery!.event).toMatchObject({ event: 'order.deposit', status: 'DONE', sequence: 1, txId: txHash, receivedAmount: MIN.Ethereum });
    expect(Date.parse(delivery!.event.occurredAt.replace(' ', 'T') + 'Z')).toBe(Number(block.timestamp) * 1000);
  }, 180_000);
});
