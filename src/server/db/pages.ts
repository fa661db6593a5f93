// Keyset pages of a merchant's rows, newest first: the statement of one page of a table that has the
// index (merchant_id, created_at, uuid). The page after a cursor starts right below the cursor's row in
// that index, so a page deep in a walk costs what the first one costs (no OFFSET), rows created during a
// walk sort above it and never mix in, and no row is skipped or repeated.
import { walkScope, type CursorCodec } from '../shared/cursors.js';
import { parsePlatformDateTime } from '../shared/time.js';
import type { HeldRows, Sql } from './database.js';
import { unplannedValue } from './plans.js';

/** A filter: an SQL condition on `$n` (given as `param`), and the value bound to it. */
export interface Filter {
  sql: (param: string) => string;
  value: unknown;
}

/**
 * A row's place in the walk. An unfiltered walk's is its uuid: the next page looks its created_at up
 * by that key (created_at never changes, and rows are never deleted), so such a page carries no
 * position column: computed for each of its 101 rows, the exact microseconds (`extract(epoch …)`,
 * numeric arithmetic) cost PGlite a ninth of the statement, 40 of 370 µs, for the one row the cursor
 * takes. A filtered walk's is its created_at in microseconds and its uuid, as every walk's was before:
 * its next page shows the planner where it starts (newestFirstPage), which a looked-up value would
 * hide. Both are read for either walk, so an unfiltered walk begun before goes on.
 */
export type RowPosition = [uuid: string] | [createdMicros: string, uuid: string];

/** The lengths a RowPosition has: a cursor of any other is refused. */
export const ROW_POSITION_LENGTHS = [1, 2] as const;

export interface PageRequest {
  merchantId: string;
  /** Text columns read as bytes (Sql.queryBytes): the page holds them until released. */
  bytes?: readonly string[];
  filters: readonly Filter[];
  /** The position of the last row of the page before; none for the first page. */
  after: RowPosition | undefined;
  limit: number;
}

export interface Page<Row> extends HeldRows<Row> {
  /** The last row's position, when another page follows. */
  next: RowPosition | undefined;
}

/** What a list's request asks for: the merchant's rows that pass its filters, after its cursor, at most `limit`. */
export interface ListRequest<Filters> {
  merchantId: string;
  filters: Filters;
  /** The API's page token of the page before; none for the first page. */
  cursor: string | undefined;
  limit: number;
}

/** A page as the API sends it: its items, held until released (Sql.queryBytes), and the next page's cursor. */
export interface ListPage<Item> {
  items: Item[];
  hasMore: boolean;
  nextCursor: string | undefined;
  release(): void;
}

/** The statement of a walk's pages: the table (with its alias), the columns, the filters' conditions. */
export interface WalkQuery {
  table: string;
  columns: string;
  bytes?: readonly string[];
  filters: readonly Filter[];
}

/**
 * One page of a walk as the API sends it: the request's cursor opened (CursorRefused for one not issued to
 * this merchant for these filters), the page read (newestFirstPage), and the next page's cursor sealed.
 * The walk's scope is its kind and its filters, so a cursor serves only the walk it was made for.
 */
export async function newestFirstWalk<Row extends { uuid: string }>(
  sql: Sql,
  cursors: CursorCodec,
  kind: string,
  request: ListRequest<Record<string, string | number | undefined>>,
  query: WalkQuery,
): Promise<ListPage<Row>> {
  const scope = walkScope(kind, request.filters);
  // The codec checked the position's length against ROW_POSITION_LENGTHS: it is a RowPosition.
  const after = cursors.position(request.merchantId, scope, request.cursor, ROW_POSITION_LENGTHS) as RowPosition | undefined;
  const { rows, next, release } = await newestFirstPage<Row>(sql, query.table, query.columns, {
    merchantId: request.merchantId,
    bytes: query.bytes,
    filters: query.filters,
    after,
    limit: request.limit,
  });
  return { items: rows, hasMore: next !== undefined, nextCursor: next && cursors.encode(request.merchantId, scope, next), release };
}

/**
 * One page of `table`'s rows of the merchant that pass every filter; `table` is the table's name,
 * with an alias after it if `columns` use one. Only the filters given become SQL (a generic plan of
 * `$n IS NULL OR …` would read the whole range), so each combination is a statement of its own,
 * prepared once.
 */
export async function newestFirstPage<Row extends { uuid: string }>(sql: Sql, table: string, columns: string, page: PageRequest): Promise<Page<Row>> {
  const values: unknown[] = [page.merchantId];
  const bind = (value: unknown) => `$${values.push(value)}`;
  // Without filters the plan is one range of the (merchant_id, created_at, uuid) index whatever the
  // merchant and the cursor, so the planner is not shown them (plans.ts): a merchant with most of the rows
  // was planned at every call. A filter (a status, updatedSince) can make another index starting with
  // merchant_id the better one, for this merchant's rows: there the planner sees them.
  const keyValue = (parameter: string, type: string) => (page.filters.length === 0 ? unplannedValue(parameter, type) : `${parameter}::${type}`);
  const merchant = keyValue('$1', 'uuid');
  const conditions = [`merchant_id = ${merchant}`, ...page.filters.map((filter) => filter.sql(bind(filter.value)))];
  if (page.after) conditions.push(belowRow(table.split(' ')[0]!, merchant, page.after, (value, type) => keyValue(bind(value), type)));
  const filtered = page.filters.length > 0;
  const { rows, release } = await sql.queryBytes<Row & { position_micros?: string }>(
    `SELECT ${columns}${filtered ? `, ${POSITION_COLUMN}` : ''} FROM ${table} WHERE ${conditions.join(' AND ')}
      ORDER BY created_at DESC, uuid DESC ${limitClause(page.limit + 1)}`,
    values,
    page.bytes ?? [],
    { shaped: true },
  );
  const more = rows.length > page.limit;
  if (more) rows.pop();
  const last = rows.at(-1);
  if (!more || !last) return { rows, next: undefined, release };
  return { rows, next: filtered ? [last.position_micros!, last.uuid] : [last.uuid], release };
}

/** A filtered page's column beside the caller's: its rows' created_at in microseconds since the epoch (exact). */
const POSITION_COLUMN = `(extract(epoch FROM created_at) * 1000000)::bigint::text AS position_micros`;

/** The condition of the rows after `after` in the walk: below its row in the index. */
function belowRow(table: string, merchant: string, after: RowPosition, value: (value: string, type: string) => string): string {
  if (after.length === 2) {
    const [micros, uuid] = after;
    return `(created_at, uuid) < (timestamptz 'epoch' + ${value(micros, 'bigint')} * interval '1 microsecond', ${value(uuid, 'uuid')})`;
  }
  const uuid = value(after[0], 'uuid');
  // One lookup by primary key, once a statement (an InitPlan); the merchant's, as the cursor is.
  return `(created_at, uuid) < ((SELECT c.created_at FROM ${table} c WHERE c.uuid = ${uuid} AND c.merchant_id = ${merchant}), ${uuid})`;
}

/**
 * A page's LIMIT, written into the statement's text, not bound: with `LIMIT $n` PostgreSQL cannot tell
 * a page of 21 rows from a tenth of the table, so it keeps planning the prepared statement afresh at
 * every call (0.1 ms, 0.5 ms with the order's unconfirmed transfers' subplan: more than reading a page of
 * 20 costs; bench/README.md). With the number in the text the statement keeps one generic plan where
 * that plan is as good (PostgreSQL's plan_cache_mode auto decides, so a filter whose selectivity
 * depends on its value still gets a plan of its own). The limits are the API's 1–100, plus one.
 */
export function limitClause(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 1) throw new RangeError(`a page's LIMIT is a positive integer, not ${rows}`);
  return `LIMIT ${rows}`;
}

/** `column = value`, when the value is given. */
export function equalTo(column: string, value: string | undefined): Filter[] {
  return value === undefined ? [] : [{ sql: (param) => `${column} = ${param}`, value }];
}

/** `column >= moment` (`from`) or `column < moment` (`before`), when the moment (the API's date shape) is given. */
export function timeBound(column: string, bound: 'from' | 'before', moment: string | undefined): Filter[] {
  if (moment === undefined) return [];
  return [{ sql: (param) => `${column} ${bound === 'from' ? '>=' : '<'} ${param}::timestamptz`, value: parsePlatformDateTime(moment).toISOString() }];
}
