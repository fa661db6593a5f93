// The fuzz run of the API's reads and their neighbours (issue 50): requests drawn from a table of
// endpoints, each with generators of the paths, queries and bodies a caller may send (valid ones,
// edge values, junk, real ids and cursors the run has seen, other merchants'), sent signed (mostly) or
// not, and every answer checked: no 5xx, a problem for every refusal, the contract's shape (the test
// platform's harness), nothing changed by a refused request, and the data's invariants afterwards.
//
// Adding an endpoint is adding an entry to FUZZ_ENDPOINTS (and, for money, an entry to INVARIANTS).
import fc from 'fast-check';
import type { Database } from '../../src/server/db/database.js';
import type { MerchantCredentials } from '../../src/server/merchants/secrets.js';
import type { TestPlatform } from './platform.js';
import { checkLedger } from '../../src/server/ledger/ledger.js';

/** What the run has seen so far, for the generators to draw real values from. */
export interface FuzzPool {
  orderUuids: string[];
  withdrawalUuids: string[];
  eventIds: string[];
  /** nextCursor values the run was given, with the request that gave them. */
  cursors: string[];
}

export interface FuzzRequest {
  method: string;
  path: string;
  body?: string;
  /** Sent as the main merchant (signed), as the other merchant, or unsigned with junk credentials. */
  as: 'merchant' | 'other' | 'unsigned';
}

export interface FuzzEndpoint {
  name: string;
  /** The requests to draw, given what the run has seen. */
  requests: (pool: FuzzPool) => fc.Arbitrary<FuzzRequest>;
  /**
   * What a refused request (4xx) of this endpoint must leave as it was: a text the test compares before
   * and after. Only for endpoints that write (a GET changes nothing by construction).
   */
  unchanged?: (db: Database) => Promise<string>;
}

/** Checks of the data after the run: a message for each violation. */
export interface FuzzInvariant {
  name: string;
  violations: (db: Database) => Promise<string[]>;
}

// Values: what a merchant might mean, the edges, and junk.
const moment = fc.oneof(
  fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 19).replace('T', ' ')),
  fc.constantFrom('0000-01-01 00:00:00', '0000-12-31 23:59:59', '9999-12-31 23:59:59', '0001-01-01 00:00:00', '2026-02-29 00:00:00', '2026-02-31 12:00:00', '2026-13-01 00:00:00', '2026-11-20 24:00:00', '2026-11-20T00:00:00', '2026-11-20', ''),
);
const junk = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('%00', '%zz', '%ff%fe', '\u0000', 'null', '[]', '{}', '-1', '1e309', 'NaN', 'a'.repeat(600)));
const limit = fc.oneof(fc.integer({ min: 1, max: 100 }).map(String), fc.constantFrom('0', '101', '-1', '2.5', '1e2', '99999999999999999999', ''), junk);
const uuid = (pool: string[]) => fc.oneof(pool.length > 0 ? fc.constantFrom(...pool) : fc.uuid(), fc.uuid(), fc.constantFrom('00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF'), junk);
/** A cursor the run was given (as it is, cut short, changed, doubled), or one made up. */
const cursor = (pool: FuzzPool) =>
  fc.oneof(
    ...(pool.cursors.length > 0
      ? [
          fc.constantFrom(...pool.cursors),
          fc.tuple(fc.constantFrom(...pool.cursors), fc.nat()).map(([c, n]) => c.slice(0, n % c.length)),
          fc.tuple(fc.constantFrom(...pool.cursors), fc.nat(), fc.constantFrom('A', 'B', '_', '-', '.')).map(([c, n, x]) => c.slice(0, n % c.length) + x + c.slice((n % c.length) + 1)),
          fc.constantFrom(...pool.cursors).map((c) => `${c}.${c}`),
        ]
      : []),
    fc.base64String({ maxLength: 200 }).map((b) => b.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')),
    fc.tuple(fc.base64String({ maxLength: 60 }), fc.base64String({ maxLength: 60 })).map(([a, b]) => `${a}.${b}`.replace(/[+/=]/g, 'A')),
    junk,
  );

/** A query string of some of `params` (each a generator), in any order, sometimes twice, sometimes with an unknown one. */
function query(params: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const entries = Object.entries(params).map(([name, value]) => fc.tuple(fc.constant(name), value));
  const unknown = fc.tuple(fc.constantFrom('stauts', 'limit[]', 'Limit', '', '__proto__', 'constructor'), junk);
  return fc.array(fc.oneof({ weight: 6, arbitrary: fc.oneof(...entries) }, { weight: 1, arbitrary: unknown }), { maxLength: 5 }).map((pairs) =>
    pairs.length === 0 ? '' : `?${pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')}`,
  );
}

/** Valid withdrawal destinations of no wallet (test/fixtures/orders.ts), and what must be refused. */
const TRON_DESTINATION = 'TAVtmAR779HopKtw1b3Wa52itoJxYR1Ah4';
const ETHEREUM_DESTINATION = '0xC9DFb06B3F3C166d10b7ec7047dC7F353FE83E03';
/** A withdrawal's body: mostly well formed (a few externalIds, so that replays and conflicts come up), each field sometimes off. */
const withdrawalBody = fc.record(
  {
    externalId: fc.oneof(fc.constantFrom('fuzz-wd-a', 'fuzz-wd-b', 'fuzz-wd-c'), fc.string({ minLength: 1, maxLength: 130 }), junk),
    blockchain: fc.oneof(fc.constantFrom('Tron', 'Ethereum'), fc.constantFrom('tron', 'Bitcoin'), junk),
    currency: fc.oneof(fc.constant('USDT'), fc.constantFrom('usdt', 'USDC'), junk),
    amount: fc.oneof(
      fc.constantFrom(1, 1.5, 12.5, 0.999999, 0, -1, 1e-7, 1.0000001, 1_000_000_000, 1_000_000_000.000001, 9_007_199_254.740993, Number.MAX_SAFE_INTEGER),
      fc.double({ min: -10, max: 1e10, noNaN: true }),
      fc.integer({ min: 1, max: 100 }).map((n) => n / 100),
      junk,
    ),
    destinationAddress: fc.oneof(
      fc.constantFrom(TRON_DESTINATION, ETHEREUM_DESTINATION, ETHEREUM_DESTINATION.toLowerCase(), ETHEREUM_DESTINATION.replace('C9DF', 'c9DF'), '0x0000000000000000000000000000000000000000', 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb'),
      junk,
    ),
    callbackUrl: fc.oneof(fc.constantFrom('https://merchant.example/callbacks/withdrawals', 'https://user:pw@merchant.example/x', 'ftp://merchant.example/x'), junk),
    surplus: junk,
  },
  { requiredKeys: [] },
);

const as = fc.constantFrom<FuzzRequest['as']>('merchant', 'merchant', 'merchant', 'merchant', 'other', 'unsigned');

/** GETs of a list or feed at `path`: a limit, a cursor the run has seen and the list's `filters` in the query. */
function listRequests(path: string, filters: (pool: FuzzPool) => Record<string, fc.Arbitrary<string>>): FuzzEndpoint['requests'] {
  return (pool) => fc.record({ method: fc.constant('GET'), path: query({ limit, cursor: cursor(pool), ...filters(pool) }).map((q) => `${path}${q}`), as });
}

/** The endpoints fuzzed, each with the requests it is sent. */
export const FUZZ_ENDPOINTS: FuzzEndpoint[] = [
  {
    name: 'the list of orders',
    requests: listRequests('/partner/v1/platforms/orders', () => ({
      status: fc.oneof(fc.constantFrom('NEW', 'DONE', 'EXPIRED', 'new', 'PAID'), junk),
      blockchain: fc.oneof(fc.constantFrom('Tron', 'Ethereum', 'tron', 'Bitcoin'), junk),
      customerId: fc.oneof(fc.constantFrom('cust-42', 'cust-1'), junk),
      externalId: fc.oneof(fc.constantFrom('fuzz-order-1', 'fuzz-order-2'), junk),
      createdFrom: moment,
      createdBefore: moment,
      updatedSince: moment,
    })),
  },
  {
    name: 'the list of withdrawals',
    requests: listRequests('/partner/v1/platforms/withdrawals', () => ({
      status: fc.oneof(fc.constantFrom('PENDING', 'DONE', 'FAILED', 'NEW'), junk),
      blockchain: fc.oneof(fc.constantFrom('Tron', 'Ethereum'), junk),
      externalId: fc.oneof(fc.constantFrom('fuzz-wd-1'), junk),
      createdFrom: moment,
      createdBefore: moment,
      updatedSince: moment, // not a parameter of this list: refused by name
    })),
  },
  {
    name: 'the events feed',
    requests: listRequests('/partner/v1/platforms/events', (pool) => ({ type: fc.oneof(fc.constantFrom('order.deposit', 'order.expired', 'order.paid'), junk), orderUuid: uuid(pool.orderUuids) })),
  },
  {
    name: "an event's deliveries",
    requests: (pool) =>
      fc.record({
        method: fc.constant('GET'),
        path: fc.oneof(pool.eventIds.length > 0 ? fc.constantFrom(...pool.eventIds) : fc.constant('msg_x'), junk, fc.stringMatching(/^msg_[A-Za-z0-9]{1,40}$/)).map((id) => `/partner/v1/platforms/events/${encodeURIComponent(id)}/deliveries`),
        as,
      }),
  },
  {
    name: "an event's redelivery",
    requests: (pool) =>
      fc.record({
        method: fc.constant('POST'),
        path: fc.oneof(pool.eventIds.length > 0 ? fc.constantFrom(...pool.eventIds) : fc.constant('msg_x'), junk).map((id) => `/partner/v1/platforms/events/${encodeURIComponent(id)}/redeliver`),
        body: fc.option(fc.oneof(fc.constant(''), fc.constant('{}'), junk), { nil: undefined }),
        as,
      }),
    unchanged: async (db) => JSON.stringify(await db.query("SELECT webhook_id, state, attempts, lease_token FROM callback_outbox ORDER BY id")),
  },
  {
    name: 'the feed of every event',
    requests: listRequests('/partner/v2/platforms/events', (pool) => ({
      type: fc.oneof(fc.constantFrom('order.deposit', 'withdrawal.updated', 'withdrawal.done', 'withdrawal.failed', 'withdrawal.paid'), junk),
      orderUuid: uuid(pool.orderUuids),
      withdrawalUuid: uuid(pool.withdrawalUuids),
    })),
  },
  {
    name: 'the balances',
    requests: () => fc.record({ method: fc.constant('GET'), path: fc.oneof(fc.constant(''), junk.map((j) => `?${encodeURIComponent(j)}=1`)).map((q) => `/partner/v1/platforms/balances${q}`), as }),
  },
  {
    name: 'the withdrawal terms',
    requests: () => fc.record({ method: fc.constant('GET'), path: fc.oneof(fc.constant(''), junk.map((j) => `?${encodeURIComponent(j)}=1`)).map((q) => `/partner/v1/platforms/withdrawals/terms${q}`), as }),
  },
  {
    name: 'a withdrawal asked for',
    requests: () =>
      fc.record({
        method: fc.constant('POST'),
        path: fc.constant('/partner/v1/platforms/withdrawals'),
        body: fc.oneof(
          { weight: 5, arbitrary: withdrawalBody.map((body) => JSON.stringify(body)) },
          // Well formed: accepted, replayed (200), in conflict (409), or more than the balance.
          {
            weight: 3,
            arbitrary: fc
              .record({ externalId: fc.integer({ min: 1, max: 30 }).map((n) => `fuzz-ok-${n}`), blockchain: fc.constantFrom('Tron', 'Ethereum'), amount: fc.constantFrom(10, 12.5, 20, 1000) })
              .map(({ externalId, blockchain, amount }) => JSON.stringify({ externalId, blockchain, currency: 'USDT', amount, destinationAddress: blockchain === 'Tron' ? TRON_DESTINATION : ETHEREUM_DESTINATION })),
          },
          // A number as the platform reads it, written as no JSON.stringify would: more digits than a double, exponents.
          { weight: 1, arbitrary: fc.constantFrom('12.50000000000000001', '1e1', '1E-7', '-0', '0.0000010', '999999999.999999', '1000000000.0000001', '1e309').map((amount) => `{"externalId":"fuzz-raw-${amount}","blockchain":"Tron","currency":"USDT","amount":${amount},"destinationAddress":"${TRON_DESTINATION}"}`) },
          { weight: 1, arbitrary: junk },
        ),
        as,
      }),
    unchanged: async (db) =>
      JSON.stringify(await db.query('SELECT (SELECT count(*) FROM withdrawals)::int AS withdrawals, (SELECT count(*) FROM ledger_entries)::int AS entries, (SELECT json_agg(b ORDER BY merchant_id, blockchain) FROM balances b)::text AS balances')),
  },
  {
    name: 'the reads of an order and a withdrawal',
    requests: (pool) =>
      fc.record({
        method: fc.constant('GET'),
        path: fc.oneof(uuid(pool.orderUuids).map((id) => `/partner/v2/platforms/orders/${encodeURIComponent(id)}`), uuid(pool.withdrawalUuids).map((id) => `/partner/v1/platforms/withdrawals/${encodeURIComponent(id)}`)),
        as,
      }),
  },
];

/** The data's invariants after the run. */
export const INVARIANTS: FuzzInvariant[] = [
  {
    name: "an order's receivedAmount is the sum of its deposits",
    violations: async (db) =>
      (
        await db.query<{ uuid: string }>(
          'SELECT o.uuid FROM deposit_orders o LEFT JOIN deposits d ON d.order_uuid = o.uuid GROUP BY o.uuid, o.received_amount HAVING o.received_amount <> COALESCE(sum(d.amount), 0)',
        )
      ).map((row) => `order ${row.uuid}`),
  },
  {
    name: "each order's events are numbered 1, 2, 3, … without a gap",
    violations: async (db) =>
      (await db.query<{ order_uuid: string }>('SELECT order_uuid FROM callback_outbox WHERE order_uuid IS NOT NULL GROUP BY order_uuid HAVING max(sequence) <> count(*)')).map((row) => `order ${row.order_uuid}`),
  },
  {
    name: 'the books agree with their entries: every balance their sum, every deposit booked once, every withdrawal holding its amount and fee',
    violations: async (db) => (await checkLedger(db)).problems,
  },
];

export interface FuzzOutcome {
  requests: number;
  byStatus: Record<string, number>;
  serverErrors: string[];
  /** Refused requests that changed what their endpoint said they must not, or broke the contract. */
  failures: string[];
}

/**
 * Sends `count` requests drawn from every endpoint in turn (seeded: the same seed draws the same
 * requests), `concurrency` at a time, and records what came back. The pool grows with what responses
 * show (ids, cursors).
 */
export async function fuzz(t: TestPlatform, other: MerchantCredentials, pool: FuzzPool, { count, seed, concurrency = 4 }: { count: number; seed: number; concurrency?: number }): Promise<FuzzOutcome> {
  const outcome: FuzzOutcome = { requests: 0, byStatus: {}, serverErrors: [], failures: [] };
  const batch = 200; // drawn in batches, so that later requests use the ids and cursors earlier ones were given
  for (let drawn = 0; drawn < count; drawn += batch) {
    const endpoints = FUZZ_ENDPOINTS.map((endpoint) => ({ endpoint, arbitrary: endpoint.requests(pool) }));
    const requests = fc.sample(fc.integer({ min: 0, max: endpoints.length - 1 }).chain((i) => endpoints[i]!.arbitrary.map((request) => ({ request, endpoint: endpoints[i]!.endpoint }))), { numRuns: Math.min(batch, count - drawn), seed: seed + drawn });
    // Reads side by side; then the requests that write, one at a time, each refusal checked to change nothing.
    const reads = requests.filter((r) => !r.endpoint.unchanged);
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < reads.length) {
          const { request, endpoint } = reads[next++]!;
          await send(t, other, pool, request, endpoint, outcome);
        }
      }),
    );
    for (const { request, endpoint } of requests.filter((r) => r.endpoint.unchanged)) await send(t, other, pool, request, endpoint, outcome);
  }
  return outcome;
}

async function send(t: TestPlatform, other: MerchantCredentials, pool: FuzzPool, request: FuzzRequest, endpoint: FuzzEndpoint, outcome: FuzzOutcome): Promise<void> {
  const label = `${request.method} ${request.path} (${request.as}, ${endpoint.name})`;
  const before = endpoint.unchanged && (await endpoint.unchanged(t.db));
  let response: Response;
  const init = { ...(request.body === undefined ? {} : { body: request.body, headers: { 'Content-Type': 'application/json' } }) };
  const unsigned = { method: request.method, headers: { 'X-Api-Key': 'pk_test_made_up', 'X-Timestamp': '1', 'X-Signature': 'ab' }, ...(init.body === undefined ? {} : { body: init.body }) };
  try {
    response = request.as === 'unsigned' ? await t.fetch(request.path, unsigned) : await t.signed(request.method, request.path, { ...init, ...(request.as === 'other' ? { credentials: other } : {}) });
  } catch (error) {
    // The harness checks the answers of the contract's operations; a path outside them (an empty id:
    // `/events//deliveries`) only needs a clean problem, checked below.
    if (!/is no operation of the contract/.test(String(error))) {
      outcome.failures.push(`${label}: ${String(error).slice(0, 500)}`);
      return;
    }
    response = await fetch(t.baseUrl + request.path, unsigned);
  }
  outcome.requests++;
  outcome.byStatus[response.status] = (outcome.byStatus[response.status] ?? 0) + 1;
  const text = await response.text();
  if (response.status >= 500) outcome.serverErrors.push(`${label} → ${response.status} ${text.slice(0, 300)}`);
  if (response.status >= 400 && !/^application\/problem\+json/.test(response.headers.get('content-type') ?? '')) outcome.failures.push(`${label} → ${response.status} without a problem`);
  if (response.status >= 400 && endpoint.unchanged && before !== (await endpoint.unchanged(t.db))) outcome.failures.push(`${label} → ${response.status} changed what it must not`);
  if (response.status < 300) learn(pool, text);
}

/** Ids and cursors a response shows, for later requests to use. */
function learn(pool: FuzzPool, text: string): void {
  const add = (list: string[], value: unknown) => {
    if (typeof value === 'string' && !list.includes(value) && list.length < 200) list.push(value);
  };
  try {
    const body = JSON.parse(text) as { nextCursor?: string; uuid?: string; stage?: string; data?: { id?: string; uuid?: string }[] };
    add(pool.cursors, body.nextCursor);
    if (body.stage !== undefined) add(pool.withdrawalUuids, body.uuid); // a withdrawal the run asked for
    for (const item of Array.isArray(body.data) ? body.data : []) if (typeof item.id === 'string' && item.id.startsWith('msg_')) add(pool.eventIds, item.id);
  } catch {
    // not JSON: nothing to learn
  }
}
