// Benchmark (`npm run bench`): what the typed client costs over hand-written signing on raw fetch.
//
// A local node:http server answers GET /partner/v2/platforms/orders/{uuid} with a fixed deposit order
// and checks nothing. Against it, in one process, sequential signed GETs go (a) through
// createPartnerClient and (b) through global fetch signed by hand with node:crypto, both reading the
// JSON body. After warm-up rounds, each measured round makes REQUESTS requests per variant, the two
// taking turns in blocks of BLOCK requests (A B B A A B …), so that the drift of a noisy shared
// machine falls on both alike. Each variant is reported by its median round; the ratio is the median
// of the ratios of neighbouring blocks, which a stall of the machine disturbs least.
//
//   npm run bench -- [--requests=2000] [--rounds=5] [--warmup=2] [--block=20]
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createPartnerClient, createRequestSigner, type DepositOrder } from '../src/client/index.js';
import { DONE_ORDER } from '../test/fixtures/orders.js';
import { publishResults } from './support.js';

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = arg ? Number(arg.slice(name.length + 3)) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${arg}`);
  return value;
}

const REQUESTS = option('requests', 2000);
const ROUNDS = option('rounds', 5);
const WARMUP_ROUNDS = option('warmup', 2);
const BLOCK = Math.min(option('block', 20), REQUESTS);

const API_KEY = 'pk_bench_1';
const API_SECRET = 'sk_bench_0123456789abcdef0123456789abcdef';
const UUID = '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';
const PATH = `/partner/v2/platforms/orders/${UUID}`;

// openapi/components/examples/DoneTronOrder.yaml, as the platform would answer it (the tests' sample
// order, with its real QR code: a body of the size the platform sends).
const ORDER = {
  ...DONE_ORDER,
  addressQr:
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAIQAAACECAYAAABRRIOnAAAAAklEQVR4AewaftIAAARTSURBVO3BQW' +
    '4kRxIAQfdE///LvjzoEKcUCkVyRoswsy+s9Y/DWsNhreGw1nBYazisNRzWGg5rDR/+hcpvqrhRmSpuVKaKG5WbikllqnhC5TdV3B' +
    'zWGg5rDYe1hg8PVXwnlRuVqeKJiknlpmJS+U0V30nlicNaw2Gt4bDW8OEllScq3lC5qZhUbiomlanipmJSmSreUHmi4o3DWsNhre' +
    'Gw1vDhP6ZiUplUpoonKiaVqeKmYlKZKv5mh7WGw1rDYa3hw1+u4omKN1RuVG4q/ssOaw2HtYbDWsOHlyr+Jio3FU9UTCpTxU+q+E' +
    '2HtYbDWsNhreHDQyq/SWWquKmYVG5UpopJZaqYVKaKN1T+pMNaw2Gt4bDW8OFfVPzNKiaVqeIJlTdUnqj4mxzWGg5rDYe1BvvChc' +
    'pU8Z1UpopJ5TtVvKHyRMWkclNxo/JExROHtYbDWsNhrcG+8IDKVPGEylQxqXynikllqrhRmSpuVKaKG5UnKm5UbipuDmsNh7WGw1' +
    'qDfeEFle9UMak8UTGpvFHxk1SeqJhUpoo3DmsNh7WGw1rDh5cqJpWp4gmVqeInVbyhMlVMKjcVNyqTylQxqUwVTxzWGg5rDYe1hg' +
    '//QmWqmFSeULmpmFRuKn6SylRxo3JTMalMFTcVk8pUMalMFTeHtYbDWsNhreHDD1O5qbipmFTeqPhOFZPKGypPVNxUPHFYazisNR' +
    'zWGuwLD6hMFZPKTcWkMlXcqNxUvKEyVUwqU8VPUnmi4o3DWsNhreGw1mBfeEDliYonVG4qnlCZKr6TylRxo3JTcaPyRsXNYa3hsN' +
    'ZwWGv48C9UnqiYVN6ouFGZKt5QmSomlaniRmWqeEJlqphUpoo3DmsNh7WGw1qDfeFCZaq4UZkqJpWp4kblpmJS+U0Vk8oTFZPKEx' +
    'WTylTxxGGt4bDWcFhrsC9cqNxUTCpvVPxJKlPFjcobFZPKGxWTylRxc1hrOKw1HNYaPjxU8UTFGypTxRMqNxVTxRsVT6i8UXFT8c' +
    'RhreGw1nBYa/jwh6k8oTJVPFExqUwVk8pNxaTykyp+0mGt4bDWcFhrsC/8xVTeqLhRmSpuVKaKG5Wp4gmVqeJG5abi5rDWcFhrOK' +
    'w12BcuVH5TxY3KVDGp3FTcqNxUTCpPVEwqU8Wk8kTFG4e1hsNaw2Gt4cNDFd9J5YmKJypuVP6kijcqblSmipvDWsNhreGw1vDhJZ' +
    'UnKr6TyhMqT1TcVEwqNypvVNyovHFYazisNRzWGj78x6hMFZPKpPJExaTyRsWkMlXcqDxRMak8cVhrOKw1HNYaPvyfq5hUpopJ5a' +
    'ZiUpkqJpWpYlJ5QuWJiicOaw2HtYbDWsOHlyp+U8UbFZPKTcUbFZPKExWTyk3FpDJV3BzWGg5rDYe1hg8PqfwmlaniDZWpYlJ5om' +
    'JSmSqmiknliYpJ5abiicNaw2Gt4bDWYF9Y6x+HtYbDWsNhreGw1nBYazisNRzWGv4HcWhI5bfqPgUAAAAASUVORK5CYII=',
} satisfies DepositOrder;
const ORDER_BODY = Buffer.from(JSON.stringify(ORDER));

function startServer(): Promise<Server> {
  const server = createServer((req, res) => {
    // Drain whatever was sent, then answer; nothing is checked.
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': ORDER_BODY.length });
      res.end(ORDER_BODY);
    });
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok(server));
  });
}

type Variant = { name: string; label: string; request: () => Promise<DepositOrder> };

function variants(baseUrl: string): [Variant, Variant] {
  const client = createPartnerClient({ baseUrl, apiKey: API_KEY, apiSecret: API_SECRET });
  const viaClient: Variant = {
    name: 'client',
    label: '`createPartnerClient` (openapi-fetch + signing fetch)',
    async request() {
      const { data, error, response } = await client.GET('/partner/v2/platforms/orders/{uuid}', {
        params: { path: { uuid: UUID } },
      });
      if (!data) throw new Error(`client GET failed: ${response.status} ${JSON.stringify(error)}`);
      return data;
    },
  };

  const url = baseUrl + PATH;
  const viaRaw: Variant = {
    name: 'raw',
    label: 'raw `fetch` + `node:crypto` `createHmac`',
    async request() {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', API_SECRET).update(`${timestamp}GET${PATH}`).digest('hex');
      const response = await fetch(url, {
        headers: { 'X-Api-Key': API_KEY, 'X-Timestamp': timestamp, 'X-Signature': signature },
      });
      if (!response.ok) throw new Error(`raw GET failed: ${response.status} ${await response.text()}`);
      return (await response.json()) as DepositOrder;
    },
  };
  return [viaClient, viaRaw];
}

/** Both variants must send the same signature, or the comparison would not be fair. */
async function checkSameSignature() {
  const timestamp = 1763700000;
  const ours = await createRequestSigner(API_SECRET).sign({ timestamp, method: 'GET', target: PATH });
  const raw = createHmac('sha256', API_SECRET).update(`${timestamp}GET${PATH}`).digest('hex');
  if (ours !== raw) throw new Error(`signatures differ: ${ours} (src/signing) vs ${raw} (createHmac)`);
}

async function run(variant: Variant, requests: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < requests; i++) {
    const order = await variant.request();
    if (order.uuid !== UUID) throw new Error(`${variant.name}: unexpected body ${JSON.stringify(order)}`);
  }
  return performance.now() - start;
}

/**
 * One round: `requests` requests of each variant, taking turns block by block (A B, B A, A B, …).
 * Returns each variant's total and, per pair of neighbouring blocks, the ratio of their times.
 */
async function round(a: Variant, b: Variant, requests: number) {
  let msA = 0;
  let msB = 0;
  const ratios: number[] = [];
  for (let done = 0, k = 0; done < requests; done += BLOCK, k++) {
    const n = Math.min(BLOCK, requests - done);
    let blockA: number;
    let blockB: number;
    if (k % 2 === 0) {
      blockA = await run(a, n);
      blockB = await run(b, n);
    } else {
      blockB = await run(b, n);
      blockA = await run(a, n);
    }
    msA += blockA;
    msB += blockB;
    ratios.push(blockA / blockB);
  }
  return { msA, msB, ratios };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/**
 * µs per call of each of two pieces of work, timed in turn for `rounds` rounds of `calls` calls after
 * a warm-up round; each the median of its rounds.
 */
async function microseconds(a: () => unknown, b: () => unknown, calls = 20_000, rounds = 5): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let r = 0; r <= rounds; r++) {
    for (const [k, work] of [a, b].entries()) {
      const start = performance.now();
      for (let i = 0; i < calls; i++) await work();
      if (r > 0) times[k]!.push(((performance.now() - start) * 1000) / calls);
    }
  }
  return [median(times[0]), median(times[1])];
}

/**
 * Where the client's overhead goes, without the network: the signature alone, and a whole call with
 * the global fetch replaced by one that answers at once (what is left is the JavaScript around fetch).
 */
async function overheadRows(client: Variant, raw: Variant): Promise<string[]> {
  const signer = createRequestSigner(API_SECRET);
  const timestamp = 1763700000;
  const signature = await microseconds(
    () => signer.sign({ timestamp, method: 'GET', target: PATH }),
    () => createHmac('sha256', API_SECRET).update(`${timestamp}GET${PATH}`).digest('hex'),
    100_000,
  );
  const realFetch = globalThis.fetch;
  globalThis.fetch = async () => new Response(ORDER_BODY, { status: 200, headers: { 'Content-Type': 'application/json', 'Content-Length': String(ORDER_BODY.length) } });
  try {
    const call = await microseconds(client.request, raw.request);
    return [
      '| Without the network, µs per call (median of 5 rounds) | client | raw |',
      '|---|---:|---:|',
      `| the request signature (\`createRequestSigner\` / \`createHmac\`) | ${signature[0].toFixed(2)} | ${signature[1].toFixed(2)} |`,
      `| a whole call, with a fetch that answers at once | ${call[0].toFixed(1)} | ${call[1].toFixed(1)} |`,
    ];
  } finally {
    globalThis.fetch = realFetch;
  }
}

async function main() {
  await checkSameSignature();
  const server = await startServer();
  try {
    const { port } = server.address() as AddressInfo;
    const [a, b] = variants(`http://127.0.0.1:${port}`);
    const times = new Map<Variant, number[]>([
      [a, []],
      [b, []],
    ]);

    process.stderr.write(`warm-up: ${WARMUP_ROUNDS} × ${REQUESTS} requests per variant\n`);
    for (let r = 0; r < WARMUP_ROUNDS; r++) await round(a, b, REQUESTS);
    const blockRatios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const { msA, msB, ratios } = await round(a, b, REQUESTS);
      blockRatios.push(...ratios);
      times.get(a)!.push(msA);
      times.get(b)!.push(msB);
      process.stderr.write(`round ${r + 1}/${ROUNDS}: ${a.name} ${fmt(msA, 1)} ms, ${b.name} ${fmt(msB, 1)} ms\n`);
    }

    const rows = [a, b].map((variant) => {
      const ms = median(times.get(variant)!);
      return { variant, ms, rps: (REQUESTS * 1000) / ms, us: (ms * 1000) / REQUESTS, all: times.get(variant)! };
    });
    const [ra, rb] = rows as [(typeof rows)[0], (typeof rows)[0]];
    const ratio = ra.ms / rb.ms;
    // Each block against its neighbour of the other variant: drift cancels, and a stall of the machine
    // spoils a few pairs rather than a round.
    const paired = median(blockRatios);

    const report: string[] = [];
    report.push(
      `\n${ROUNDS} rounds of ${REQUESTS} sequential signed GETs per variant, interleaved in blocks of ${BLOCK},` +
        ` after ${WARMUP_ROUNDS} warm-up rounds;` +
        ` Node ${process.version}, local node:http server on 127.0.0.1.\n`,
    );
    report.push('| Variant | Total ms (median of rounds) | Requests/s | Mean µs/request | Rounds (ms) |');
    report.push('|---|---:|---:|---:|---|');
    for (const row of rows) {
      const all = row.all.map((ms) => fmt(ms)).join(', ');
      report.push(`| ${row.variant.label} | ${fmt(row.ms)} | ${fmt(row.rps)} | ${fmt(row.us, 1)} | ${all} |`);
    }
    report.push(
      `\nRatio client/raw: **${paired.toFixed(2)}×** (median over ${blockRatios.length} pairs of neighbouring blocks;` +
        ` ratio of the median rounds ${ratio.toFixed(2)}×; target ≤ 1.25×): ${fmt(ra.us - rb.us, 1)} µs a request over the other variant.`,
    );
    const overhead = await overheadRows(a, b);
    report.push('', ...overhead);
    publishResults('client', report.join('\n'), { overhead, rows: rows.map((r) => ({ variant: r.variant.label, ms: r.ms, rps: r.rps, us: r.us })), ratio: paired });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
