// An event's delivery as the feed writes it (writeDeliveryJson) against the summary the deliveries
// endpoint returns (deliverySummary), serialized: the same text, byte for byte, in every state.
import { describe, expect, it } from 'vitest';
import { CALLBACK_STATES, deliverySummary, writeDeliveryJson, type DeliveryColumns } from '../../../src/server/callbacks/history.js';

function written(row: DeliveryColumns): string {
  const parts: string[] = [];
  writeDeliveryJson(parts, row);
  return parts.join('');
}

describe("an event's delivery as JSON", () => {
  it('is JSON.stringify of its summary, in every state, with and without the times, and with a URL to escape', () => {
    const urls = ['https://merchant.example/callbacks', 'https://merchant.example/cb?a="b"&c=\\d\u2028é'];
    let checked = 0;
    for (const state of CALLBACK_STATES) {
      for (const url of urls) {
        for (const deliveredAt of [null, '2026-12-01 10:00:01']) {
          const row: DeliveryColumns = { state, url, attempts: state === 'pending' ? 0 : 7, next_attempt_at: state === 'pending' ? '2026-12-01 10:00:05' : null, delivered_at: deliveredAt };
          expect(written(row)).toBe(JSON.stringify(deliverySummary(row)));
          checked++;
        }
      }
    }
    expect(checked).toBe(CALLBACK_STATES.length * 4);
    expect(JSON.parse(written({ state: 'pending', url: urls[0]!, attempts: 2, next_attempt_at: '2026-12-01 10:00:05', delivered_at: null }))).toEqual({
      state: 'pending',
      url: urls[0],
      attempts: 2,
      nextAttemptAt: '2026-12-01 10:00:05',
    });
  });
});
