// The scan of a busy token (issue 33), part of `npm run bench:chain` (alone: BENCH_PART=busy).
//
// One anvil chain with BUSY_LOGS token Transfer logs (BUSY_LOGS_PER_BLOCK a block, 100 a transaction),
// all to addresses nobody watches but BUSY_MATCHES of them. Then, for each count of OPEN_ORDERS, a
// fresh PGlite database in memory with that many open Ethereum orders (inserted with SQL; the first
// BUSY_MATCHES are the paid ones) and the platform's ChainScanner (confirmations 1, maxBlockRange 5000,
// maxAddressesPerQuery 1000) calling scanOnce() until it returns undefined. Measured: eth_getLogs per
// scanned range (the scanner's JSON-RPC calls counted), Transfer logs read per second of the scan, the
// process's CPU (user + system, PGlite included; anvil is another process) per 1,000 logs, and the
// peak heap and RSS above what they were before the scan (sampled every 10 ms). Checked: exactly the
// paid orders credited, with the amounts sent.
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { toChecksumAddress } from '../src/server/addresses/derivation.js';
import { ChainScanner } from '../src/server/chain/scanner.js';
import { openPglite, type Database } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { startChain, type Chain, type Hex, type Token } from '../test/support/chain.js';

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  const value = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${text}"`);
  return value;
}

const OPEN_ORDERS = (process.env.BENCH_OPEN_ORDERS ?? '100,10000,100000').split(',').map(Number);
const BUSY_LOGS = positiveInteger('BENCH_BUSY_LOGS', 20_000);
const BUSY_LOGS_PER_BLOCK = 200;
const BUSY_MATCHES = 10;
const PER_TX = 100;
const MIN_AMOUNT = 1_000_000n;

export interface BusyFigures {
  openOrders: number;
  query: string;
  ranges: number;
  getLogs: number;
  logs: number;
  credits: number;
  seconds: number;
  cpuMs: number;
  peakHeapMb: number;
  peakRssMb: number;
}

interface BusyChain {
  chain: Chain;
  token: Token;
  startBlock: bigint;
  /** The paid recipients (EIP-55) and what each got. */
  paid: Map<string, bigint>;
}

const randomAddress = () => toChecksumAddress(Uint8Array.from(randomBytes(20)));

async function setUpBusyChain(): Promise<BusyChain> {
  const chain = await startChain({ automine: false });
  try {
    const token = await chain.deployToken();
    const startBlock = await chain.blockNumber();
    const from = chain.accounts[0]!;
    const paid = new Map<string, bigint>();
    // The matching transfers spread over the blocks.
    const matchAt = new Set(Array.from({ length: BUSY_MATCHES }, (_, i) => Math.floor(((i + 0.5) * BUSY_LOGS) / BUSY_MATCHES)));
    let j = 0;
    while (j < BUSY_LOGS) {
      const hashes: Hex[] = [];
      for (let t = 0; t < BUSY_LOGS_PER_BLOCK && j < BUSY_LOGS; t += PER_TX) {
        const batch = [];
        for (let k = 0; k < PER_TX && j < BUSY_LOGS; k++, j++) {
          const to = randomAddress();
          const amount = MIN_AMOUNT + BigInt(j);
          if (matchAt.has(j)) paid.set(to, amount);
          batch.push({ to: to.toLowerCase(), amount });
        }
        hashes.push(await token.transferBatch(from, batch));
      }
      await chain.mine(1);
      const receipts = await Promise.all(hashes.map((hash) => chain.waitForReceipt(hash)));
      if (receipts.some((r) => r.status !== '0x1')) throw new Error('a batch reverted');
    }
    await chain.mine(1); // the last transfers get their confirmation
    return { chain, token, startBlock, paid };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}

async function insertOpenOrders(db: Database, count: number, paid: readonly string[]): Promise<void> {
  const merchantId = randomUUID();
  await db.query('INSERT INTO merchants (id, name, api_key) VALUES ($1, $2, $3)', [merchantId, 'bench', `pk_test_${randomBytes(18).toString('base64url')}`]);
  const expiredAt = new Date(Date.now() + 3600_000);
  const COLUMNS = 8;
  for (let i = 0; i < count; i += 1000) {
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (let r = 0; r < 1000 && i + r < count; r++) {
      const n = i + r;
      values.push(randomUUID(), merchantId, `busy-${n}`, n, paid[n] ?? randomAddress(), 'data:', MIN_AMOUNT, expiredAt);
      const p = Array.from({ length: COLUMNS }, (_, c) => `$${r * COLUMNS + c + 1}`);
      tuples.push(`(${p[0]}, ${p[1]}, ${p[2]}, 'Ethereum', 'USDT', 'c', 'https://merchant.example/cb', ${p.slice(3).join(', ')})`);
    }
    await db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
       VALUES ${tuples.join(', ')}`,
      values,
    );
  }
}

async function scanBusy(busy: BusyChain, openOrders: number): Promise<BusyFigures> {
  const db = await openPglite(undefined);
  try {
    await migrate(db);
    const paid = [...busy.paid.keys()];
    await insertOpenOrders(db, openOrders, paid);
    const scanner = new ChainScanner({
      network: 'Ethereum',
      chain: { rpcUrl: busy.chain.rpcUrl, tokenContract: busy.token.address, pollIntervalSeconds: 1, maxBlockRange: 5000, maxAddressesPerQuery: 1000, startBlock: Number(busy.startBlock + 1n), finality: 'confirmations' },
      confirmations: 1,
      watchWindowSeconds: 7 * 86_400,
      db,
      now: Date.now,
    });
    let getLogs = 0;
    const call = scanner.rpc.call.bind(scanner.rpc);
    scanner.rpc.call = <T>(method: string, params: unknown[]) => {
      if (method === 'eth_getLogs') getLogs++;
      return call<T>(method, params);
    };
    await scanner.prepare();
    global.gc?.();
    const base = process.memoryUsage();
    let peakHeap = base.heapUsed;
    let peakRss = base.rss;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakHeap = Math.max(peakHeap, m.heapUsed);
      peakRss = Math.max(peakRss, m.rss);
    }, 10);
    const figures: BusyFigures = { openOrders, query: '', ranges: 0, getLogs: 0, logs: 0, credits: 0, seconds: 0, cpuMs: 0, peakHeapMb: 0, peakRssMb: 0 };
    const queries = new Set<string>();
    const cpu = process.cpuUsage();
    const start = performance.now();
    try {
      for (let r = await scanner.scanOnce(); r; r = await scanner.scanOnce()) {
        figures.ranges++;
        figures.logs += r.logs;
        figures.credits += r.credits.length;
        queries.add(r.query);
      }
    } finally {
      clearInterval(sampler);
    }
    figures.seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    figures.cpuMs = (used.user + used.system) / 1000;
    figures.getLogs = getLogs;
    figures.query = [...queries].join(', ');
    figures.peakHeapMb = (peakHeap - base.heapUsed) / 2 ** 20;
    figures.peakRssMb = (peakRss - base.rss) / 2 ** 20;
    const credited = await db.query<{ address: string; received_amount: bigint }>('SELECT address, received_amount FROM deposit_orders WHERE received_amount > 0');
    const problems = credited.filter((row) => busy.paid.get(row.address) !== row.received_amount).map((row) => `${row.address}: ${row.received_amount}`);
    if (credited.length !== busy.paid.size || problems.length > 0) throw new Error(`busy scan at ${openOrders} orders: ${credited.length} orders credited of ${busy.paid.size} paid ${problems.join(', ')}`);
    return figures;
  } finally {
    await db.close();
  }
}

const n = (x: number) => Math.round(x).toLocaleString('en-US');

/** Runs the busy-token scans; the markdown of their table and the figures. */
export async function benchBusyToken(): Promise<{ markdown: string; figures: BusyFigures[] }> {
  let t = performance.now();
  const busy = await setUpBusyChain();
  try {
    console.error(`busy token: ${BUSY_LOGS} Transfer logs (${BUSY_MATCHES} to watched orders) in ${Math.ceil(BUSY_LOGS / BUSY_LOGS_PER_BLOCK)} blocks, set up in ${((performance.now() - t) / 1000).toFixed(1)} s (not counted)`);
    const figures: BusyFigures[] = [];
    for (const count of OPEN_ORDERS) {
      t = performance.now();
      console.error(`busy token: ${count} open orders`);
      figures.push(await scanBusy(busy, count));
    }
    const lines = [
      `\nA busy token: ${n(BUSY_LOGS)} USDT Transfer logs in ${n(Math.ceil(BUSY_LOGS / BUSY_LOGS_PER_BLOCK))} blocks (${BUSY_LOGS_PER_BLOCK} a block, ${PER_TX} a transaction) on anvil, ${BUSY_MATCHES} of them to watched orders; ` +
        'open Ethereum orders inserted with SQL into PGlite in memory; the scanner with 1 confirmation, maxBlockRange 5000, maxAddressesPerQuery 1000, from the first of these blocks to the head. ' +
        'Token logs scanned/s: the chain\'s Transfer logs in the scanned blocks (all of them, matching or not) over the scan\'s time. CPU: this process, user + system (PGlite included, anvil not); memory: peak above the start of the scan, sampled every 10 ms.\n',
      '| open orders | query | ranges | eth_getLogs | per range | logs the node answered | credited | seconds | token logs scanned/s | CPU ms per 1,000 token logs | peak heap MB | peak RSS MB |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...figures.map(
        (f) =>
          `| ${n(f.openOrders)} | ${f.query} | ${f.ranges} | ${f.getLogs} | ${(f.getLogs / f.ranges).toFixed(1)} | ${n(f.logs)} | ${f.credits} | ${f.seconds.toFixed(2)} | ${n(BUSY_LOGS / f.seconds)} | ${((f.cpuMs / BUSY_LOGS) * 1000).toFixed(1)} | ${f.peakHeapMb.toFixed(0)} | ${f.peakRssMb.toFixed(0)} |`,
      ),
    ];
    return { markdown: lines.join('\n'), figures };
  } finally {
    await busy.chain.stop();
  }
}
