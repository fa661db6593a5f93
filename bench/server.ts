// Platform throughput, side by side in one run (npm run bench:server): signed GET and POST of orders, and
// beside them a balance read and a withdrawal create, through a real `partner-api serve` process on
// PGlite and on PostgreSQL, against two limits measured the same way in the same run: a bare Fastify
// JSON endpoint, and a raw primary-key read loop on the same database. Then where the time of a create goes: one create after another, and the address derivation
// and QR code that the address thread does for it ahead of time.
import { createHmac, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { createPartnerClient, type CreatedDepositOrder } from '../src/client/index.js';
import { createAddressDeriver } from '../src/server/addresses/derivation.js';
import { buildWhatChanged, publishResults, SANDBOX_XPUBS, startPostgres, statementLoop, testableConfig } from './support.js';
import { openPglite, openPostgres, type Database } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { Orders } from '../src/server/orders/orders.js';
import { READ_ORDER_SQL } from '../src/server/orders/order-rows.js';
import { addressQr } from '../src/server/addresses/qr.js';
import { startProcess } from '../test/support/processes.js';
import { startPartnerApi } from '../test/support/partner-api.js';
import { freshDatabase } from '../test/support/platform.js';
import { orderRequest, SAMPLE_TRON_DESTINATION } from '../test/fixtures/orders.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
/** The bars: reads at this share of the lower read limit, creates at this share of the raw insert rate. */
const GET_TARGET = 0.8;
const POST_TARGET = 0.25;
const getBar = GET_TARGET.toFixed(2);
const postBar = `${100 * POST_TARGET} %`;

interface Figures extends CpuDuring {
  rps: number;
  p50: number;
  p99: number;
}

/** Busy and total CPU time of the whole machine so far (Linux /proc/stat: user, nice, system, idle, iowait, ...). */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/** The parent and the CPU time so far (utime + stime, the 14th and 15th fields) of a /proc stat line. */
function parseStat(stat: string): { ppid: number; cpu: number } {
  // Counted after the command's name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]) };
}

/** The entries of a /proc directory, or none when its process has exited since it was listed. */
function procEntries(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
}

function procStat(path: string): { ppid: number; cpu: number } | undefined {
  try {
    return parseStat(readFileSync(path, 'utf8'));
  } catch {
    return undefined; // exited since the listing
  }
}

/** CPU time so far of each thread of a process and of its descendants (a cluster's workers), by thread id. */
function serverThreadsCpu(rootPid: number): Map<string, number> {
  const processes = procEntries('/proc').flatMap((pid) => {
    const stat = procStat(`/proc/${pid}/stat`);
    return stat ? [{ pid: Number(pid), ppid: stat.ppid }] : [];
  });
  const tree = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of processes) {
      if (tree.has(p.pid) || !tree.has(p.ppid)) continue;
      tree.add(p.pid);
      grew = true;
    }
  }
  const threads = new Map<string, number>();
  for (const pid of tree) {
    for (const tid of procEntries(`/proc/${pid}/task`)) {
      const stat = procStat(`/proc/${pid}/task/${tid}/stat`);
      if (stat) threads.set(tid, stat.cpu);
    }
  }
  return threads;
}

const CORES = readFileSync('/proc/stat', 'utf8').split('\n').filter((line) => /^cpu\d+ /.test(line)).length;

interface CpuDuring {
  /** Share of the machine's CPU (all cores, all processes) busy during the run: what limits a run below its target. */
  busy: number;
  /** Of the machine's CPU, the share the server's threads took (the rest: the load generator, the database). */
  server?: number;
  /** The busiest server thread, as a share of one core: near 1, that thread is what limits the run. */
  busiestThread?: number;
}

/** The work's result, and how busy the machine, the server (if given) and its busiest thread were during it. */
async function busyDuring<T>(work: () => Promise<T>, serverPid?: number): Promise<[T, CpuDuring]> {
  const before = machineCpu();
  const threadsBefore = serverPid === undefined ? undefined : serverThreadsCpu(serverPid);
  const result = await work();
  const after = machineCpu();
  const elapsed = after.total - before.total;
  const cpu: CpuDuring = { busy: (after.busy - before.busy) / elapsed };
  if (serverPid !== undefined) {
    const used = [...serverThreadsCpu(serverPid)].map(([tid, time]) => time - (threadsBefore!.get(tid) ?? 0));
    cpu.server = used.reduce((sum, time) => sum + time, 0) / elapsed;
    cpu.busiestThread = Math.max(...used) / (elapsed / CORES);
  }
  return [result, cpu];
}

function sign(secret: string, method: string, target: string, body = '') {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = createHmac('sha256', secret).update(`${timestamp}${method}${target}${body}`).digest('hex');
  return { timestamp: String(timestamp), signature };
}

async function load(url: string, serverPid: number, setup: (request: autocannon.Request) => autocannon.Request, method: 'GET' | 'POST' = 'GET'): Promise<Figures> {
  const run = () => autocannon({ url, connections: CONNECTIONS, duration: SECONDS, method, requests: [{ method, setupRequest: setup }] });
  const [result, cpu] = await busyDuring(run, serverPid);
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`load on ${url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, ...cpu };
}

/** CONNECTIONS concurrent loops of one statement for SECONDS, without HTTP around it: the database's limit. */
async function databaseLoop(db: Database, statement: (i: number) => [string, unknown[]]): Promise<Figures> {
  const [figures, { busy }] = await busyDuring(() => statementLoop(db, CONNECTIONS, SECONDS, statement));
  return { ...figures, busy };
}

/** The single-order read (READ_ORDER_SQL, by primary key): the limit at one query per read (the server coalesces reads, see batched-reads.ts). */
const primaryKeyLoop = (db: Database, uuids: string[], merchantId: string) => databaseLoop(db, (i) => [READ_ORDER_SQL, [uuids[i % uuids.length], merchantId]]);

/** A plain one-row insert of an order-sized row: the limit for creates. */
async function rawInsertLoop(db: Database): Promise<Figures> {
  await db.query('CREATE TABLE bench_inserts (id uuid PRIMARY KEY, merchant_id uuid NOT NULL, external_id text NOT NULL, address text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  const merchant = randomUUID();
  return databaseLoop(db, (i) => [
    'INSERT INTO bench_inserts (id, merchant_id, external_id, address) VALUES ($1, $2, $3, $4)',
    [randomUUID(), merchant, `raw-${i}`, 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK'],
  ]);
}

async function serve(env: Record<string, string>, args: string[] = []) {
  // One merchant creates for SECONDS at full speed: more open orders than the default bound allows.
  const platform = await startPartnerApi({ LOG_LEVEL: 'silent', RATE_LIMIT: '1000000/1', MAX_OPEN_ORDERS_PER_MERCHANT: '10000000', ...env }, args);
  return { server: platform.process, baseUrl: platform.baseUrl, ...platform.sandbox! };
}

/** GET and POST through the platform, then the raw read loop, on PGlite (no URL) or PostgreSQL. */
async function benchDatabase(databaseUrl: string | undefined, workers = 1) {
  const dataDir = mkdtempSync(join(tmpdir(), 'partner-bench-'));
  // The server's pool (split among its workers) and the raw loop get the same number of connections.
  const pool = String(Math.ceil(CONNECTIONS / workers));
  const platform = await serve({ DATA_DIR: dataDir, DATABASE_POOL_SIZE: pool, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }, ['--workers', String(workers)]);
  const client = createPartnerClient(platform);
  const orders: CreatedDepositOrder[] = [];
  for (let i = 0; i < 200; i++) {
    const { data } = await client.POST('/partner/v1/platforms/orders', {
      body: orderRequest(`seed-${i}`, { blockchain: i % 2 ? 'Tron' : 'Ethereum' }),
    });
    orders.push(data!);
  }
  let n = 0;
  const get = await load(`${platform.baseUrl}/`, platform.server.process.pid!, (request) => {
    const path = `/partner/v2/platforms/orders/${orders[n++ % orders.length]!.uuid}`;
    const { timestamp, signature } = sign(platform.apiSecret, 'GET', path);
    return { ...request, path, headers: { 'X-Api-Key': platform.apiKey, 'X-Timestamp': timestamp, 'X-Signature': signature } };
  });
  let m = 0;
  const post = await load(`${platform.baseUrl}/`, platform.server.process.pid!, (request) => {
    const path = '/partner/v1/platforms/orders';
    const body = JSON.stringify(orderRequest(`load-${process.pid}-${m++}`, { blockchain: m % 2 ? 'Tron' : 'Ethereum' }));
    const { timestamp, signature } = sign(platform.apiSecret, 'POST', path, body);
    return { ...request, path, body, headers: { 'Content-Type': 'application/json', 'X-Api-Key': platform.apiKey, 'X-Timestamp': timestamp, 'X-Signature': signature } };
  }, 'POST');
  // The money-out side beside the orders' (issue 46): a balance read, and a withdrawal from a balance
  // that covers the whole run (a million USDT on Tron), each request its own externalId.
  const funding = orders.find((order) => order.blockchain === 'Tron')!;
  const deposit = await client.POST('/sandbox/v1/orders/{uuid}/deposits', { params: { path: { uuid: funding.uuid } }, body: { amount: 1_000_000_000_000 } });
  if (deposit.response.status !== 201) throw new Error(`funding the balance: ${deposit.response.status}`);
  const balances = await load(`${platform.baseUrl}/`, platform.server.process.pid!, (request) => {
    const path = '/partner/v1/platforms/balances';
    const { timestamp, signature } = sign(platform.apiSecret, 'GET', path);
    return { ...request, path, headers: { 'X-Api-Key': platform.apiKey, 'X-Timestamp': timestamp, 'X-Signature': signature } };
  });
  let w = 0;
  const withdrawal = await load(`${platform.baseUrl}/`, platform.server.process.pid!, (request) => {
    const path = '/partner/v1/platforms/withdrawals';
    const body = JSON.stringify({ externalId: `load-${process.pid}-${w++}`, blockchain: 'Tron', currency: 'USDT', amount: 1, destinationAddress: SAMPLE_TRON_DESTINATION });
    const { timestamp, signature } = sign(platform.apiSecret, 'POST', path, body);
    return { ...request, path, body, headers: { 'Content-Type': 'application/json', 'X-Api-Key': platform.apiKey, 'X-Timestamp': timestamp, 'X-Signature': signature } };
  }, 'POST');
  await platform.server.stop();

  // The same database, read directly (PGlite is one process's: opened after the server stopped).
  const db = databaseUrl ? await openPostgres(databaseUrl, CONNECTIONS) : await openPglite(join(dataDir, 'pglite'));
  const [owner] = await db.query<{ merchant_id: string }>('SELECT merchant_id FROM deposit_orders LIMIT 1');
  const raw = await primaryKeyLoop(db, orders.map((o) => o.uuid), owner!.merchant_id);
  const insert = await rawInsertLoop(db);
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
  return { get, post, raw, insert, balances, withdrawal, order: orders[0]! };
}

async function bareFastify(order: object): Promise<Figures> {
  const bare = await startProcess('node', ['--import', 'tsx', 'bench/bare-fastify.ts', JSON.stringify(order)], /listening on/);
  const url = /listening on (\S+)/.exec(bare.output())![1]!;
  try {
    return await load(`${url}/order`, bare.process.pid!, (request) => request);
  } finally {
    await bare.stop();
  }
}

/**
 * Where the time of one create goes, in-process: µs per order. The address and its QR code are made
 * ahead on the address thread (src/server/addresses/pool.ts), so a create alone waits for neither; they are timed
 * apart, on this thread, to show what the thread does per order.
 */
async function postBreakdown(db: Database) {
  const N = 300;
  const derive = createAddressDeriver('Tron', SANDBOX_XPUBS.Tron);
  // Warmed up first, as the address thread's code is once it has made its first blocks.
  for (let i = 0; i < N; i++) addressQr(derive(20_000 + i));
  let t = performance.now();
  const addresses = Array.from({ length: N }, (_, i) => derive(10_000 + i));
  const deriveUs = ((performance.now() - t) * 1000) / N;
  t = performance.now();
  for (const address of addresses) addressQr(address);
  const qrUs = ((performance.now() - t) * 1000) / N;
  await migrate(db);
  const merchantId = '00000000-0000-4000-8000-000000000001';
  await db.query("INSERT INTO merchants (id, name, api_key) VALUES ($1, 'bench', 'pk_bench') ON CONFLICT DO NOTHING", [merchantId]);
  const orders = new Orders(db, testableConfig(), Date.now);
  t = performance.now();
  for (let i = 0; i < N; i++) {
    await orders.create(merchantId, orderRequest(`bd-${i}`));
  }
  const totalUs = ((performance.now() - t) * 1000) / N;
  await orders.close();
  return { deriveUs, qrUs, totalUs };
}

const percent = (share: number | undefined) => (share === undefined ? '–' : `${Math.round(100 * share)} %`);
const fmt = (f: Figures) =>
  `${Math.round(f.rps).toLocaleString('en-US')} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} | ${percent(f.busy)} | ${percent(f.server)} | ${percent(f.busiestThread)}`;

buildWhatChanged();
const postgres = startPostgres(54340);
try {
  const rows: string[] = [];
  const ratios: string[] = [];
  const moneyOut: string[] = [];
  const breakdowns: string[] = [];
  const pglite = await benchDatabase(undefined);
  const bare = await bareFastify({ ...pglite.order, receivedAmount: 0 });
  rows.push(`| bare Fastify JSON GET (limit) | ${fmt(bare)} |`);
  const results: [string, Awaited<ReturnType<typeof benchDatabase>>][] = [['PGlite', pglite]];
  let twoWorkers: Awaited<ReturnType<typeof benchDatabase>> | undefined;
  if (postgres) {
    // Throwaway databases on the server: a shared database (TEST_DATABASE_URL) is never touched.
    const fresh = await freshDatabase('postgres', postgres.url);
    await fresh.db.close();
    try {
      results.push(['PostgreSQL', await benchDatabase(fresh.url)]);
    } finally {
      await fresh.drop();
    }
    const second = await freshDatabase('postgres', postgres.url);
    await second.db.close();
    try {
      twoWorkers = await benchDatabase(second.url, 2);
    } finally {
      await second.drop();
    }
  }
  for (const [kind, r] of results) {
    rows.push(
      `| ${kind}: raw primary-key read loop, one query per read (limit) | ${fmt(r.raw)} |`,
      `| ${kind}: signed GET order | ${fmt(r.get)} |`,
      `| ${kind}: raw one-row insert loop (limit) | ${fmt(r.insert)} |`,
      `| ${kind}: signed POST order | ${fmt(r.post)} |`,
      `| ${kind}: signed GET balances | ${fmt(r.balances)} |`,
      `| ${kind}: signed POST withdrawal | ${fmt(r.withdrawal)} |`,
    );
    const ratio = (a: Figures, b: Figures) => `${(a.rps / b.rps).toFixed(2)} (${Math.round(a.rps)} / ${Math.round(b.rps)}) | ${(a.p99 / b.p99).toFixed(2)} (${a.p99.toFixed(1)} / ${b.p99.toFixed(1)})`;
    moneyOut.push(`| ${kind} | ${ratio(r.balances, r.get)} | ${ratio(r.withdrawal, r.post)} |`);
    const lower = Math.min(bare.rps, r.raw.rps);
    // The whole machine's CPU a request took (all processes: server, database, load generator), and what
    // the machine would have for one at the target rate with every core busy.
    const cpuUs = (f: Figures, targetRps: number) => `${Math.round((f.busy * CORES * 1e6) / f.rps)} / ${Math.round((CORES * 1e6) / targetRps)}`;
    ratios.push(
      `| ${kind} | ${(r.get.rps / lower).toFixed(2)} (${Math.round(r.get.rps)} / ${Math.round(lower)}) | ${((100 * r.post.rps) / r.insert.rps).toFixed(1)} % (${Math.round(r.post.rps)} / ${Math.round(r.insert.rps)}) | ${r.post.p99.toFixed(1)} | ${cpuUs(r.get, GET_TARGET * lower)} | ${cpuUs(r.post, POST_TARGET * r.insert.rps)} |`,
    );
  }
  const scaling: string[] = [];
  const one = results.find(([kind]) => kind === 'PostgreSQL')?.[1];
  if (one && twoWorkers) {
    rows.push(`| PostgreSQL, serve --workers 2: signed GET order | ${fmt(twoWorkers.get)} |`, `| PostgreSQL, serve --workers 2: signed POST order | ${fmt(twoWorkers.post)} |`);
    // More workers cannot use more CPU than the machine has left: at best the one-worker rate ÷ its busy share.
    const ceiling = (f: Figures) => `${(1 / f.busy).toFixed(2)}×`;
    scaling.push(`| signed GET order | ${Math.round(one.get.rps)} | ${Math.round(twoWorkers.get.rps)} | ${(twoWorkers.get.rps / one.get.rps).toFixed(2)}× | ${ceiling(one.get)} |`);
    scaling.push(`| signed POST order | ${Math.round(one.post.rps)} | ${Math.round(twoWorkers.post.rps)} | ${(twoWorkers.post.rps / one.post.rps).toFixed(2)}× (target ≥ 1.3×) | ${ceiling(one.post)} |`);
  }
  for (const kind of ['PGlite', ...(postgres ? ['PostgreSQL'] : [])]) {
    const fresh = kind === 'PGlite' ? { db: await openPglite(undefined), drop: async () => {} } : await freshDatabase('postgres', postgres!.url);
    const b = await postBreakdown(fresh.db);
    await fresh.db.close();
    await fresh.drop();
    breakdowns.push(`| ${kind} | ${b.totalUs.toFixed(0)} | ${b.deriveUs.toFixed(0)} | ${b.qrUs.toFixed(0)} |`);
  }
  publishResults(
    'server',
    [
      `${CONNECTIONS} connections (autocannon), ${SECONDS} s each, against a real \`partner-api serve\` process (logging off); the raw loops run with ${CONNECTIONS} concurrent loops and no HTTP.`,
      '',
      '| load | req/s | p50 ms | p99 ms | machine CPU busy | of it, the server | busiest server thread, of one core |\n|---|---:|---:|---:|---:|---:|---:|\n' + rows.join('\n'),
      '',
      `| database | GET / lower read limit (target ≥ ${getBar}) | POST / raw insert (target ≥ ${postBar}) | POST p99 ms (target < 25) | machine CPU a GET, µs: used / all the machine has for one at ${getBar} | machine CPU a POST, µs: used / all the machine has for one at ${postBar} |\n|---|---:|---:|---:|---:|---:|\n` +
        ratios.join('\n'),
      '',
      '| database | balance read / order read, req/s | its p99 / the order read\'s | withdrawal create / order create, req/s | its p99 / the order create\'s |\n|---|---:|---:|---:|---:|\n' + moneyOut.join('\n'),
      '',
      '| POST breakdown, in-process, one create at a time, µs | a create, one after another | address derivation (on the address thread) | QR code (on the address thread) |\n|---|---:|---:|---:|\n' + breakdowns.join('\n'),
      ...(scaling.length ? ['', '| PostgreSQL, req/s | 1 worker | 2 workers (`serve --workers 2`) | 2 / 1 | most any number of workers can give here (1 ÷ the 1-worker run\'s machine CPU busy) |\n|---|---:|---:|---:|---:|\n' + scaling.join('\n')] : []),
    ].join('\n'),
    { rows, ratios, moneyOut, breakdowns, scaling },
  );
} finally {
  postgres?.stop();
}
