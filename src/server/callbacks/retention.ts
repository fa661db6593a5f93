// How long the events feed keeps events (EVENT_RETENTION_DAYS): the pruning job's removal, and the check
// that refuses (410) a feed cursor whose walk reaches back past what was removed, never skipping it.
import type { Database, Sql } from '../db/database.js';

/**
 * Where a walk of the feed stands: the last event's transaction and id, and until when the walk has seen
 * every event (ms). Declared here, below the feed (feed.ts imports this file), as its pruning's check reads it.
 */
export type FeedPosition = [txId: string, id: string, seenUntilMs: string];

/** A cursor seen until a moment older than this before the last pruning's horizon may have lost events after it. */
const PRUNE_MARGIN_MS = 3_600_000;

/** The cursor's walk reaches back past what pruning removed: events after it may be gone. */
export async function feedPositionExpired(sql: Sql, position: FeedPosition): Promise<boolean> {
  const [row] = await sql.query<{ value: string }>("SELECT value FROM platform_settings WHERE name = 'events_pruned_before'");
  return row !== undefined && BigInt(position[2]) - BigInt(PRUNE_MARGIN_MS) < BigInt(row.value);
}

/** Rows removed by one statement of the pruning, at most. */
export const PRUNE_BATCH = 5000;

/**
 * Removes the events older than the retention and their attempts, except each order's and withdrawal's
 * latest event (its sequence goes on from there) and events still pending, and records the horizon first, so that a
 * cursor from before it is refused (410) instead of passing the removed events silently. The number
 * of events removed; a full batch means more are due.
 */
export async function pruneEvents(db: Database, retentionDays: number): Promise<number> {
  return db.transaction(async (tx) => {
    const [horizon] = await tx.query<{ ms: string }>(
      `SELECT (extract(epoch FROM now() - make_interval(days => $1)) * 1000)::bigint::text AS ms`,
      [retentionDays],
    );
    await tx.query(
      `INSERT INTO platform_settings (name, value) VALUES ('events_pruned_before', $1)
       ON CONFLICT (name) DO UPDATE SET value = GREATEST(platform_settings.value::bigint, excluded.value::bigint)::text`,
      [horizon!.ms],
    );
    const doomed = await tx.query<{ id: string }>(
      `SELECT o.id::text AS id FROM callback_outbox o
        WHERE o.created_at < timestamptz 'epoch' + $1::bigint * interval '1 millisecond' AND o.state <> 'pending'
          AND (EXISTS (SELECT 1 FROM callback_outbox later WHERE later.order_uuid = o.order_uuid AND later.sequence > o.sequence)
               OR EXISTS (SELECT 1 FROM callback_outbox later WHERE later.withdrawal_uuid = o.withdrawal_uuid AND later.sequence > o.sequence))
        LIMIT $2`,
      [horizon!.ms, PRUNE_BATCH],
    );
    if (doomed.length === 0) return 0;
    const ids = doomed.map((row) => row.id);
    await tx.query('DELETE FROM callback_attempts WHERE outbox_id = ANY($1::bigint[])', [ids]);
    await tx.query('DELETE FROM callback_outbox WHERE id = ANY($1::bigint[])', [ids]);
    return ids.length;
  });
}
