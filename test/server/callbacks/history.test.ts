// An event's delivery as the feed's JSON has it (DELIVERY_JSON_SQL, written by the database) against the
// summary the deliveries endpoint returns (eventDelivery), serialized: the same text, byte for byte, in
// every state, with and without the times, and with a URL to escape.
import { describe, expect, it } from 'vitest';
import { DELIVERY_STATES, DELIVERY_COLUMNS, DELIVERY_JSON_SQL, eventDelivery, type DeliveryColumns } from '../../../src/server/callbacks/history.js';
import type { Database } from '../../../src/server/db/database.js';
import { DATABASES } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

describe.each(DATABASES)("an event's delivery as JSON on %s", (kind) => {
  let db: Database;
  useDatabase(kind, 'none', (opened) => {
    db = opened;
  });

  /** Both from one row of callback_outbox's columns: the summary's columns and the JSON. */
  async function written(state: string, url: string, attempts: number, nextAttemptAt: string, deliveredAt: string | null) {
    const [row] = await db.query<DeliveryColumns & { json: string }>(
      `SELECT ${DELIVERY_COLUMNS}, ${DELIVERY_JSON_SQL} AS json
         FROM (VALUES ($1::text, $2::text, $3::int, $4::timestamptz, $5::timestamptz)) AS o (state, url, attempts, next_attempt_at, delivered_at)`,
      [state, url, attempts, nextAttemptAt, deliveredAt],
    );
    return row!;
  }

  it('is JSON.stringify of its summary, in every state, with and without the times, and with a URL to escape', async () => {
    const urls = ['https://merchant.example/callbacks', 'https://merchant.example/cb?a="b"&c=\\d\u2028é\u0001😀'];
    let checked = 0;
    for (const state of DELIVERY_STATES) {
      for (const url of urls) {
        for (const deliveredAt of [null, '2026-12-01 10:00:01.123456+00']) {
          const { json, ...columns } = await written(state, url, state === 'pending' ? 0 : 7, '2026-12-01 10:00:05.5+00', deliveredAt);
          expect(json).toBe(JSON.stringify(eventDelivery(columns)));
          checked++;
        }
      }
    }
    expect(checked).toBe(DELIVERY_STATES.length * 4);
    const { json } = await written('pending', urls[0]!, 2, '2026-12-01 10:00:05+00', null);
    expect(JSON.parse(json)).toEqual({ state: 'pending', url: urls[0], attempts: 2, nextAttemptAt: '2026-12-01 10:00:05' });
  });
});
