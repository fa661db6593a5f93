// A read of one row by its uuid (a merchant's, or a payment page's), coalesced: the reads that arrive
// in one turn of the event loop share one query (`uuidInBatch`). Under load the database sees one query for many requests
// instead of one per request; at rest a read is a query of its own, with no wait added. Nothing is
// cached: every read reaches the database after it was asked for.
import DataLoader from 'dataloader';
import { isUuid } from '../shared/uuid.js';
import type { Sql } from './database.js';
import { unplannedValue } from './plans.js';

export interface OwnedRow {
  uuid: string;
  merchant_id: string;
}

/** Keys per query at most: bounds the statement's parameter and the rows held for one batch. */
const MAX_BATCH = 256;

/**
 * DataLoader options that coalesce the calls of one turn of the event loop into one batch, uncached:
 * setImmediate runs after the event loop has read every request that was ready, so they all join.
 * Shared by the reads here and the creates of orders/orders.ts.
 */
export const ONE_TURN_BATCHES = { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (dispatch: () => void) => setImmediate(dispatch) } as const;

/**
 * The condition of a coalesced read: the row's uuid is one of `$1`, an array of uuids, which the planner
 * is not shown (db/plans.ts). With `uuid = ANY($1::uuid[])` PostgreSQL found a plan for the one uuid of a
 * lone read cheaper than a generic plan for an array of unknown length, so it planned every read afresh
 * (0.3-0.6 ms, more than running it). Hidden, after its first five runs the statement keeps one generic
 * plan (a scan of the primary key for the array, `batched-reads.test.ts`). In a merchant's walk on
 * PostgreSQL a read's p50 went from 0.56 ms to 0.23-0.33.
 */
export function uuidInBatch(column = 'uuid'): string {
  return `${column} = ANY(${unplannedValue('$1', 'uuid[]')}::uuid[])`;
}

/**
 * One row by its uuid, coalesced. `selectByUuids` must select the column `uuid` and take the uuids as
 * `$1` (`WHERE ${uuidInBatch()}`). An id that is not a uuid reads as undefined.
 */
export function batchedReads<Row extends { uuid: string }>(db: Sql, selectByUuids: string): (uuid: string) => Promise<Row | undefined> {
  const loader = new DataLoader<string, Row | undefined>(async (uuids) => {
    const rows = await db.query<Row>(selectByUuids, [[...new Set(uuids)]]);
    const byUuid = new Map(rows.map((row) => [row.uuid, row]));
    return uuids.map((uuid) => byUuid.get(uuid));
  }, ONE_TURN_BATCHES);
  return async (uuid) => {
    // One id that PostgreSQL cannot cast would fail the whole batch, other callers' reads with it.
    if (!isUuid(uuid)) return undefined;
    // PostgreSQL prints uuids in lowercase; the contract accepts either case.
    return loader.load(uuid.toLowerCase());
  };
}

/**
 * A merchant's read: as batchedReads, and `selectByUuids` must also select `merchant_id`. A row of
 * another merchant reads as undefined, like a missing one.
 */
export function batchedOwnedReads<Row extends OwnedRow>(db: Sql, selectByUuids: string): (merchantId: string, uuid: string) => Promise<Row | undefined> {
  const read = batchedReads<Row>(db, selectByUuids);
  return async (merchantId, uuid) => {
    const row = await read(uuid);
    return row?.merchant_id === merchantId ? row : undefined;
  };
}
