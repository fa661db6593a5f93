// The events feed: a merchant's outbox rows (its orders' events, or every resource's), oldest first, from
// a cursor, with each event's body as it was frozen for its callbacks (their retention: ./retention.ts).
//
// Order and gaps: events are read in the order of the transaction that wrote them (tx_id, then id), and
// only those written by transactions older than every transaction still running. A transaction that
// commits later therefore always sorts after every event already shown: a cursor never passes an event
// that is not visible yet. A long transaction (in any database of the server) delays the feed until it
// ends; a read waits up to a second for one, and once one read has waited a transaction out, reads
// answer at once while it stays open (heldBackBy).
import type { HeldRows, Sql, Utf8Text } from '../db/database.js';
import { limitClause, type ListPage, type ListRequest } from '../db/pages.js';
import { jsonObjectSql, type JsonField } from '../db/json-fields.js';
import { unplannedValue } from '../db/plans.js';
import { CursorExpired, walkScope, type CursorCodec } from '../shared/cursors.js';
import { DELIVERY_JSON_SQL } from './history.js';
import { feedPositionExpired, type FeedPosition } from './retention.js';

export type { FeedPosition };

export interface FeedFilters {
  type?: string | undefined;
  orderUuid?: string | undefined;
  withdrawalUuid?: string | undefined;
}

/**
 * Which events a feed carries: the orders' only (`GET /partner/v1/platforms/events`, whose items the
 * contract types as orders' events since 1.3.0), or every resource's (`/partner/v2/platforms/events`).
 */
export type FeedResources = 'orders' | 'all';

interface FeedRow {
  now_ms: string;
  held_back: boolean;
  /** The oldest transaction still running (pg_snapshot_xmin): the one holding events back, when any are. */
  xmin: string;
  tx_id: string | null;
  id: string | null;
  created_ms: string;
  /** The event as the feed shows it (EVENT_JSON_SQL). */
  event_json: Utf8Text;
}

/**
 * An event as the feed shows it, in the contract's order (PlatformEvent; the orders' feed's Event is its
 * orders' part), in a query whose callback_outbox row is `o`: the database writes it as JSON text
 * (EVENT_JSON_SQL) and the page writes the text as it is (http/json-text.ts), no string made of it where
 * the driver reads it as bytes. Its `data` is the frozen body spliced in as it is, the same bytes as its
 * callbacks' body (a parse and a serialization could reorder or respell it). The webhook id and the type
 * are written by to_json; the subject's uuid (its column's type; one of the two, callback_outbox_one_subject)
 * and the time (digits from to_char) go in quoted as they are; `delivery` is left out for an event with no
 * callback to deliver (state 'none': a withdrawal without a callbackUrl; never an order's).
 * reconciliation.test.ts checks it against the frozen body and the deliveries endpoint.
 */
export const EVENT_FIELDS: readonly JsonField<never>[] = [
  { name: 'id', sql: { expression: 'o.webhook_id', json: 'to_json' } },
  { name: 'type', sql: { expression: 'o.event', json: 'to_json' } },
  { name: 'orderUuid', optional: true, sql: { expression: 'o.order_uuid', json: 'as-is' } },
  { name: 'withdrawalUuid', optional: true, sql: { expression: 'o.withdrawal_uuid', json: 'as-is' } },
  { name: 'createdAt', sql: { expression: "to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')", json: 'as-is' } },
  { name: 'data', sql: { expression: 'o.body', json: 'json' } },
  { name: 'delivery', optional: true, sql: { expression: `CASE WHEN o.state <> 'none' THEN ${DELIVERY_JSON_SQL} END`, json: 'json' } },
];

const EVENT_JSON_SQL = jsonObjectSql(EVENT_FIELDS);

/**
 * How long a read waits, at most, for older transactions to end when they hold committed events back:
 * its steps double from the first (7 reads in all, where 20 ms steps made 51), since a transaction that
 * is not over in a few milliseconds is seldom over in the next few.
 */
const HELD_BACK_WAIT_MS = 1000;
const HELD_BACK_FIRST_STEP_MS = 10;

/**
 * The oldest transaction that a read of the feed, on this database, waited out in vain: a long one. While
 * it is still the oldest, reads do not wait for it again, so a merchant polling the feed costs one
 * statement a poll instead of a second and 50 (issue 50). Per database object, so per process (each
 * instance learns it once); a transaction id is never reused (xid8), so a stale entry never matches.
 */
const longTransaction = new WeakMap<Sql, string>();

/** A page of the feed: each event's JSON text (EVENT_JSON_SQL), held until released (Sql.queryBytes). */
export interface FeedPage extends Pick<HeldRows<unknown>, 'release'> {
  events: Utf8Text[];
  next: FeedPosition;
  more: boolean;
}

/**
 * A page of a feed as the API sends it, from the request's cursor: each walk's cursors its own (the
 * orders' feed's and every resource's), CursorRefused for one not issued to this merchant for these
 * filters, CursorExpired for one whose walk reaches back past what pruning removed (never walked past
 * the removed events; `retentionDays` says how long events are kept).
 */
export async function feedPage(sql: Sql, cursors: CursorCodec, resources: FeedResources, request: ListRequest<FeedFilters>, retentionDays: number): Promise<ListPage<Utf8Text>> {
  const scope = walkScope(resources === 'orders' ? 'events' : 'all-events', { ...request.filters });
  // The codec checked the position's length: three strings, a FeedPosition.
  const after = cursors.position(request.merchantId, scope, request.cursor, [3]) as FeedPosition | undefined;
  if (after && (await feedPositionExpired(sql, after))) throw new CursorExpired(retentionDays);
  const page = await readFeed(sql, request.merchantId, resources, request.filters, after, request.limit);
  return { items: page.events, hasMore: page.more, nextCursor: cursors.encode(request.merchantId, scope, page.next), release: page.release };
}

export async function readFeed(
  sql: Sql,
  merchantId: string,
  resources: FeedResources,
  filters: FeedFilters,
  after: FeedPosition | undefined,
  limit: number,
): Promise<FeedPage> {
  const values: unknown[] = [merchantId, after?.[0] ?? '0', after?.[1] ?? '0'];
  const bind = (value: unknown) => `$${values.push(value)}`;
  const merchantsEvents = [
    `o.merchant_id = ${unplannedValue('$1', 'uuid')}`,
    ...(resources === 'orders' ? ['o.order_uuid IS NOT NULL'] : []),
    ...(filters.type === undefined ? [] : [`o.event = ${bind(filters.type)}`]),
    ...(filters.orderUuid === undefined ? [] : [`o.order_uuid = ${bind(filters.orderUuid)}::uuid`]),
    ...(filters.withdrawalUuid === undefined ? [] : [`o.withdrawal_uuid = ${bind(filters.withdrawalUuid)}::uuid`]),
  ].join(' AND ');
  // One row at least (the clock's), whether or not the page has events; and whether committed events
  // wait behind an older transaction still running. Those all sort after the cursor without saying so (a
  // cursor's event was below xmin when it was read, and xmin never goes back): the check starts at xmin
  // in the index and reads only the events held back, not every event after the cursor (with the
  // cursor's condition a first page of a million events read all of them).
  // An event's time in milliseconds is a position's seenUntil, which retention.ts compares with an hour's
  // margin: from date_part's float8, within a microsecond of exact, and cheaper for each of a page's 101
  // rows than extract's numeric arithmetic (PGlite: 18 µs of a page's statement).
  const text = `WITH page AS (
       SELECT o.tx_id::text AS tx_id, o.id::text AS id, (date_part('epoch', o.created_at) * 1000)::bigint::text AS created_ms,
              ${EVENT_JSON_SQL} AS event_json
         FROM callback_outbox o
        WHERE ${merchantsEvents} AND (o.tx_id, o.id) > (${unplannedValue('$2', 'xid8')}, ${unplannedValue('$3', 'bigint')}) AND o.tx_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY o.tx_id, o.id ${limitClause(limit + 1)})
     SELECT (extract(epoch FROM now()) * 1000)::bigint::text AS now_ms, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
            EXISTS (SELECT 1 FROM callback_outbox o WHERE ${merchantsEvents} AND o.tx_id >= pg_snapshot_xmin(pg_current_snapshot())) AS held_back,
            page.*
       FROM (SELECT 1) AS clock LEFT JOIN page ON true`;
  // Another transaction's (any database's on the server) holds newer events back: wait a little for it
  // to end rather than answer with a page that stops short (a long one only delays them, never loses them),
  // unless a read has already waited that one out.
  let { rows, release } = await sql.queryBytes<FeedRow>(text, values, FEED_BYTES, { shaped: true });
  const waitsFor = () => rows[0]!.held_back && rows.length <= limit && longTransaction.get(sql) !== rows[0]!.xmin;
  for (let waited = 0, step = HELD_BACK_FIRST_STEP_MS; waitsFor() && waited < HELD_BACK_WAIT_MS; waited += step, step *= 2) {
    release();
    await new Promise((resolve) => setTimeout(resolve, Math.min(step, HELD_BACK_WAIT_MS - waited)));
    ({ rows, release } = await sql.queryBytes<FeedRow>(text, values, FEED_BYTES, { shaped: true }));
  }
  if (waitsFor()) longTransaction.set(sql, rows[0]!.xmin);
  const nowMs = rows[0]!.now_ms;
  const found = rows.filter((row) => row.id !== null);
  const more = found.length > limit;
  if (more) found.pop();
  const last = found.at(-1);
  // Seen until: at the end of the feed, now (events still to commit are covered by the margin); else the
  // last event's time.
  const seenUntil = more ? last!.created_ms : maxOf(last?.created_ms ?? after?.[2] ?? '0', nowMs);
  const next: FeedPosition = [last?.tx_id ?? after?.[0] ?? '0', last?.id ?? after?.[1] ?? '0', seenUntil];
  return { events: found.map((row) => row.event_json), next, more, release };
}

const FEED_BYTES = ['event_json'];

function maxOf(a: string, b: string): string {
  return BigInt(a) > BigInt(b) ? a : b;
}
