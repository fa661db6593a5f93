// Merchant names are unique where the operator creates merchants (issue 49): `merchants create` refuses
// a name another merchant has, and two creates of one name at once cannot both pass (an advisory lock
// in the create's transaction), on PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateMerchantNameError } from '../../../src/server/merchants/merchants.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

describe.each(DATABASES)('merchant names on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
  });
  afterAll(() => t?.close());

  it('lets one of eight creates of one name at once pass, and refuses the others naming its API key', async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => t.platform.merchants.create('Same name', undefined, { uniqueName: true })));
    const created = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(created).toHaveLength(1);
    const refusals = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(refusals).toHaveLength(7);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(DuplicateMerchantNameError);
      expect((refusal as DuplicateMerchantNameError).apiKey).toBe(created[0]!.apiKey);
    }
    const [{ n }] = (await t.db.query<{ n: bigint }>("SELECT count(*)::bigint AS n FROM merchants WHERE name = 'Same name'")) as [{ n: bigint }];
    expect(n).toBe(1n);
    // Names are compared as they are: another spelling is another name.
    await expect(t.platform.merchants.create('same name', undefined, { uniqueName: true })).resolves.toMatchObject({ name: 'same name' });
  });
});
