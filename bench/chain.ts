// Chain scan and callback dispatch throughput, side by side in one run (npm run bench:chain).
//
// One local anvil chain (test/support/chain.ts) with the 6-decimal test USDT and BENCH_TRANSFERS
// Transfer logs to watched deposit addresses, packed many to a transaction (transferBatch) and many to
// a block (automine off + mine). Then, on each database (PGlite in memory, and PostgreSQL):
//
// 1. BENCH_ADDRESSES watched orders inserted with SQL, half Ethereum and half Tron (address i is
//    Ethereum when i is even, Tron when odd; a Tron deposit's chain-side recipient is its 20-byte id),
//    and the platform's ChainScanner of each network (confirmations 1, startBlock the block before the
//    first transfer, maxAddressesPerQuery 1000) calling scanOnce() until it returns undefined, one
//    network after the other, timed. Checked: one deposit row per transfer, the exact sums per order.
//    Then what a scanOnce that finds nothing costs, inside an anvil snapshot that is reverted: one new
//    empty block (HEAD_ROUNDS times: what a scanner at the head pays every poll) and EMPTY_RANGE empty
//    blocks at once (what bounds catching up through blocks without deposits).
// 2. The order.deposit callbacks that scan wrote to the outbox, pointed at a local receiver
//    (test/support/receiver.ts in a child process of its own, so that the merchant's side does not
//    share the platform's event loop; it answers 200 on /ok) and delivered by
//    CallbackDispatcher.runOnce() until none is due, once at each concurrency of CONCURRENCIES (the
//    outbox reset to pending in between). Checked: every row delivered at its first attempt, the
//    receiver got each webhook-id once.
//
// Setup (anvil, compiling and deploying the token, sending the transfers, deriving the addresses,
// migrating and inserting the orders) is timed and printed but not counted.
//
// 3. The scan of a busy token at 100, 10,000 and 100,000 open orders (bench/chain-busy.ts).
//
//   BENCH_ADDRESSES=10000 BENCH_TRANSFERS=5000 npm run bench:chain   (BENCH_PART=busy or credits: one part)
//   PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL (a schema of its own, dropped at the end);
//   otherwise a throwaway cluster on port 54341 (scripts/postgres-cluster.sh), stopped at the end.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { HDKey } from '@scure/bip32';
import { createAddressDeriver, tronAddressToId } from '../src/server/addresses/derivation.js';
import type { Network } from '../src/server/shared/network.js';
import { CallbackDispatcher } from '../src/server/callbacks/dispatcher.js';
import { ChainScanner } from '../src/server/chain/scanner.js';
import type { ChainConfig } from '../src/server/config.js';
import { openPglite, openPostgres, type Database } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { addressQr } from '../src/server/addresses/qr.js';
import { SecretKeeper } from '../src/server/merchants/secrets.js';
import { startChain, type Chain, type Hex, type Token } from '../test/support/chain.js';
import { startReceiver } from '../test/support/receiver.js';
import { publishResults, startPostgres, type Postgres } from './support.js';
import { benchBusyToken } from './chain-busy.js';

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  const value = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${text}"`);
  return value;
}

const ADDRESSES = positiveInteger('BENCH_ADDRESSES', 10_000);
const TRANSFERS = positiveInteger('BENCH_TRANSFERS', 5_000);
/** Dispatcher concurrencies, each a full delivery of the outbox. */
const CONCURRENCIES = [16, 64];
/** The platform's default DATABASE_POOL_SIZE. */
const POOL_SIZE = 10;
const TRANSFERS_PER_TX = 100;
const TRANSFERS_PER_BLOCK = 250;
const MAX_BLOCK_RANGE = 5000;
const MAX_ADDRESSES_PER_QUERY = 1000;
const MIN_AMOUNT = 1_000_000n;
/** Scans of one new empty block per network, for the figures at the head. */
const HEAD_ROUNDS = 10;
/** Empty blocks scanned at once (within MAX_BLOCK_RANGE) for the catch-up figure; anvil mines thousands slowly. */
const EMPTY_RANGE = 1000;
const NETWORKS: Network[] = ['Ethereum', 'Tron'];
const WATCH_WINDOW_SECONDS = 7 * 86_400;

interface Watched {
  network: Network;
  /** Index within its network's sequence. */
  index: number;
  /** The platform's form: EIP-55 or Tron base58. */
  address: string;
  /** The recipient as the EVM sees it: 0x + 20-byte hex. */
  recipient: string;
}

interface Fixtures {
  watched: Watched[];
  /** Smallest units sent to each watched address (by its platform form). */
  expected: Map<string, bigint>;
  sent: bigint;
  chain: Chain;
  token: Token;
  startBlock: bigint;
  endBlock: bigint;
  qr: string;
}

const seconds = (since: number) => (performance.now() - since) / 1000;

function accountXpub(network: Network): string {
  const master = HDKey.fromMasterSeed(randomBytes(32));
  return master.derive(network === 'Tron' ? "m/44'/195'/0'" : "m/44'/60'/0'").publicExtendedKey;
}

function deriveWatched(): Watched[] {
  const derive = { Ethereum: createAddressDeriver('Ethereum', accountXpub('Ethereum')), Tron: createAddressDeriver('Tron', accountXpub('Tron')) };
  return Array.from({ length: ADDRESSES }, (_, i) => {
    const network: Network = i % 2 === 0 ? 'Ethereum' : 'Tron';
    const index = Math.floor(i / 2);
    const address = derive[network](index);
    const recipient = network === 'Tron' ? `0x${Buffer.from(tronAddressToId(address)).toString('hex')}` : address.toLowerCase();
    return { network, index, address, recipient };
  });
}

/** Transfer j pays address j mod ADDRESSES an amount of at least MIN_AMOUNT (every credited order becomes DONE). */
function plannedTransfers(watched: Watched[]) {
  return Array.from({ length: TRANSFERS }, (_, j) => ({ to: watched[j % watched.length]!, amount: MIN_AMOUNT + BigInt((j * 7919) % 1_000_003) }));
}

async function setUpChain(watched: Watched[]): Promise<Omit<Fixtures, 'watched' | 'qr'>> {
  const chain = await startChain({ automine: false });
  try {
    const token = await chain.deployToken(); // mines its own block
    const startBlock = await chain.blockNumber();
    const from = chain.accounts[0]!;
    const transfers = plannedTransfers(watched);
    const expected = new Map<string, bigint>();
    let sent = 0n;
    for (const t of transfers) {
      expected.set(t.to.address, (expected.get(t.to.address) ?? 0n) + t.amount);
      sent += t.amount;
    }
    for (let b = 0; b < transfers.length; b += TRANSFERS_PER_BLOCK) {
      const block = transfers.slice(b, b + TRANSFERS_PER_BLOCK);
      const hashes: Hex[] = [];
      for (let t = 0; t < block.length; t += TRANSFERS_PER_TX) {
        hashes.push(await token.transferBatch(from, block.slice(t, t + TRANSFERS_PER_TX).map((x) => ({ to: x.to.recipient, amount: x.amount }))));
      }
      await chain.mine(1);
      const receipts = await Promise.all(hashes.map((hash) => chain.waitForReceipt(hash)));
      const numbers = new Set(receipts.map((r) => r.blockNumber));
      if (receipts.some((r) => r.status !== '0x1') || numbers.size !== 1) throw new Error(`block ${b / TRANSFERS_PER_BLOCK}: a batch reverted or did not fit in one block`);
    }
    const endBlock = await chain.blockNumber();
    const logs = await chain.getLogs({ address: token.address, fromBlock: startBlock + 1n, toBlock: endBlock });
    if (logs.length !== TRANSFERS) throw new Error(`expected ${TRANSFERS} Transfer logs on the chain, found ${logs.length}`);
    return { expected, sent, chain, token, startBlock, endBlock };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}

/** Inserts a merchant and the watched orders (500 to a statement); the merchant's id. */
async function insertOrders(db: Database, f: Fixtures): Promise<string> {
  const merchantId = randomUUID();
  await db.query('INSERT INTO merchants (id, name, api_key) VALUES ($1, $2, $3)', [merchantId, 'bench', `pk_test_${randomBytes(18).toString('base64url')}`]);
  const expiredAt = new Date(Date.now() + 3600_000);
  const COLUMNS = 11;
  for (let i = 0; i < f.watched.length; i += 500) {
    const rows = f.watched.slice(i, i + 500);
    const values: unknown[] = [];
    const tuples = rows.map((w, r) => {
      values.push(randomUUID(), merchantId, `bench-${i + r}`, w.network, 'c', 'https://merchant.example/cb', w.index, w.address, f.qr, MIN_AMOUNT, expiredAt);
      const p = Array.from({ length: COLUMNS }, (_, c) => `$${r * COLUMNS + c + 1}`);
      return `(${p.slice(0, 4).join(', ')}, 'USDT', ${p.slice(4).join(', ')})`;
    });
    await db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
       VALUES ${tuples.join(', ')}`,
      values,
    );
  }
  // As the platform's sequences would stand after handing these indexes out.
  for (const network of NETWORKS) {
    const count = f.watched.filter((w) => w.network === network).length;
    if (count > 0) await db.query(`SELECT setval('address_index_${network.toLowerCase()}', $1)`, [count - 1]);
  }
  return merchantId;
}

interface ScanFigures {
  network: Network | 'both';
  scans: number;
  blocks: bigint;
  logs: number;
  credits: number;
  seconds: number;
}

function scanner(db: Database, f: Fixtures, network: Network): ChainScanner {
  const chain: ChainConfig = {
    rpcUrl: f.chain.rpcUrl,
    tokenContract: f.token.address,
    pollIntervalSeconds: 1,
    maxBlockRange: MAX_BLOCK_RANGE,
    maxAddressesPerQuery: MAX_ADDRESSES_PER_QUERY,
    startBlock: Number(f.startBlock),
    finality: 'confirmations',
  };
  return new ChainScanner({ network, chain, confirmations: 1, watchWindowSeconds: WATCH_WINDOW_SECONDS, db, now: Date.now });
}

async function scan(db: Database, f: Fixtures, network: Network): Promise<ScanFigures> {
  const s = scanner(db, f, network);
  const figures: ScanFigures = { network, scans: 0, blocks: 0n, logs: 0, credits: 0, seconds: 0 };
  const start = performance.now();
  for (;;) {
    const result = await s.scanOnce();
    if (!result) break;
    figures.scans++;
    figures.blocks += result.toBlock - result.fromBlock + 1n;
    figures.logs += result.logs;
    figures.credits += result.credits.length;
  }
  figures.seconds = seconds(start);
  return figures;
}

interface HeadFigures {
  network: Network;
  watched: number;
  /** scanOnce of one new block without deposits: median and worst of HEAD_ROUNDS, ms. */
  oneBlockMedianMs: number;
  oneBlockMaxMs: number;
  /** One scanOnce over EMPTY_RANGE empty blocks, ms. */
  emptyRangeMs: number;
}

/**
 * After the scan: the cost of a scanOnce that finds nothing, which is what a scanner at the head
 * pays every poll and what bounds catching up through blocks without deposits. Inside an anvil
 * snapshot (reverted afterwards, the cursors put back) so that the next database sees the same chain.
 */
async function scanWithoutDeposits(db: Database, f: Fixtures): Promise<HeadFigures[]> {
  const scanners = NETWORKS.map((network) => ({ network, s: scanner(db, f, network), times: [] as number[], emptyRangeMs: 0 }));
  // Until the blocks are scanned: asking for all the token's Transfers (more orders than one query
  // carries), a new scanner's range starts at 100 blocks and widens while they are empty.
  const once = async (s: ChainScanner, blocks: number) => {
    const start = performance.now();
    let scanned = 0n;
    while (scanned < BigInt(blocks)) {
      const result = await s.scanOnce();
      if (!result || result.logs !== 0) throw new Error(`a scan of ${blocks} empty blocks read ${JSON.stringify(result, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
      scanned += result.toBlock - result.fromBlock + 1n;
    }
    if (scanned !== BigInt(blocks)) throw new Error(`a scan of ${blocks} empty blocks scanned ${scanned}`);
    return performance.now() - start;
  };
  const snapshot = await f.chain.snapshot();
  try {
    for (let round = 0; round < HEAD_ROUNDS; round++) {
      await f.chain.mine(1);
      for (const x of scanners) x.times.push(await once(x.s, 1));
    }
    await f.chain.mine(EMPTY_RANGE);
    for (const x of scanners) x.emptyRangeMs = await once(x.s, EMPTY_RANGE);
  } finally {
    await f.chain.revert(snapshot);
    await db.query('UPDATE chain_cursors SET next_block = $1, last_block_hash = NULL', [f.endBlock + 1n]); // the reverted blocks' hashes are gone
  }
  const watched = await db.query<{ blockchain: Network; n: bigint }>('SELECT blockchain, count(*) AS n FROM deposit_orders GROUP BY blockchain');
  return scanners.map(({ network, times, emptyRangeMs }) => {
    times.sort((a, b) => a - b);
    return {
      network,
      watched: Number(watched.find((w) => w.blockchain === network)?.n ?? 0),
      oneBlockMedianMs: times[Math.floor(times.length / 2)]!,
      oneBlockMaxMs: times[times.length - 1]!,
      emptyRangeMs,
    };
  });
}

async function checkScan(db: Database, f: Fixtures): Promise<void> {
  const [totals] = await db.query<{ deposits: bigint; keys: bigint; amount: string | null; received: string | null; outbox: bigint }>(
    `SELECT (SELECT count(*) FROM deposits) AS deposits,
            (SELECT count(DISTINCT (network, tx_hash, log_index)) FROM deposits) AS keys,
            (SELECT sum(amount)::text FROM deposits) AS amount,
            (SELECT sum(received_amount)::text FROM deposit_orders) AS received,
            (SELECT count(*) FROM callback_outbox WHERE event = 'order.deposit' AND state = 'pending') AS outbox`,
  );
  const problems: string[] = [];
  if (totals!.deposits !== BigInt(TRANSFERS) || totals!.keys !== BigInt(TRANSFERS)) problems.push(`${totals!.deposits} deposit rows (${totals!.keys} distinct) for ${TRANSFERS} transfers`);
  if (BigInt(totals!.amount ?? 0) !== f.sent || BigInt(totals!.received ?? 0) !== f.sent) problems.push(`sent ${f.sent}, deposits sum ${totals!.amount}, received_amount sum ${totals!.received}`);
  if (totals!.outbox !== BigInt(TRANSFERS)) problems.push(`${totals!.outbox} order.deposit callbacks pending for ${TRANSFERS} transfers`);
  const rows = await db.query<{ address: string; received_amount: bigint; status: string }>('SELECT address, received_amount, status FROM deposit_orders');
  for (const row of rows) {
    const want = f.expected.get(row.address) ?? 0n;
    if (row.received_amount !== want || (want > 0n) !== (row.status === 'DONE')) problems.push(`${row.address}: received ${row.received_amount} (${row.status}), sent ${want}`);
  }
  if (problems.length > 0) throw new Error(`scan check failed:\n${problems.slice(0, 10).join('\n')}`);
}

interface DispatchFigures {
  concurrency: number;
  deliveries: number;
  seconds: number;
  p50: number;
  p99: number;
}

async function dispatch(db: Database, receiver: RemoteReceiver, concurrency: number): Promise<DispatchFigures> {
  // Every event due again, as the scan left it: pending, no attempt yet.
  await db.query("UPDATE callback_outbox SET state = 'pending', attempts = 0, next_attempt_at = $1, delivered_at = NULL", [new Date()]);
  await db.query('DELETE FROM callback_attempts');
  await receiver.reset();
  const dispatcher = new CallbackDispatcher({
    db,
    secrets: new SecretKeeper(randomBytes(32)),
    // The receiver runs on this machine: a sandbox on loopback may call it.
    config: { timeoutSeconds: 15, retrySchedule: [5, 300], allowPrivate: true, allowLoopback: true, dispatchIntervalMs: 500 },
    mode: 'sandbox',
    now: Date.now,
    concurrency,
  });
  const start = performance.now();
  let deliveries = 0;
  for (let claimed: number; (claimed = await dispatcher.runOnce()) > 0; ) deliveries += claimed;
  const elapsed = seconds(start);

  const [states] = await db.query<{ total: bigint; delivered: bigint; attempts: bigint; p50: number | null; p99: number | null }>(
    `SELECT (SELECT count(*) FROM callback_outbox) AS total,
            (SELECT count(*) FROM callback_outbox WHERE state = 'delivered' AND attempts = 1) AS delivered,
            (SELECT count(*) FROM callback_attempts) AS attempts,
            (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM callback_attempts) AS p50,
            (SELECT percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms) FROM callback_attempts) AS p99`,
  );
  const ids = (await db.query<{ webhook_id: string }>('SELECT webhook_id FROM callback_outbox')).map((r) => r.webhook_id);
  const received = await receiver.webhookIds();
  const receivedSet = new Set(received);
  const problems: string[] = [];
  if (states!.delivered !== states!.total || states!.total !== BigInt(TRANSFERS)) problems.push(`${states!.delivered} of ${states!.total} rows delivered at the first attempt, ${TRANSFERS} expected`);
  if (states!.attempts !== states!.total || deliveries !== TRANSFERS) problems.push(`${states!.attempts} attempts recorded, ${deliveries} claimed, for ${states!.total} rows`);
  if (received.length !== ids.length || receivedSet.size !== ids.length || !ids.every((id) => receivedSet.has(id))) {
    problems.push(`the receiver got ${received.length} deliveries of ${receivedSet.size} webhook-ids for ${ids.length} events`);
  }
  if (problems.length > 0) throw new Error(`dispatch check (concurrency ${concurrency}) failed:\n${problems.join('\n')}`);
  return { concurrency, deliveries, seconds: elapsed, p50: Number(states!.p50), p99: Number(states!.p99) };
}

interface DatabaseFigures {
  kind: string;
  setupSeconds: number;
  scans: ScanFigures[];
  head: HeadFigures[];
  dispatches: DispatchFigures[];
}

async function benchDatabase(kind: string, db: Database, f: Fixtures, receiver: RemoteReceiver): Promise<DatabaseFigures> {
  const setupStart = performance.now();
  await migrate(db);
  await insertOrders(db, f);
  const setupSeconds = seconds(setupStart);
  console.error(`${kind}: ${f.watched.length} orders inserted in ${setupSeconds.toFixed(1)} s (setup, not counted); scanning`);

  const scans: ScanFigures[] = [];
  for (const network of NETWORKS) scans.push(await scan(db, f, network));
  scans.push({
    network: 'both',
    scans: scans.reduce((s, x) => s + x.scans, 0),
    blocks: scans.reduce((s, x) => s + x.blocks, 0n),
    logs: scans.reduce((s, x) => s + x.logs, 0),
    credits: scans.reduce((s, x) => s + x.credits, 0),
    seconds: scans.reduce((s, x) => s + x.seconds, 0),
  });
  await checkScan(db, f);
  const head = await scanWithoutDeposits(db, f);

  await db.query('UPDATE callback_outbox SET url = $1', [`${receiver.url}/ok`]);
  const dispatches: DispatchFigures[] = [];
  for (const concurrency of CONCURRENCIES) {
    console.error(`${kind}: dispatching at concurrency ${concurrency}`);
    dispatches.push(await dispatch(db, receiver, concurrency));
  }
  return { kind, setupSeconds, scans, head, dispatches };
}

/** The receiver of test/support/receiver.ts in a child process (this file run with --receiver), driven over IPC. */
interface RemoteReceiver {
  url: string;
  /** Forgets the deliveries so far. */
  reset(): Promise<void>;
  /** The webhook-id header of every delivery so far, in arrival order. */
  webhookIds(): Promise<string[]>;
  close(): Promise<void>;
}

type ReceiverMessage = { type: 'ready'; url: string } | { type: 'reset' } | { type: 'ids'; ids: string[] };

async function receiverChild(): Promise<void> {
  const receiver = await startReceiver();
  process.on('message', (message: { type: 'reset' | 'ids' }) => {
    if (message.type === 'reset') {
      receiver.deliveries.length = 0;
      process.send!({ type: 'reset' } satisfies ReceiverMessage);
    } else {
      process.send!({ type: 'ids', ids: receiver.deliveries.map((d) => String(d.headers['webhook-id'])) } satisfies ReceiverMessage);
    }
  });
  process.once('disconnect', () => void receiver.close().then(() => process.exit(0)));
  process.send!({ type: 'ready', url: receiver.url } satisfies ReceiverMessage);
}

async function startRemoteReceiver(): Promise<RemoteReceiver> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--receiver'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () =>
    new Promise<ReceiverMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the receiver exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message as ReceiverMessage);
      });
    });
  const ready = await next();
  if (ready.type !== 'ready') throw new Error(`the receiver said ${ready.type} first`);
  const ask = async (type: 'reset' | 'ids') => {
    const answer = next();
    child.send({ type });
    return answer;
  };
  return {
    url: ready.url,
    reset: async () => void (await ask('reset')),
    webhookIds: async () => {
      const answer = await ask('ids');
      if (answer.type !== 'ids') throw new Error(`the receiver answered ${answer.type}`);
      return answer.ids;
    },
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}

/** PostgreSQL with a schema of its own (search_path), so that a shared test database is left as it was. */
async function openPostgresSchema(url: string): Promise<{ db: Database; drop: () => Promise<void> }> {
  const schema = `bench_chain_${process.pid}_${Date.now()}`;
  const admin = await openPostgres(url, 1);
  await admin.exec(`CREATE SCHEMA ${schema}`);
  const scoped = new URL(url);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  const db = await openPostgres(scoped.toString(), POOL_SIZE);
  return {
    db,
    drop: async () => {
      await db.close();
      await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    },
  };
}

const n = (x: number | bigint) => Number(x).toLocaleString('en-US');
const rate = (count: number | bigint, s: number) => Math.round(Number(count) / s).toLocaleString('en-US');

async function main(): Promise<void> {
  const runStart = performance.now();
  const postgres = startPostgres(54341);
  let receiver: RemoteReceiver | undefined;
  let chain: Chain | undefined;
  try {
    receiver = await startRemoteReceiver();
    let t = performance.now();
    const watched = deriveWatched();
    const deriveSeconds = seconds(t);
    t = performance.now();
    const onChain = await setUpChain(watched);
    chain = onChain.chain;
    const chainSeconds = seconds(t);
    // One real QR code (of the first address) for every order: the callback bodies carry one of that size.
    const fixtures: Fixtures = { ...onChain, watched, qr: addressQr(watched[0]!.address) };
    const blocks = fixtures.endBlock - fixtures.startBlock;
    console.error(
      `setup (not counted): ${ADDRESSES} addresses derived in ${deriveSeconds.toFixed(1)} s; ${TRANSFERS} transfers in ${Math.ceil(TRANSFERS / TRANSFERS_PER_TX)} ` +
        `transactions and ${blocks} blocks on anvil (start, token compiled and deployed) in ${chainSeconds.toFixed(1)} s`,
    );

    const results: DatabaseFigures[] = [];
    const pglite = await openPglite(undefined);
    try {
      results.push(await benchDatabase('PGlite', pglite, fixtures, receiver));
    } finally {
      await pglite.close();
    }
    if (postgres) {
      const { db, drop } = await openPostgresSchema(postgres.url);
      try {
        results.push(await benchDatabase('PostgreSQL', db, fixtures, receiver));
      } finally {
        await drop();
      }
    }

    const report: string[] = [];
    const ethereum = watched.filter((w) => w.network === 'Ethereum').length;
    report.push(
      `\nNode ${process.version}, ${new Date().toISOString().slice(0, 10)}; anvil, ${n(ADDRESSES)} watched addresses (${n(ethereum)} Ethereum, ${n(ADDRESSES - ethereum)} Tron), ` +
        `${n(TRANSFERS)} transfers in ${n(blocks)} blocks (${TRANSFERS_PER_TX} per transaction, ${TRANSFERS_PER_BLOCK} per block); scanner: confirmations 1, ` +
        `maxBlockRange ${MAX_BLOCK_RANGE}, maxAddressesPerQuery ${MAX_ADDRESSES_PER_QUERY}, networks one after the other, from the block before the first transfer; dispatcher concurrency ${CONCURRENCIES.join(' and ')}, ` +
        `receiver (test/support/receiver.ts) in a child process; ` +
        `PGlite in memory${postgres ? `, PostgreSQL (${postgres.origin}) with a pool of ${POOL_SIZE} connections` : ''}\n`,
    );
    report.push('| database | network | scans | blocks scanned | logs read | deposits credited | seconds | logs/s | blocks/s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of results) {
      for (const s of r.scans) {
        report.push(`| ${r.kind} | ${s.network} | ${s.scans} | ${n(s.blocks)} | ${n(s.logs)} | ${n(s.credits)} | ${s.seconds.toFixed(2)} | ${rate(s.logs, s.seconds)} | ${rate(s.blocks, s.seconds)} |`);
      }
    }
    report.push(
      `\n| database | network | watched addresses | scanOnce of 1 new empty block: median ms | worst of ${HEAD_ROUNDS} ms | scanOnce until ${n(EMPTY_RANGE)} empty blocks are scanned: ms | empty blocks/s |\n|---|---|---:|---:|---:|---:|---:|`,
    );
    for (const r of results) {
      for (const h of r.head) {
        report.push(`| ${r.kind} | ${h.network} | ${n(h.watched)} | ${h.oneBlockMedianMs.toFixed(1)} | ${h.oneBlockMaxMs.toFixed(1)} | ${h.emptyRangeMs.toFixed(1)} | ${rate(EMPTY_RANGE, h.emptyRangeMs / 1000)} |`);
      }
    }
    report.push('\n| database | concurrency | deliveries | seconds | deliveries/s | attempt p50 ms | attempt p99 ms |\n|---|---:|---:|---:|---:|---:|---:|');
    for (const r of results) {
      for (const d of r.dispatches) {
        report.push(`| ${r.kind} | ${d.concurrency} | ${n(d.deliveries)} | ${d.seconds.toFixed(2)} | ${rate(d.deliveries, d.seconds)} | ${d.p50} | ${d.p99} |`);
      }
    }
    report.push(
      `\nChecked: ${n(TRANSFERS)} deposit rows per database, each transfer once, sum of received_amount = sum sent (${fixtures.sent} units), per order too; ` +
        `every outbox row delivered at its first attempt, the receiver got each webhook-id once per run. ` +
        `Setup, not counted: derivation ${deriveSeconds.toFixed(1)} s, chain ${chainSeconds.toFixed(1)} s, ` +
        results.map((r) => `${r.kind} migrate + insert ${r.setupSeconds.toFixed(1)} s`).join(', ') +
        `. Whole run ${seconds(runStart).toFixed(0)} s.`,
    );
    publishResults('chain', report.join('\n'), results);
  } finally {
    await chain?.stop();
    await receiver?.close();
    postgres?.stop();
  }
}

/** The scan of a busy token at 100, 10,000 and 100,000 open orders (bench/chain-busy.ts, issue 33). */
async function busy(): Promise<void> {
  const { markdown, figures } = await benchBusyToken();
  publishResults('chain-busy', markdown, figures);
}

// BENCH_PART=busy: only the busy token; BENCH_PART=credits: only the crediting and dispatch above.
if (process.argv.includes('--receiver')) await receiverChild();
else {
  if (process.env.BENCH_PART !== 'busy') await main();
  if (process.env.BENCH_PART !== 'credits') await busy();
}
