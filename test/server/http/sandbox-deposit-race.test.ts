// Two concurrent sandbox deposits that together would pass 2^53 − 1 (issue 23 #8): one is credited, the
// other answers 422, on both databases, every round (the order row is locked while it is credited).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const HALF_PLUS_ONE = 2 ** 52 + 1;

describe.each(DATABASES)('concurrent sandbox deposits near the bound on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
  });
  afterAll(() => t?.close());

  it('credits one of two deposits of 2^52 + 1 and refuses the other with 422, in 10 of 10 rounds', async () => {
    for (let round = 0; round < 10; round++) {
      const { data: order } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest(`race-${round}`, { blockchain: round % 2 ? 'Tron' : 'Ethereum' }) });
      const path = `/sandbox/v1/orders/${order!.uuid}/deposits`;
      const responses = await Promise.all(
        ['a', 'b'].map((key) =>
          t.signed('POST', path, { body: JSON.stringify({ amount: HALF_PLUS_ONE }), headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `race-${round}-${key}` } }),
        ),
      );
      expect(responses.map((r) => r.status).sort(), `round ${round}`).toEqual([201, 422]);
      const refused = (await responses.find((r) => r.status === 422)!.json()) as { code: string };
      expect(refused.code).toBe('validation_failed');
      const read = await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order!.uuid } } });
      expect(read.data!.receivedAmount).toBe(HALF_PLUS_ONE);
    }
  });
});
