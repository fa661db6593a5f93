// Reconciliation's lists and feed at depth (issue 32), side by side in one run (npm run bench:lists):
// one merchant's orders bulk-loaded with SQL (BENCH_LIST_ORDERS_PG on PostgreSQL, BENCH_LIST_ORDERS_PGLITE
// on PGlite, a few other merchants' rows sharing the indexes) and as many callback_outbox events, VACUUMed,
// then autocannon against a real `partner-api serve` process at one concurrency: the first page of 100, a
// page of 100 deep in the walk (its cursor minted with the platform's own CursorCodec and key), a single
// read of random orders, a page at the default limit (20), the feed's first and a deep page, and the
// three first pages and the read again in three walks of a merchant's, side by side (one connection,
// timed to the microsecond); then
// what the 009 indexes on deposit_orders cost a create (signed POSTs and a raw one-row INSERT loop, with the
// indexes and with them dropped). EXPLAIN (ANALYZE, BUFFERS) of the deep pages' statements shows the plan,
// and the pages' and the read's statements run alone, without HTTP, show what the database's part is.
// First, in this process, what a page's 100 payment links cost made the platform's way and with
// createHmac a token (the way before).
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { addressQr } from '../src/server/addresses/qr.js';
import { readFeed, type FeedPosition } from '../src/server/callbacks/feed.js';
import { openPglite, openPostgres, type Database, type Sql } from '../src/server/db/database.js';
import type { RowPosition } from '../src/server/db/pages.js';
import { SecretKeeper } from '../src/server/merchants/secrets.js';
import { PaymentLinks } from '../src/server/payment-page/links.js';
import { listOrders } from '../src/server/orders/order-list.js';
import { ORDER_JSON_BYTES } from '../src/server/orders/order-rows.js';
import { READ_ORDERS_SQL } from '../src/server/orders/orders.js';
import { CursorCodec, walkScope } from '../src/server/shared/cursors.js';
import { startPartnerApi, type Credentials } from '../test/support/partner-api.js';
import { freshDatabase } from '../test/support/platform.js';
import { orderRequest } from '../test/fixtures/orders.js';
import { buildWhatChanged, publishResults, startPostgres, statementLoop } from './support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
/** The raw INSERT loops: shorter, they only compare the table with and without the indexes. */
const INSERT_SECONDS = Number(process.env.BENCH_INSERT_SECONDS ?? 5);
const ORDERS = { postgres: Number(process.env.BENCH_LIST_ORDERS_PG ?? 1_000_000), pglite: Number(process.env.BENCH_LIST_ORDERS_PGLITE ?? 200_000) };
/** Other merchants whose rows share the indexes, and how many rows each (a share of the merchant's). */
const OTHER_MERCHANTS = 4;
const OTHER_SHARE = 0.01;
const PAGE = 100;
/** Pages before the deep page, at most: the issue's depth. A smaller load gets its last full page. */
const DEEP_PAGES = 10_000;
const SECRET_KEY = Buffer.alloc(32, 32).toString('base64');
/** The 009 indexes a create writes into (withdrawals_merchant_created is written by withdrawals, callback_outbox_feed by events). */
const CREATE_INDEXES: Record<string, string> = {
  deposit_orders_merchant_created: 'CREATE INDEX deposit_orders_merchant_created ON deposit_orders (merchant_id, created_at, uuid)',
  deposit_orders_merchant_updated: 'CREATE INDEX deposit_orders_merchant_updated ON deposit_orders (merchant_id, updated_at)',
};
/** The 009 indexes the lists and the feed read, whose size is reported. */
const READ_INDEXES = [...Object.keys(CREATE_INDEXES), 'callback_outbox_feed'];

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** Bytes of a response, body and headers (autocannon's throughput ÷ requests). */
  bytes: number;
}

function sign(secret: string, method: string, target: string, body = '') {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = createHmac('sha256', secret).update(`${timestamp}${method}${target}${body}`).digest('hex');
  return { 'X-Timestamp': String(timestamp), 'X-Signature': signature };
}

/**
 * autocannon at CONNECTIONS for `seconds`; every request signed afresh (setupRequest applies only to
 * entries of `requests`). Any response but `status` (200; a create's 201) fails the run: a 4xx is no throughput.
 */
async function load(
  baseUrl: string,
  credentials: Credentials,
  next: () => { method?: 'GET' | 'POST'; path: string; body?: string },
  seconds = SECONDS,
  status = '200',
): Promise<Figures> {
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const { method = 'GET', path, body } = next();
          const headers: Record<string, string> = { 'X-Api-Key': credentials.apiKey, ...sign(credentials.apiSecret, method, path, body) };
          if (body !== undefined) headers['Content-Type'] = 'application/json';
          return { ...request, method, path, headers, ...(body === undefined ? {} : { body }) };
        },
      },
    ],
  });
  const codes = Object.keys(result.statusCodeStats ?? {});
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || codes.some((code) => code !== status) || result.requests.total === 0) {
    throw new Error(`load on ${next().path}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx, status codes ${codes.join(', ')}`);
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, bytes: result.throughput.average / result.requests.average };
}

/** How long each load of a side-by-side walk runs before the next takes its turn. */
const WALK_BLOCK_MS = 250;

/**
 * A merchant's walk: one connection, one request after another, each timed to the microsecond
 * (autocannon reports whole milliseconds: at one connection a read's p99 of "1" and a page's of "2"
 * could be a ratio of 1.4 or of 4). The loads take turns in blocks of WALK_BLOCK_MS, after 2 s of turns
 * not recorded, until each has had SECONDS: side by side, so that what the machine's neighbours do to
 * it falls on each load alike (walked one after another, a read's p99 moved from 0.9 to 1.5 ms between
 * runs, and every ratio with it). Any status but 200 fails the run.
 *
 * The client reads every response into one buffer (net's `onread`) and only counts its bytes: through
 * node:http, which allocates each read, the bench's own process made about 50 full garbage collections
 * in 10 s of pages of 100, 3-10 ms each, and they fell inside 2 % of the pages it timed (its p99 11.9 ms,
 * 7.8 without them): the client's pauses, not the platform's.
 */
async function walkSideBySide<Name extends string>(baseUrl: string, credentials: Credentials, loads: Record<Name, () => { path: string }>): Promise<Record<Name, Walked>> {
  const { hostname, port } = new URL(baseUrl);
  const connection = await HttpConnection.open(hostname, Number(port));
  const names = Object.keys(loads) as Name[];
  const walked = Object.fromEntries(names.map((name) => [name, { latencies: [] as number[], bytes: 0, ms: 0 }])) as Record<Name, { latencies: number[]; bytes: number; ms: number }>;
  try {
    const warmUpEnd = performance.now() + 2000;
    for (let turn = 0; names.some((name) => walked[name].ms < SECONDS * 1000); turn++) {
      const name = names[turn % names.length]!;
      const recorded = performance.now() >= warmUpEnd;
      const blockStart = performance.now();
      while (performance.now() - blockStart < WALK_BLOCK_MS) {
        const { path } = loads[name]();
        const headers = { 'X-Api-Key': credentials.apiKey, ...sign(credentials.apiSecret, 'GET', path) };
        const started = performance.now();
        const { status, bodyBytes } = await connection.get(path, headers);
        if (status !== 200) throw new Error(`GET ${path}: ${status}`);
        if (recorded) {
          walked[name].latencies.push(performance.now() - started);
          walked[name].bytes += bodyBytes;
        }
      }
      if (recorded) walked[name].ms += performance.now() - blockStart;
    }
  } finally {
    connection.close();
  }
  return walked;
}

/** What one load of a walk recorded: each request's latency (ms), the body bytes, and the time it had. */
interface Walked {
  latencies: number[];
  bytes: number;
  ms: number;
}

function walkFigures({ latencies, bytes, ms }: Walked): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (share: number) => sorted[Math.floor(sorted.length * share)]!;
  return { rps: (sorted.length * 1000) / ms, p50: at(0.5), p99: at(0.99), bytes: bytes / sorted.length };
}

/** Walks in a run: one walk's p99 of a load moves by more than the goal's margin on this shared machine. */
const WALKS = Number(process.env.BENCH_WALKS ?? 3);

/**
 * WALKS walks one after another (walkSideBySide), each on a connection of its own. The figures are
 * those of every walk's requests together (WALKS × SECONDS of each load: a p99 of three times the
 * requests), and each walk's own p99s are kept beside them, to show how far one walk's verdict moves.
 */
async function walks<Name extends string>(baseUrl: string, credentials: Credentials, loads: Record<Name, () => { path: string }>): Promise<{ pooled: Record<Name, Figures>; each: Record<Name, Figures>[] }> {
  const runs: Record<Name, Walked>[] = [];
  for (let walk = 0; walk < WALKS; walk++) runs.push(await walkSideBySide(baseUrl, credentials, loads));
  const names = Object.keys(loads) as Name[];
  const pooled = Object.fromEntries(
    names.map((name) => [
      name,
      walkFigures({
        latencies: runs.flatMap((run) => run[name].latencies),
        bytes: runs.reduce((sum, run) => sum + run[name].bytes, 0),
        ms: runs.reduce((sum, run) => sum + run[name].ms, 0),
      }),
    ]),
  ) as Record<Name, Figures>;
  const each = runs.map((run) => Object.fromEntries(names.map((name) => [name, walkFigures(run[name])])) as Record<Name, Figures>);
  return { pooled, each };
}

/** What a response head may take (the platform's are under 1 KiB). */
const HEAD_MAX = 16 * 1024;

/**
 * One keep-alive HTTP/1.1 connection for GETs whose responses carry a Content-Length (the platform's
 * all do), read into one reused buffer: the head is decoded, the body only counted.
 */
class HttpConnection {
  private head = '';
  private bodyLeft = -1;
  private status = 0;
  private bodyBytes = 0;
  private waiting: { resolve: (answer: { status: number; bodyBytes: number }) => void; reject: (error: Error) => void } | undefined;

  private constructor(private readonly socket: Socket) {}

  static open(host: string, port: number): Promise<HttpConnection> {
    return new Promise((resolve, reject) => {
      let connection: HttpConnection;
      const buffer = Buffer.alloc(1 << 20);
      const onread = {
        buffer,
        callback: (length: number) => {
          try {
            connection.take(buffer, length);
          } catch (error) {
            connection.waiting?.reject(error as Error);
            socket.destroy();
          }
          return true;
        },
      };
      const socket = connect({ host, port, onread }, () => resolve(connection));
      connection = new HttpConnection(socket);
      socket.setNoDelay(true);
      socket.on('error', (error) => (connection.waiting ? connection.waiting.reject(error) : reject(error)));
      socket.on('close', () => connection.waiting?.reject(new Error('the server closed the connection')));
    });
  }

  get(path: string, headers: Record<string, string>): Promise<{ status: number; bodyBytes: number }> {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\n${lines}\r\n`);
    });
  }

  private take(buffer: Buffer, length: number): void {
    let at = 0;
    if (this.bodyLeft < 0) {
      // The head, kept as text until its blank line, which may come in a later read or be split
      // between two: decoded up to the blank line when this read holds it, else up to HEAD_MAX bytes.
      const seen = this.head.length;
      const blank = buffer.subarray(0, length).indexOf('\r\n\r\n');
      this.head += buffer.toString('latin1', 0, blank >= 0 ? blank + 4 : Math.min(length, HEAD_MAX));
      const end = this.head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (this.head.length >= HEAD_MAX) throw new Error(`a response head over ${HEAD_MAX} bytes`);
        return;
      }
      this.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(this.head)?.[1]);
      const size = /\r\ncontent-length: *(\d+)/i.exec(this.head.slice(0, end + 2));
      if (!size) throw new Error(`a response without Content-Length: ${this.head.slice(0, end)}`);
      this.bodyLeft = Number(size[1]);
      this.bodyBytes = this.bodyLeft;
      at = end + 4 - seen; // where the body starts in this read
    }
    this.bodyLeft -= length - at;
    if (this.bodyLeft > 0) return;
    if (this.bodyLeft < 0) throw new Error('more bytes than the response announced');
    const waiting = this.waiting!;
    this.head = '';
    this.bodyLeft = -1;
    this.waiting = undefined;
    waiting.resolve({ status: this.status, bodyBytes: this.bodyBytes });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** One signed request, its status and JSON body: to check what a load will ask before measuring it. */
async function fetchJson(baseUrl: string, credentials: Credentials, path: string): Promise<any> {
  const response = await fetch(baseUrl + path, { headers: { 'X-Api-Key': credentials.apiKey, ...sign(credentials.apiSecret, 'GET', path) } });
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A Tron-shaped address of index n: 'T' and 33 base58 characters, unique per n. */
const TRON_ADDRESS = (n: string) => `'T' || translate(lpad((${n})::text, 33, 'z'), '0', 'o')`;

/**
 * `count` orders of a merchant, newest `createdAt - 1 ms`, one per millisecond before it (distinct
 * created_at), DONE or (every tenth) EXPIRED, nothing left NEW (the expiry job has nothing to do and
 * the open-order count stays small), and each its delivered callback event, in the order of time. The
 * address indexes start at `firstIndex`, far above what the platform's pool hands out.
 */
async function loadOrders(db: Database, merchantId: string, count: number, firstIndex: number, newest: Date, qr: string): Promise<void> {
  await db.query(
    `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address,
                                 address_qr, status, min_amount, received_amount, expired_at, created_at, updated_at)
     SELECT gen_random_uuid(), $1::uuid, 'bulk-' || i, 'Tron', 'USDT', 'cust-' || (i % 5000), 'https://merchant.example/callbacks/deposits',
            $2::bigint + i, ${TRON_ADDRESS('$2::bigint + i')}, $3,
            CASE WHEN i % 10 = 0 THEN 'EXPIRED' ELSE 'DONE' END, 1000000, CASE WHEN i % 10 = 0 THEN 0 ELSE 1000000 END,
            $4::timestamptz - i * interval '1 millisecond' + interval '1 hour',
            $4::timestamptz - i * interval '1 millisecond',
            $4::timestamptz - i * interval '1 millisecond' + CASE WHEN i % 10 = 0 THEN interval '1 hour' ELSE interval '30 seconds' END
       FROM generate_series(1, $5::int) AS i`,
    [merchantId, firstIndex, qr, newest.toISOString(), count],
  );
  // The body as the platform freezes it (callbacks/outbox.ts): the order as the read returns it, the event, when and its sequence.
  const order = (status: string) => `'uuid', o.uuid, 'blockchain', o.blockchain, 'currency', o.currency, 'targetCurrency', o.currency,
    'customerId', o.customer_id, 'address', o.address, 'addressQr', o.address_qr,
    'expiredAt', to_char(o.expired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), 'rate', 1, 'status', '${status}',
    'minAmount', o.min_amount, 'receivedAmount', o.received_amount,
    'occurredAt', to_char(o.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), 'sequence', 1`;
  await db.query(
    `INSERT INTO callback_outbox (webhook_id, merchant_id, order_uuid, event, url, body, state, attempts, next_attempt_at, created_at, delivered_at, sequence)
     SELECT 'msg_' || replace(o.uuid::text, '-', ''), o.merchant_id, o.uuid,
            CASE WHEN o.status = 'DONE' THEN 'order.deposit' ELSE 'order.expired' END, o.callback_url,
            CASE WHEN o.status = 'DONE'
                 THEN json_build_object('event', 'order.deposit', 'amount', o.received_amount, 'txId', md5(o.uuid::text) || md5(o.external_id), ${order('DONE')})
                 ELSE json_build_object('event', 'order.expired', ${order('EXPIRED')}) END::text,
            'delivered', 1, o.updated_at, o.updated_at, o.updated_at + interval '80 milliseconds', 1
       FROM deposit_orders o WHERE o.merchant_id = $1 ORDER BY o.updated_at, o.uuid`,
    [merchantId],
  );
}

interface Loaded {
  merchantId: string;
  orders: number;
  /** The deep pages' cursors: the position of the row before them. */
  deepOrders: RowPosition;
  deepOrdersOffset: number;
  deepEvents: FeedPosition;
  deepEventsOffset: number;
  /** Random orders of the merchant, for the single read. */
  sample: string[];
  loadSeconds: number;
  tableMb: number;
  /** The 009 indexes' sizes, MB. */
  indexMb: Record<string, number>;
}

/** The merchant's orders and events, and the other merchants' around them; VACUUM and ANALYZE; the deep positions. */
async function bulkLoad(db: Database, apiKey: string, count: number): Promise<Loaded> {
  const started = performance.now();
  const [merchant] = await db.query<{ id: string }>('SELECT id::text AS id FROM merchants WHERE api_key = $1', [apiKey]);
  const merchantId = merchant!.id;
  const qr = addressQr('TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK'); // a real QR data URL: the size of every order's
  const newest = new Date(Date.now() - 60_000);
  await loadOrders(db, merchantId, count, 1_000_000_000, newest, qr);
  for (let k = 1; k <= OTHER_MERCHANTS; k++) {
    const other = randomUUID();
    await db.query('INSERT INTO merchants (id, name, api_key) VALUES ($1, $2, $3)', [other, `bench other ${k}`, `pk_test_bench_other_${k}`]);
    // Interleaved in time with the merchant's rows (a different millisecond phase).
    await loadOrders(db, other, Math.ceil(count * OTHER_SHARE), 1_000_000_000 + k * 10_000_000, new Date(newest.getTime() - 7 * k), qr);
  }
  // A table at rest, as one in service is once autovacuum has passed: rows frozen and their hint bits
  // set, the visibility map made, the dirty pages written. Left as loaded, the first read of each row
  // dirtied its page (EXPLAIN showed a page's buffers written as it read them), and autovacuum
  // came to a table of a million new rows while the loads ran.
  await db.query('VACUUM (FREEZE, ANALYZE)');
  await db.query('CHECKPOINT');
  const loadSeconds = (performance.now() - started) / 1000;
  // The last full page after at most DEEP_PAGES pages: the row just before it holds the cursor.
  const deepOrdersOffset = Math.min(DEEP_PAGES * PAGE, count - PAGE);
  const [row] = await db.query<{ uuid: string }>(
    `SELECT o.uuid::text AS uuid FROM deposit_orders o
      WHERE o.merchant_id = $1 ORDER BY o.created_at DESC, o.uuid DESC OFFSET $2 LIMIT 1`,
    [merchantId, deepOrdersOffset - 1],
  );
  const [events] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM callback_outbox WHERE merchant_id = $1', [merchantId]);
  const deepEventsOffset = Math.min(DEEP_PAGES * PAGE, Number(events!.n) - PAGE);
  const [event] = await db.query<{ tx_id: string; id: string }>(
    // By the columns: `ORDER BY tx_id, id` would sort by the text aliases, where '1000000' comes before '999900'.
    'SELECT o.tx_id::text AS tx_id, o.id::text AS id FROM callback_outbox o WHERE o.merchant_id = $1 ORDER BY o.tx_id, o.id OFFSET $2 LIMIT 1',
    [merchantId, deepEventsOffset - 1],
  );
  const picks = Array.from({ length: 1000 }, () => `bulk-${1 + Math.floor(Math.random() * count)}`);
  const sample = (await db.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM deposit_orders WHERE merchant_id = $1 AND external_id = ANY($2::text[])', [merchantId, picks])).map((r) => r.uuid);
  const [size] = await db.query<{ bytes: string }>("SELECT pg_total_relation_size('deposit_orders')::text AS bytes");
  const indexMb: Record<string, number> = {};
  for (const name of READ_INDEXES) {
    const [index] = await db.query<{ bytes: string }>('SELECT pg_relation_size($1::regclass)::text AS bytes', [name]);
    indexMb[name] = Number(index!.bytes) / 2 ** 20;
  }
  return {
    indexMb,
    merchantId,
    orders: count,
    deepOrders: [row!.uuid],
    deepOrdersOffset,
    // Seen until now: a walk that has just read up to here.
    deepEvents: [event!.tx_id, event!.id, String(Date.now())],
    deepEventsOffset,
    sample,
    loadSeconds,
    tableMb: Number(size!.bytes) / 2 ** 20,
  };
}

/** The statement (and values) a function would send, without running it. */
async function statementOf(run: (sql: Sql) => Promise<unknown>, answer: Record<string, unknown>[] = []): Promise<[string, unknown[]]> {
  let captured: [string, unknown[]] | undefined;
  const query = async <Row>(text: string, params: readonly unknown[] = []) => {
    captured ??= [text, [...params]];
    return answer as Row[];
  };
  await run({ query, queryBytes: async (text, params) => ({ rows: await query(text, params), release: () => {} }) });
  return captured!;
}

/** EXPLAIN (ANALYZE, BUFFERS) of the deep pages' statements, exactly as the platform builds them. */
async function explainDeep(db: Database, loaded: Loaded) {
  const explain = async ([text, params]: [string, unknown[]]) =>
    (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params)).map((r) => r['QUERY PLAN']).join('\n');
  const orders = await explain(await statementOf((sql) => listOrders(sql, loaded.merchantId, {}, loaded.deepOrders, PAGE)));
  const feed = await explain(await statementOf((sql) => readFeed(sql, loaded.merchantId, 'orders', {}, loaded.deepEvents, PAGE), [{ now_ms: '0', id: null }]));
  // Of the nodes that ran, a sequential scan of the listed table or a sort. The orders' plan also holds
  // the unconfirmed transfers' check (a scan of that small table, once) and their subplan, which never
  // runs while it is empty: neither reads the orders.
  const verdict = (plan: string, table: string, index: string) => {
    const ran = plan.split('\n').filter((line) => !line.includes('never executed'));
    return {
      indexRange: plan.includes(index) && /Index Scan/.test(plan),
      fullScanOrSort: ran.some((line) => line.includes(`Seq Scan on ${table} `) || /(^|->)\s*(Incremental )?Sort\s+\(/.test(line.trim())),
    };
  };
  return {
    orders,
    feed,
    ordersVerdict: verdict(orders, 'deposit_orders', 'deposit_orders_merchant_created'),
    feedVerdict: verdict(feed, 'callback_outbox', 'callback_outbox_feed'),
  };
}

/**
 * The database alone, no HTTP: the platform's statements of a page of 100 and of 20 (the first pages)
 * and of one order's read (as a lone read sends it), in CONNECTIONS loops each. What a page costs the
 * database and its driver against a read, below anything the HTTP layer adds or could save.
 */
async function databaseAlone(db: Database, loaded: Loaded) {
  const page = (limit: number) => statementOf((sql) => listOrders(sql, loaded.merchantId, {}, undefined, limit));
  const [page100, page20] = [await page(PAGE), await page(20)];
  let n = 0;
  return {
    page100: await statementLoop(db, CONNECTIONS, INSERT_SECONDS, () => page100, ORDER_JSON_BYTES),
    page20: await statementLoop(db, CONNECTIONS, INSERT_SECONDS, () => page20, ORDER_JSON_BYTES),
    read: await statementLoop(db, CONNECTIONS, INSERT_SECONDS, () => [READ_ORDERS_SQL, [[loaded.sample[n++ % loaded.sample.length]]]]),
  };
}

/** A plain one-row INSERT of an order-shaped row into deposit_orders, as the loads' rows are. */
function rawOrderInsert(db: Database, merchantId: string, qr: string, firstIndex: number) {
  return statementLoop(db, CONNECTIONS, INSERT_SECONDS, (i) => [
    `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
     VALUES ($1, $2, $3, 'Tron', 'USDT', 'cust-42', 'https://merchant.example/callbacks/deposits', $4::bigint, ${TRON_ADDRESS('$4::bigint')}, $5, 1000000, now() + interval '1 hour')`,
    [randomUUID(), merchantId, `raw-${firstIndex}-${i}`, firstIndex + i, qr],
  ]);
}

type WalkLoads = { first: Figures; list20: Figures; feedFirst: Figures; single: Figures };

interface Result {
  database: string;
  loaded: Omit<Loaded, 'sample'>;
  /** Rows of each measured page, as checked once before its load. */
  rows: Record<string, number>;
  first: Figures;
  deep: Figures;
  single: Figures;
  list20: Figures;
  feedFirst: Figures;
  feedDeep: Figures;
  /** The first page of 100, of 20, the feed's first page of 100 and the single read in WALKS walks together (walks()); bytes of the body. */
  lone: WalkLoads;
  /** The same, walk by walk. */
  eachWalk: WalkLoads[];
  postWith: Figures;
  postWithout: Figures;
  postWithAgain: Figures;
  insertWith: Omit<Figures, 'bytes'>;
  insertWithout: Omit<Figures, 'bytes'>;
  insertWithAgain: Omit<Figures, 'bytes'>;
  /** Seconds to build the two indexes again on the loaded table. */
  rebuildSeconds: number;
  explain: Awaited<ReturnType<typeof explainDeep>>;
  alone: Awaited<ReturnType<typeof databaseAlone>>;
}

/** Tokens a block, and blocks measured a variant (after one to warm up), of the payment links' comparison. */
const TOKENS_A_BLOCK = 100_000;
const TOKEN_BLOCKS = 3;

interface TokenFigures {
  /** µs a token, the median block's. */
  micros: number;
  /** Garbage-collection pauses a page of 100 links, µs (the median block's total, per 100 tokens). */
  gcMicrosAPage: number;
}

/**
 * A list page's payment links (100 a page): the platform's (PaymentLinks, one-shot hashes over pads made
 * once) against createHmac a token, as it made them before, in one process, blocks taking turns (A B B
 * A …); the pauses the collector makes meanwhile, from the process's gc entries, are counted with each.
 */
async function linkTokens(): Promise<{ platform: TokenFigures; createHmac: TokenFigures; same: boolean }> {
  const key = Buffer.alloc(32, 9);
  const links = new PaymentLinks(key, () => 'http://127.0.0.1:8080');
  const uuids = Array.from({ length: 1000 }, () => randomUUID());
  const variants = {
    platform: (uuid: string) => links.path(uuid),
    createHmac: (uuid: string) => `/pay/${uuid}/${createHmac('sha256', key).update(uuid).digest().subarray(0, 16).toString('base64url')}`,
  };
  const same = uuids.every((uuid) => variants.platform(uuid) === variants.createHmac(uuid));
  const pauses: { start: number; duration: number }[] = [];
  const observer = new PerformanceObserver((list) => pauses.push(...list.getEntries().map((e) => ({ start: e.startTime, duration: e.duration }))));
  observer.observe({ entryTypes: ['gc'] });
  const blocks: Record<keyof typeof variants, { micros: number; gc: number }[]> = { platform: [], createHmac: [] };
  const order: (keyof typeof variants)[] = ['platform', 'createHmac', 'createHmac', 'platform'];
  for (let round = 0; round <= TOKEN_BLOCKS; round++) {
    for (const name of order.slice((round % 2) * 2, (round % 2) * 2 + 2)) {
      const make = variants[name];
      const started = performance.now();
      for (let i = 0; i < TOKENS_A_BLOCK; i++) make(uuids[i % uuids.length]!);
      const ended = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 50)); // the block's gc entries are delivered
      const gc = pauses.filter((p) => p.start >= started && p.start < ended).reduce((sum, p) => sum + p.duration, 0);
      if (round > 0) blocks[name].push({ micros: ((ended - started) * 1000) / TOKENS_A_BLOCK, gc }); // round 0 warms up
    }
  }
  observer.disconnect();
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const figures = (name: keyof typeof variants): TokenFigures => ({
    micros: median(blocks[name].map((b) => b.micros)),
    gcMicrosAPage: (median(blocks[name].map((b) => b.gc)) * 1000 * 100) / TOKENS_A_BLOCK,
  });
  return { platform: figures('platform'), createHmac: figures('createHmac'), same };
}

/** The whole run on one database: PGlite in DATA_DIR (no URL) or a fresh PostgreSQL database. */
async function benchDatabase(kind: 'PGlite' | 'PostgreSQL', databaseUrl: string | undefined): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'partner-bench-lists-'));
  const env = {
    DATA_DIR: dataDir,
    SECRET_KEY,
    LOG_LEVEL: 'silent',
    RATE_LIMIT: '1000000/1',
    MAX_OPEN_ORDERS_PER_MERCHANT: '10000000',
    DATABASE_POOL_SIZE: String(CONNECTIONS),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  // PGlite is one process's database: the bench opens it only while no server runs.
  const openDirect = () => (databaseUrl ? openPostgres(databaseUrl, CONNECTIONS) : openPglite(join(dataDir, 'pglite')));
  try {
    // The first start migrates and makes the sandbox merchant.
    let platform = await startPartnerApi(env);
    const credentials = platform.sandbox!;
    await platform.stop();

    let db = await openDirect();
    const count = databaseUrl ? ORDERS.postgres : ORDERS.pglite;
    console.log(`${kind}: loading ${count.toLocaleString('en-US')} orders and events …`);
    const loaded = await bulkLoad(db, credentials.apiKey, count);
    console.log(`${kind}: loaded in ${loaded.loadSeconds.toFixed(0)} s (deposit_orders ${loaded.tableMb.toFixed(0)} MB)`);
    const explain = await explainDeep(db, loaded);
    const alone = await databaseAlone(db, loaded);
    console.log(`${kind} the database alone: page of 100 ${Math.round(alone.page100.rps)}/s p99 ${alone.page100.p99.toFixed(1)} ms, page of 20 ${Math.round(alone.page20.rps)}/s, read ${Math.round(alone.read.rps)}/s p99 ${alone.read.p99.toFixed(1)} ms`);
    await db.close();

    const codec = new CursorCodec(new SecretKeeper(Buffer.from(SECRET_KEY, 'base64')).cursorKey());
    const deepOrdersCursor = codec.encode(loaded.merchantId, walkScope('orders', {}), loaded.deepOrders);
    const deepEventsCursor = codec.encode(loaded.merchantId, walkScope('events', {}), loaded.deepEvents);
    const paths = {
      first: `/partner/v1/platforms/orders?limit=${PAGE}`,
      deep: `/partner/v1/platforms/orders?limit=${PAGE}&cursor=${encodeURIComponent(deepOrdersCursor)}`,
      list20: '/partner/v1/platforms/orders',
      feedFirst: `/partner/v1/platforms/events?limit=${PAGE}`,
      feedDeep: `/partner/v1/platforms/events?limit=${PAGE}&cursor=${encodeURIComponent(deepEventsCursor)}`,
    };

    platform = await startPartnerApi(env);
    const { baseUrl } = platform;
    // What each load asks, checked once: full pages, and the deep ones where they should be.
    const rows: Record<string, number> = {};
    for (const [name, path] of Object.entries(paths)) {
      const page = await fetchJson(baseUrl, credentials, path);
      const expected = name === 'list20' ? 20 : PAGE;
      rows[name] = page.data.length;
      if (page.data.length !== expected) console.warn(`${kind} ${name}: ${page.data.length} rows, expected ${expected}`);
    }
    const deepPage = await fetchJson(baseUrl, credentials, paths.deep);
    const lastOrder = await fetchJson(baseUrl, credentials, `/partner/v2/platforms/orders/${deepPage.data.at(-1).uuid}`);
    if (lastOrder.uuid !== deepPage.data.at(-1).uuid) throw new Error('the deep page names an order the read does not find');

    const measure = async (name: string, next: () => { path: string }) => {
      await load(baseUrl, credentials, next, 2); // warm-up
      const figures = await load(baseUrl, credentials, next);
      console.log(`${kind} ${name} (${CONNECTIONS} connections): ${Math.round(figures.rps)} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, ${Math.round(figures.bytes)} B`);
      return figures;
    };
    let n = 0;
    const first = await measure('first page of 100', () => ({ path: paths.first }));
    const deep = await measure('deep page of 100', () => ({ path: paths.deep }));
    const single = await measure('single read', () => ({ path: `/partner/v2/platforms/orders/${loaded.sample[n++ % loaded.sample.length]}` }));
    const list20 = await measure('first page of 20', () => ({ path: paths.list20 }));
    const feedFirst = await measure('feed, first page of 100', () => ({ path: paths.feedFirst }));
    const feedDeep = await measure('feed, deep page of 100', () => ({ path: paths.feedDeep }));
    const walked = await walks(baseUrl, credentials, {
      first: () => ({ path: paths.first }),
      list20: () => ({ path: paths.list20 }),
      feedFirst: () => ({ path: paths.feedFirst }),
      single: () => ({ path: `/partner/v2/platforms/orders/${loaded.sample[n++ % loaded.sample.length]}` }),
    });
    const lone = walked.pooled;
    const eachWalk = walked.each;
    for (const [name, figures] of Object.entries(lone)) {
      console.log(`${kind} ${name} (${WALKS} walks): ${Math.round(figures.rps)} req/s, p50 ${figures.p50.toFixed(2)} ms, p99 ${figures.p99.toFixed(2)} ms`);
    }
    await platform.stop();

    // A create with the indexes and without: each on a server started afresh, after a warm-up, beside
    // a raw one-row INSERT loop on the same table (no HTTP, no address pool) just before it.
    let m = 0;
    const post = () => {
      const body = JSON.stringify(orderRequest(`lists-${process.pid}-${kind}-${m++}`));
      return { method: 'POST' as const, path: '/partner/v1/platforms/orders', body };
    };
    const qr = addressQr('TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK');
    const creates = async (label: string, firstIndex: number, before?: (db: Database) => Promise<void>) => {
      const direct = await openDirect();
      await before?.(direct);
      const insert = await rawOrderInsert(direct, loaded.merchantId, qr, firstIndex);
      await direct.close();
      const server = await startPartnerApi(env);
      try {
        // One create first: a server just started on a large table may take seconds to answer its first.
        const first = post();
        const answer = await fetch(server.baseUrl + first.path, { method: 'POST', body: first.body, headers: { 'Content-Type': 'application/json', 'X-Api-Key': credentials.apiKey, ...sign(credentials.apiSecret, 'POST', first.path, first.body) } });
        if (answer.status !== 201) throw new Error(`POST ${first.path}: ${answer.status} ${await answer.text()}`);
        await load(server.baseUrl, credentials, post, 3, '201');
        const figures = await load(server.baseUrl, credentials, post, SECONDS, '201');
        console.log(`${kind} creates ${label}: raw INSERT ${Math.round(insert.rps)}/s p99 ${insert.p99.toFixed(1)} ms; POST ${Math.round(figures.rps)} req/s p99 ${figures.p99} ms`);
        return { insert, post: figures };
      } finally {
        await server.stop();
      }
    };
    // A, B, A: with the indexes, without, with them again, so that what the runs' order does (a table
    // that grows, a machine that is busier) shows apart from what the indexes do.
    const withIndexes = await creates('with the 009 indexes', 1_500_000_000);
    const withoutIndexes = await creates('without them', 1_600_000_000, async (direct) => {
      for (const name of Object.keys(CREATE_INDEXES)) await direct.query(`DROP INDEX ${name}`);
    });
    let rebuildSeconds = 0;
    const withAgain = await creates('with the 009 indexes again', 1_700_000_000, async (direct) => {
      const started = performance.now();
      for (const statement of Object.values(CREATE_INDEXES)) await direct.query(statement);
      rebuildSeconds = (performance.now() - started) / 1000;
    });
    const [postWith, postWithout, insertWith, insertWithout] = [withIndexes.post, withoutIndexes.post, withIndexes.insert, withoutIndexes.insert];
    const [postWithAgain, insertWithAgain] = [withAgain.post, withAgain.insert];
    const { sample: _sample, ...rest } = loaded;
    return { database: kind, loaded: rest, rows, first, deep, single, list20, feedFirst, feedDeep, lone, eachWalk, postWith, postWithout, postWithAgain, insertWith, insertWithout, insertWithAgain, rebuildSeconds, explain, alone };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const ms = (value: number, digits = 1) => value.toFixed(digits);
const row = (label: string, f: Figures, digits = 1) =>
  `| ${label} | ${Math.round(f.rps).toLocaleString('en-US')} | ${ms(f.p50, digits)} | ${ms(f.p99, digits)} | ${(f.bytes / 1024).toFixed(1)} |`;
const ratioOnly = (a: number, b: number, digits = 1) => `${(a / b).toFixed(2)} (${ms(a, digits)} / ${ms(b, digits)})`;
const ratio = (a: number, b: number, goal: number, digits = 1) => `${ratioOnly(a, b, digits)} ${a / b <= goal ? '✓' : '✗'}`;
const cost = (without: number, withIndexes: number) => `${(100 * (without / withIndexes - 1)).toFixed(0)} %`;

buildWhatChanged();
const postgres = startPostgres(54344);
try {
  const links = await linkTokens();
  console.log(`payment links: ${links.platform.micros.toFixed(2)} µs a token (createHmac ${links.createHmac.micros.toFixed(2)}), gc ${links.platform.gcMicrosAPage.toFixed(0)} µs a page (createHmac ${links.createHmac.gcMicrosAPage.toFixed(0)})`);
  if (!links.same) throw new Error("the platform's payment links differ from createHmac's");
  const results: Result[] = [];
  results.push(await benchDatabase('PGlite', undefined));
  if (postgres) {
    const fresh = await freshDatabase('postgres', postgres.url);
    await fresh.db.close();
    try {
      results.push(await benchDatabase('PostgreSQL', fresh.url));
    } finally {
      await fresh.drop();
    }
  }
  const tables: string[] = [];
  for (const r of results) {
    const depth = `after ${(r.loaded.deepOrdersOffset / PAGE).toLocaleString('en-US')} pages (offset ${r.loaded.deepOrdersOffset.toLocaleString('en-US')})`;
    tables.push(
      `**${r.database}**: ${r.loaded.orders.toLocaleString('en-US')} orders of one merchant and as many events, ${OTHER_MERCHANTS} other merchants with ${Math.ceil(r.loaded.orders * OTHER_SHARE).toLocaleString('en-US')} each (deposit_orders ${r.loaded.tableMb.toFixed(0)} MB, loaded in ${r.loaded.loadSeconds.toFixed(0)} s); the deep pages ${depth}.`,
      '',
      '| load | req/s | p50 ms | p99 ms | KiB a response |',
      '|---|---:|---:|---:|---:|',
      row('orders, first page of 100', r.first),
      row(`orders, deep page of 100 (${depth})`, r.deep),
      row('orders, first page of 20 (the default limit)', r.list20),
      row('single read `GET /partner/v2/platforms/orders/{uuid}`, random orders', r.single),
      row('events feed, first page of 100', r.feedFirst),
      row(`events feed, deep page of 100 (after ${(r.loaded.deepEventsOffset / PAGE).toLocaleString('en-US')} pages; ${r.rows.feedDeep} rows)`, r.feedDeep),
      '',
      '| ratio of p99s | measured | goal |',
      '|---|---:|---:|',
      `| orders: deep page / first page (100) | ${ratio(r.deep.p99, r.first.p99, 1.5)} | ≤ 1.5 |`,
      `| feed: deep page / first page (100) | ${ratio(r.feedDeep.p99, r.feedFirst.p99, 1.5)} | ≤ 1.5 |`,
      `| list page of 100 / single read, saturated | ${ratioOnly(r.first.p99, r.single.p99)} | ≤ 3 at a merchant's pace (below) |`,
      `| list page of 20 / single read, saturated | ${ratioOnly(r.list20.p99, r.single.p99)} | ≤ 3 at a merchant's pace (below) |`,
      '',
      `A merchant's walk: one connection, one request after another, each timed to the microsecond (not autocannon's whole milliseconds) by a client that reads into one reused buffer; the four loads side by side, taking turns in blocks of ${WALK_BLOCK_MS} ms until each has had ${SECONDS} s, after 2 s of turns not recorded; ${WALKS} such walks one after another, their requests counted together (${WALKS * SECONDS} s of each load):`,
      '',
      '| load | req/s | p50 ms | p99 ms | KiB a body |',
      '|---|---:|---:|---:|---:|',
      row('orders, first page of 100', r.lone.first, 2),
      row('orders, first page of 20', r.lone.list20, 2),
      row('events feed, first page of 100', r.lone.feedFirst, 2),
      row('single read, random orders', r.lone.single, 2),
      '',
      '| ratio of p99s | measured | goal |',
      '|---|---:|---:|',
      `| list page of 100 / single read | ${ratio(r.lone.first.p99, r.lone.single.p99, 3, 2)} | ≤ 3 |`,
      `| list page of 20 / single read | ${ratio(r.lone.list20.p99, r.lone.single.p99, 3, 2)} | ≤ 3 |`,
      `| feed page of 100 / single read | ${ratio(r.lone.feedFirst.p99, r.lone.single.p99, 3, 2)} | ≤ 3 |`,
      '',
      `Each walk alone (${SECONDS} s of each load), the same ratios of p99s:`,
      '',
      `| walk | ${r.eachWalk.map((_, i) => `${i + 1}`).join(' | ')} |`,
      `|---|${r.eachWalk.map(() => '---:').join('|')}|`,
      ...(
        [
          ['list page of 100 / single read', 'first'],
          ['list page of 20 / single read', 'list20'],
          ['feed page of 100 / single read', 'feedFirst'],
        ] as const
      ).map(([label, key]) => `| ${label} | ${r.eachWalk.map((w) => `${(w[key].p99 / w.single.p99).toFixed(2)}`).join(' | ')} |`),
      `| single read's p99, ms | ${r.eachWalk.map((w) => w.single.p99.toFixed(2)).join(' | ')} |`,
      '',
      `The database alone, without HTTP: the platform's statements in ${CONNECTIONS} loops, ${INSERT_SECONDS} s each, through its driver (the first pages, and one order's read as a lone read sends it):`,
      '',
      '| statement | runs/s | p50 ms | p99 ms | p99 / the read\'s |',
      '|---|---:|---:|---:|---:|',
      ...(['page100', 'page20', 'read'] as const).map((key) => {
        const f = r.alone[key];
        const label = { page100: 'a page of 100', page20: 'a page of 20', read: "one order's read" }[key];
        return `| ${label} | ${Math.round(f.rps).toLocaleString('en-US')} | ${ms(f.p50)} | ${ms(f.p99)} | ${(f.p99 / r.alone.read.p99).toFixed(1)} |`;
      }),
      '',
      `| what the two indexes cost a create (runs in this order) | with the indexes | without | with them again | the indexes' cost (with both runs with them) |`,
      '|---|---:|---:|---:|---:|',
      `| raw one-row INSERT into deposit_orders, ${CONNECTIONS} loops, ${INSERT_SECONDS} s: rows/s | ${Math.round(r.insertWith.rps).toLocaleString('en-US')} | ${Math.round(r.insertWithout.rps).toLocaleString('en-US')} | ${Math.round(r.insertWithAgain.rps).toLocaleString('en-US')} | ${cost(r.insertWithout.rps, r.insertWith.rps)}, ${cost(r.insertWithout.rps, r.insertWithAgain.rps)} of the rate |`,
      `| raw one-row INSERT: p50 / p99 ms | ${ms(r.insertWith.p50)} / ${ms(r.insertWith.p99)} | ${ms(r.insertWithout.p50)} / ${ms(r.insertWithout.p99)} | ${ms(r.insertWithAgain.p50)} / ${ms(r.insertWithAgain.p99)} | ${(r.insertWith.p50 - r.insertWithout.p50).toFixed(2)}, ${(r.insertWithAgain.p50 - r.insertWithout.p50).toFixed(2)} ms at p50 |`,
      `| signed POST order: req/s | ${Math.round(r.postWith.rps).toLocaleString('en-US')} | ${Math.round(r.postWithout.rps).toLocaleString('en-US')} | ${Math.round(r.postWithAgain.rps).toLocaleString('en-US')} | ${cost(r.postWithout.rps, r.postWith.rps)}, ${cost(r.postWithout.rps, r.postWithAgain.rps)} of the rate |`,
      `| signed POST order: p50 / p99 ms | ${ms(r.postWith.p50)} / ${ms(r.postWith.p99)} | ${ms(r.postWithout.p50)} / ${ms(r.postWithout.p99)} | ${ms(r.postWithAgain.p50)} / ${ms(r.postWithAgain.p99)} | |`,
      '',
      `The 009 indexes' sizes: ${Object.entries(r.loaded.indexMb).map(([name, mb]) => `\`${name}\` ${mb.toFixed(0)} MB`).join(', ')} (deposit_orders with all its indexes: ${r.loaded.tableMb.toFixed(0)} MB); building the two on the loaded table took ${r.rebuildSeconds.toFixed(1)} s.`,
      '',
      `EXPLAIN (ANALYZE, BUFFERS) of the deep pages' statements: orders ${r.explain.ordersVerdict.indexRange && !r.explain.ordersVerdict.fullScanOrSort ? 'one range of `deposit_orders_merchant_created` read backwards, no sort, no sequential scan' : 'NOT an index range alone (see lists.json)'}; feed ${r.explain.feedVerdict.indexRange && !r.explain.feedVerdict.fullScanOrSort ? 'one range of `callback_outbox_feed`, no sort, no sequential scan' : 'NOT an index range alone (see lists.json)'}.`,
      '',
      '<details><summary>the plans</summary>',
      '',
      '```',
      r.explain.orders,
      '',
      r.explain.feed,
      '```',
      '',
      '</details>',
      '',
    );
  }
  const linkTable = [
    `A list page's payment links, in this process: ${TOKEN_BLOCKS} blocks of ${TOKENS_A_BLOCK.toLocaleString('en-US')} tokens each way after one to warm up, taking turns, the median block's (the same links, checked):`,
    '',
    '| a payment link\'s token | µs a token | collector pauses a page of 100, µs |',
    '|---|---:|---:|',
    `| the platform's (\`crypto.hash\` over pads made once) | ${links.platform.micros.toFixed(2)} | ${links.platform.gcMicrosAPage.toFixed(0)} |`,
    `| \`createHmac\` a token (before) | ${links.createHmac.micros.toFixed(2)} | ${links.createHmac.gcMicrosAPage.toFixed(0)} |`,
    `| ratio | ${(links.platform.micros / links.createHmac.micros).toFixed(2)} | ${(links.platform.gcMicrosAPage / links.createHmac.gcMicrosAPage).toFixed(2)} |`,
    '',
  ];
  publishResults(
    'lists',
    [...linkTable, `${CONNECTIONS} connections (autocannon) unless said, ${SECONDS} s each after a 2 s warm-up, against a real \`partner-api serve\` process (logging off); every response a 200 (a create's a 201), checked.`, '', ...tables].join('\n'),
    { links, databases: results },
  );
} finally {
  postgres?.stop();
}
