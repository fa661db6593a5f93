// Reconciliation on every database: lists of orders and withdrawals a page at a time, the events feed,
// an event's deliveries and its redelivery; each merchant sees only its own, and bad input is a 4xx
// problem that names the parameter. Every response is checked against the contract by the harness.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DepositOrder, EventPage, Problem } from '../../../src/client/index.js';
import type { MerchantCredentials } from '../../../src/server/merchants/secrets.js';
import { pruneEvents } from '../../../src/server/callbacks/retention.js';
import { openPostgres } from '../../../src/server/db/database.js';
import { orderRequest, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };

describe.each(DATABASES)('reconciliation on %s', (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind, { env: { REDELIVERY_RATE_LIMIT: '3/60', ALLOW_PRIVATE_CALLBACKS: 'true' } });
  });
  afterAll(() => t?.close());

  const get = async <T>(path: string, credentials?: MerchantCredentials) => {
    const response = await t.signed('GET', path, credentials ? { credentials } : {});
    return { status: response.status, body: (await response.json()) as T };
  };
  const create = async (externalId: string, credentials?: MerchantCredentials, overrides = {}) => {
    const { data } = await t.client(credentials).POST('/partner/v1/platforms/orders', { body: orderRequest(externalId, overrides) });
    return data!;
  };
  const deposit = (uuid: string, amount: number, credentials?: MerchantCredentials) =>
    t.signed('POST', `/sandbox/v1/orders/${uuid}/deposits`, { body: JSON.stringify({ amount }), headers: JSON_TYPE, ...(credentials ? { credentials } : {}) });

  /** Every page of a list from its first, by nextCursor. */
  async function walk(path: string, query: string, credentials?: MerchantCredentials, between?: () => Promise<void>) {
    const items: { uuid: string }[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const { status, body } = await get<{ data: { uuid: string }[]; hasMore: boolean; nextCursor?: string }>(
        `${path}?${query}${cursor ? `&cursor=${cursor}` : ''}`,
        credentials,
      );
      expect(status).toBe(200);
      items.push(...body.data);
      if (!body.hasMore) {
        expect(body.nextCursor).toBeUndefined();
        return items;
      }
      cursor = body.nextCursor!;
      await between?.();
    }
    throw new Error('the walk did not end');
  }

  describe('the list of deposit orders', () => {
    let merchant: MerchantCredentials;
    const created: string[] = [];
    beforeAll(async () => {
      merchant = await t.createMerchant('lister');
      for (let i = 0; i < 23; i++) created.push((await create(`list-${i}`, merchant, { customerId: `cust-${i % 3}`, blockchain: i % 4 === 0 ? 'Ethereum' : 'Tron' })).uuid);
    });

    it('lists newest first, each order exactly as its read returns it', async () => {
      const { status, body } = await get<{ data: DepositOrder[]; hasMore: boolean; nextCursor: string }>('/partner/v1/platforms/orders?limit=5', merchant);
      expect(status).toBe(200);
      expect(body.data.map((o) => o.uuid)).toEqual(created.slice(-5).reverse());
      expect(body.hasMore).toBe(true);
      for (const order of body.data) {
        const read = await t.client(merchant).GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } });
        expect(order).toEqual(read.data);
      }
    });

    it('pages by 20 by default and walks every order once, in order', async () => {
      const first = await get<{ data: unknown[] }>('/partner/v1/platforms/orders', merchant);
      expect(first.body.data).toHaveLength(20);
      const all = await walk('/partner/v1/platforms/orders', 'limit=4', merchant);
      expect(all.map((o) => o.uuid)).toEqual([...created].reverse());
    });

    it('keeps a walk stable while orders are created and old ones change', async () => {
      const stable = await t.createMerchant('stable walker');
      const before: string[] = [];
      for (let i = 0; i < 30; i++) before.push((await create(`stable-${i}`, stable)).uuid);
      let n = 0;
      const all = await walk('/partner/v1/platforms/orders', 'limit=7', stable, async () => {
        await create(`stable-new-${n++}`, stable); // above the walk
        await deposit(before[n]!, 2_000_000, stable); // an old one changes
      });
      expect(all.map((o) => o.uuid)).toEqual([...before].reverse());
    });

    it('filters by status, blockchain, customerId, externalId and time', async () => {
      await deposit(created[1]!, 1_500_000, merchant);
      await deposit(created[2]!, 300_000, merchant);
      const done = await walk('/partner/v1/platforms/orders', 'status=DONE', merchant);
      expect(done.map((o) => o.uuid)).toEqual([created[1]]);
      const eth = await walk('/partner/v1/platforms/orders', 'blockchain=Ethereum&limit=2', merchant);
      expect(eth.map((o) => o.uuid)).toEqual(created.filter((_, i) => i % 4 === 0).reverse());
      const cust = await walk('/partner/v1/platforms/orders', 'customerId=cust-2&blockchain=Tron', merchant);
      expect(cust.map((o) => o.uuid)).toEqual(created.filter((_, i) => i % 3 === 2 && i % 4 !== 0).reverse());
      expect((await walk('/partner/v1/platforms/orders', 'externalId=list-7', merchant)).map((o) => o.uuid)).toEqual([created[7]]);

      // Three orders moved into the past: created ranges and updatedSince select them by the database's times.
      await t.db.query("UPDATE deposit_orders SET created_at = '2026-01-01 10:00:00+00', updated_at = '2026-01-01 10:00:00+00' WHERE uuid = ANY($1::uuid[])", [created.slice(10, 13)]);
      const old = await walk('/partner/v1/platforms/orders', 'createdFrom=2026-01-01%2010:00:00&createdBefore=2026-01-01%2010:00:01', merchant);
      expect(old.map((o) => o.uuid).sort()).toEqual(created.slice(10, 13).sort());
      const recent = await walk('/partner/v1/platforms/orders', 'updatedSince=2026-06-01%2000:00:00&limit=100', merchant);
      expect(recent).toHaveLength(created.length - 3);
    });

    it('keeps money exact: the list carries the same integers as the read', async () => {
      const big = await create('exact-amounts', merchant);
      await deposit(big.uuid, 9_007_199_254_740, merchant);
      const { body } = await get<{ data: DepositOrder[] }>('/partner/v1/platforms/orders?externalId=exact-amounts', merchant);
      expect(body.data[0]!.receivedAmount).toBe(9_007_199_254_740);
    });
  });

  describe('bad input is a 422 that names the parameter, and changes nothing', () => {
    const expectParameterProblem = async (query: string, parameter: string) => {
      const { status, body } = await get<Problem>(`/partner/v1/platforms/orders?${query}`);
      expect(status, query).toBe(422);
      expect(body.code).toBe('validation_failed');
      expect(body.errors?.map((e) => e.parameter)).toContain(parameter);
      expect(body.detail).toContain(parameter);
    };

    it.each(['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=2.5', 'limit=1&limit=2'])('%s', (query) => expectParameterProblem(query, 'limit'));
    it.each([
      ['status=PAID', 'status'],
      ['blockchain=Bitcoin', 'blockchain'],
      ['createdFrom=yesterday', 'createdFrom'],
      ['createdFrom=2026-02-31%2000:00:00', 'createdFrom'],
      ['updatedSince=2026-13-01%2000:00:00', 'updatedSince'],
      // Year 0 fits the contract's pattern and JavaScript's calendar, not PostgreSQL's (issue 50: a 500).
      ['createdFrom=0000-01-01%2000:00:00', 'createdFrom'],
      ['createdBefore=0000-12-31%2023:59:59', 'createdBefore'],
      ['updatedSince=0000-06-01%2012:00:00', 'updatedSince'],
      ['stauts=DONE', 'stauts'],
      ['cursor=abc', 'cursor'],
    ])('%s', (query, parameter) => expectParameterProblem(query, parameter));

    it('refuses a cursor that was changed, truncated, minted for other filters or for another merchant', async () => {
      for (let i = 0; i < 3; i++) await create(`cursor-${i}`);
      const { body } = await get<{ nextCursor: string }>('/partner/v1/platforms/orders?limit=1');
      const cursor = body.nextCursor;
      const [head, sealed] = cursor.split('.') as [string, string];
      const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
      for (const changed of [`${flip(head, 3)}.${sealed}`, `${head}.${flip(sealed, 10)}`, `${head}.${flip(sealed, sealed.length - 2)}`, cursor.slice(0, -3), head, `${head}.${sealed}.${sealed}`, `${head}.${sealed}AA`]) {
        await expectParameterProblem(`limit=1&cursor=${changed}`, 'cursor');
      }
      await expectParameterProblem(`limit=1&status=NEW&cursor=${cursor}`, 'cursor');
      const other = await t.createMerchant('cursor thief');
      const stolen = await get<Problem>(`/partner/v1/platforms/orders?limit=1&cursor=${cursor}`, other);
      expect(stolen.status).toBe(422);
      expect(stolen.body.errors?.[0]?.parameter).toBe('cursor');
      // The same cursor still works for its own walk; another page size is allowed.
      expect((await get(`/partner/v1/platforms/orders?limit=2&cursor=${cursor}`)).status).toBe(200);
    });
  });

  describe('isolation between merchants', () => {
    it('shows each of two merchants with thousands of orders only its own', async () => {
      const merchants = [await t.createMerchant('bulk A'), await t.createMerchant('bulk B')];
      // Thousands of rows straight into the table (the creates are tested above); addresses are placeholders.
      for (const [m, merchant] of merchants.entries()) {
        await t.db.query(
          `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at, created_at)
           SELECT gen_random_uuid(), $1, 'bulk-' || i, 'Tron', 'USDT', 'cust', 'https://merchant.example/cb', 1000000 + $2 * 10000 + i,
                  'T' || $3::text || translate(lpad(i::text, 32, 'z'), '0', 'o'), 'data:image/png;base64,iVBORw0KGgo=', 1000000, now() + interval '1 hour', now() - i * interval '1 millisecond'
             FROM generate_series(1, 2500) AS i`,
          [merchant.merchantId, m, String(m + 1)],
        );
      }
      for (const [m, merchant] of merchants.entries()) {
        const all = await walk('/partner/v1/platforms/orders', 'limit=100', merchant);
        expect(all).toHaveLength(2500);
        expect(new Set(all.map((o) => o.uuid)).size).toBe(2500);
        const [row] = await t.db.query<{ n: bigint }>('SELECT count(*)::bigint AS n FROM deposit_orders WHERE merchant_id = $1 AND uuid = ANY($2::uuid[])', [merchant.merchantId, all.map((o) => o.uuid)]);
        expect(Number(row!.n), `merchant ${m}`).toBe(2500);
      }
    });

    it("answers 404 for another merchant's event, and its feed never shows it", async () => {
      const [a, b] = [await t.createMerchant('feed A'), await t.createMerchant('feed B')];
      const order = await create('iso-event', a);
      await deposit(order.uuid, 2_000_000, a);
      const { body } = await get<EventPage>('/partner/v1/platforms/events', a);
      expect(body.data).toHaveLength(1);
      const eventId = body.data[0]!.id;
      expect((await get<EventPage>('/partner/v1/platforms/events', b)).body.data).toEqual([]);
      expect((await get<Problem>(`/partner/v1/platforms/events/${eventId}/deliveries`, b)).status).toBe(404);
      expect((await t.signed('POST', `/partner/v1/platforms/events/${eventId}/redeliver`, { credentials: b })).status).toBe(404);
      expect((await get(`/partner/v1/platforms/events?orderUuid=${order.uuid}`, b)).body).toMatchObject({ data: [] });
    });
  });

  describe('the list of withdrawals', () => {
    it('lists newest first with filters, each exactly as its read', async () => {
      const merchant = await t.createMerchant('withdrawer');
      await t.fund('Tron', 100_000_000n, merchant);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await t.signed('POST', '/sandbox/v1/withdrawals', {
          credentials: merchant,
          headers: JSON_TYPE,
          body: JSON.stringify({ externalId: `wd-${i}`, amount: 12.5 + i, blockchain: 'Tron', destinationAddress: SAMPLE_TRON_DESTINATION }),
        });
        expect(response.status).toBe(201);
        made.push(((await response.json()) as { uuid: string }).uuid);
      }
      await t.signed('POST', `/sandbox/v1/withdrawals/${made[3]}/status`, { credentials: merchant, headers: JSON_TYPE, body: JSON.stringify({ status: 'DONE' }) });
      const all = await walk('/partner/v1/platforms/withdrawals', 'limit=2', merchant);
      expect(all.map((w) => w.uuid)).toEqual([...made].reverse());
      const done = await get<{ data: { uuid: string; amount: number }[] }>('/partner/v1/platforms/withdrawals?status=DONE', merchant);
      expect(done.body.data.map((w) => w.uuid)).toEqual([made[3]]);
      const read = await t.client(merchant).GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: made[3]! } } });
      expect(done.body.data[0]).toEqual(read.data);
      expect((await get('/partner/v1/platforms/withdrawals?externalId=wd-1', merchant)).body).toMatchObject({ data: [{ uuid: made[1] }], hasMore: false });
      expect((await get<Problem>('/partner/v1/platforms/withdrawals?status=NEW', merchant)).status).toBe(422);
      for (const query of ['createdFrom=0000-01-01%2000:00:00', 'createdBefore=0000-01-01%2000:00:00']) {
        const refused = await get<Problem>(`/partner/v1/platforms/withdrawals?${query}`, merchant);
        expect(refused.status, query).toBe(422);
        expect(refused.body.errors?.[0]?.parameter).toBe(query.split('=')[0]);
      }
      // The first moment of the calendar is one: the filter answers, empty or not.
      expect((await get('/partner/v1/platforms/withdrawals?createdBefore=0001-01-01%2000:00:00', merchant)).body).toMatchObject({ data: [] });
    });
  });

  describe('the events feed', () => {
    it('reads every event oldest first from a cursor, filtered by type and order, with a cursor on every page', async () => {
      const merchant = await t.createMerchant('feed reader');
      const start = await get<EventPage>('/partner/v1/platforms/events', merchant);
      expect(start.body).toMatchObject({ data: [], hasMore: false });
      const orders = [await create('feed-1', merchant), await create('feed-2', merchant)];
      await deposit(orders[0]!.uuid, 400_000, merchant);
      await deposit(orders[1]!.uuid, 1_000_000, merchant);
      await deposit(orders[0]!.uuid, 700_000, merchant);
      const page = await get<EventPage>(`/partner/v1/platforms/events?cursor=${start.body.nextCursor}`, merchant);
      expect(page.body.data.map((e) => [e.orderUuid, e.data.sequence, e.data.amount, e.data.receivedAmount])).toEqual([
        [orders[0]!.uuid, 1, 400_000, 400_000],
        [orders[1]!.uuid, 1, 1_000_000, 1_000_000],
        [orders[0]!.uuid, 2, 700_000, 1_100_000],
      ]);
      expect(page.body.data.every((e) => e.type === 'order.deposit' && e.data.event === e.type && e.delivery.state === 'pending')).toBe(true);
      // Resuming from the last cursor: nothing new, and then only what came after.
      const after = await get<EventPage>(`/partner/v1/platforms/events?cursor=${page.body.nextCursor}`, merchant);
      expect(after.body.data).toEqual([]);
      await deposit(orders[1]!.uuid, 5, merchant);
      const later = await get<EventPage>(`/partner/v1/platforms/events?cursor=${after.body.nextCursor}`, merchant);
      expect(later.body.data.map((e) => e.data.amount)).toEqual([5]);
      const byOrder = await get<EventPage>(`/partner/v1/platforms/events?orderUuid=${orders[1]!.uuid}&limit=1`, merchant);
      expect(byOrder.body).toMatchObject({ hasMore: true, data: [{ orderUuid: orders[1]!.uuid }] });
      expect((await get<EventPage>('/partner/v1/platforms/events?type=order.expired', merchant)).body.data).toEqual([]);
      expect((await get<Problem>('/partner/v1/platforms/events?type=order.paid', merchant)).status).toBe(422);
      expect((await get<Problem>(`/partner/v1/platforms/events?type=order.deposit&cursor=${page.body.nextCursor}`, merchant)).status).toBe(422);
    });

    it("writes each event with its callback's body as it was frozen, byte for byte, and its delivery as the deliveries endpoint shows it", async () => {
      const merchant = await t.createMerchant('feed bytes');
      const order = await create('feed-bytes-1', merchant);
      await deposit(order.uuid, 250_000, merchant);
      await deposit(order.uuid, 3, merchant);
      const outbox = await t.db.query<{ webhook_id: string; event: string; body: string; created_at: string }>(
        `SELECT webhook_id, event, body, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS created_at FROM callback_outbox WHERE merchant_id = $1 ORDER BY tx_id, id`,
        [merchant.merchantId],
      );
      expect(outbox).toHaveLength(2);
      const text = await (await t.signed('GET', '/partner/v1/platforms/events', { credentials: merchant })).text();
      const page = JSON.parse(text) as EventPage;
      for (const [i, row] of outbox.entries()) {
        expect(text).toContain(`,"data":${row.body},"delivery":`);
        const { delivery } = (await get<{ delivery: unknown }>(`/partner/v1/platforms/events/${row.webhook_id}/deliveries`, merchant)).body;
        expect(page.data[i]).toEqual({ id: row.webhook_id, type: row.event, orderUuid: order.uuid, createdAt: row.created_at, data: JSON.parse(row.body), delivery });
      }
    });

    it("gives cursors that show nothing (issue 50, item 3): not the outbox's counters, nor how many events other merchants had", async () => {
      const [a, b] = [await t.createMerchant('cursor watcher'), await t.createMerchant('busy neighbour')];
      const [mine, theirs] = [await create('watched-1', a), await create('busy-1', b)];
      await create('watched-2', a); // a list of two orders: a page of one has a cursor
      await deposit(mine.uuid, 100_000, a);
      const first = (await get<EventPage>('/partner/v1/platforms/events', a)).body;
      for (let i = 0; i < 12; i++) await deposit(theirs.uuid, 1 + i, b); // another merchant's volume in between
      await deposit(mine.uuid, 200_000, a);
      const second = (await get<EventPage>(`/partner/v1/platforms/events?cursor=${first.nextCursor}`, a)).body;
      expect(second.data.map((e) => e.data.amount)).toEqual([200_000]);
      const counters = await t.db.query<{ id: string; tx_id: string }>('SELECT id::text, tx_id::text FROM callback_outbox WHERE merchant_id = ANY($1::uuid[])', [[a.merchantId, b.merchantId]]);
      const again = (await get<EventPage>(`/partner/v1/platforms/events?cursor=${first.nextCursor}`, a)).body;
      const listed = (await get<{ nextCursor: string }>('/partner/v1/platforms/orders?limit=1', a)).body;
      for (const cursor of [first.nextCursor, second.nextCursor, again.nextCursor, listed.nextCursor]) {
        // Read as its parts' bytes: no JSON, no position (a feed's was ["<tx_id>","<id>",…]), no uuid.
        for (const part of cursor.split('.').map((text) => Buffer.from(text, 'base64url').toString('latin1'))) {
          expect(() => JSON.parse(part)).toThrow();
          for (const { id, tx_id } of counters) expect(part).not.toContain(`"${tx_id}","${id}"`);
          expect(part).not.toContain(mine.uuid);
        }
        // One length whatever the counters' digits and the walk.
        expect(cursor).toHaveLength(first.nextCursor.length);
      }
      // The same position is sealed afresh each time, and each of its cursors resumes the walk.
      expect(again.nextCursor).not.toBe(second.nextCursor);
      for (const cursor of [second.nextCursor, again.nextCursor]) expect((await get<EventPage>(`/partner/v1/platforms/events?cursor=${cursor}`, a)).body.data).toEqual([]);
    });

    it('resumes a feed from a cursor issued before cursors were encrypted (a walk across the upgrade), and from no forged one', async () => {
      const merchant = await t.createMerchant('reader across the upgrade');
      const order = await create('upgrade-1', merchant);
      await deposit(order.uuid, 100_000, merchant);
      await deposit(order.uuid, 200_000, merchant);
      const [first] = await t.db.query<{ id: string; tx_id: string; created_ms: string }>(
        "SELECT id::text, tx_id::text, (date_part('epoch', created_at) * 1000)::bigint::text AS created_ms FROM callback_outbox WHERE merchant_id = $1 ORDER BY tx_id, id LIMIT 1",
        [merchant.merchantId],
      );
      // The cursor the platform issued before: base64url JSON of the position and a 128-bit HMAC over it, the merchant and the walk.
      const legacy = (position: string[], key = t.platform.secrets.cursorKey()) => {
        const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
        const mac = createHmac('sha256', key).update(`${merchant.merchantId}\0events?[]\0${payload}`).digest().subarray(0, 16).toString('base64url');
        return `${payload}.${mac}`;
      };
      const resumed = await get<EventPage>(`/partner/v1/platforms/events?cursor=${legacy([first!.tx_id, first!.id, first!.created_ms])}`, merchant);
      expect(resumed.status).toBe(200);
      expect(resumed.body.data.map((e) => e.data.amount)).toEqual([200_000]);
      expect(resumed.body.nextCursor.split('.')[0]).toHaveLength(32); // and it goes on with a sealed one
      const forged = await get<Problem>(`/partner/v1/platforms/events?cursor=${legacy([first!.tx_id, first!.id, first!.created_ms], Buffer.alloc(32, 7))}`, merchant);
      expect(forged.status).toBe(422);
    });

    it.runIf(kind === 'postgres')('never passes an event that commits late: it shows once every older transaction has ended', async () => {
      const merchant = await t.createMerchant('late commit');
      const [early, late] = [await create('late-1', merchant), await create('late-2', merchant)];
      const start = (await get<EventPage>('/partner/v1/platforms/events', merchant)).body.nextCursor;
      // Another instance's transaction writes an event first and commits last.
      const { paymentUrl: _link, unconfirmedDeposits: _seen, ...order } = (await t.client(merchant).GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: early.uuid } } })).data!;
      const body = JSON.stringify({ ...order, event: 'order.expired', occurredAt: order.expiredAt, sequence: 1 });
      const other = await openPostgres(t.databaseUrl!);
      let commit!: () => void;
      const committed = new Promise<void>((resolve) => (commit = resolve));
      let written!: () => void;
      const wrote = new Promise<void>((resolve) => (written = resolve));
      const held = other.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO callback_outbox (webhook_id, merchant_id, order_uuid, event, url, body, next_attempt_at, sequence)
           VALUES ('msg_heldheldheldheldheldheld', $1, $2, 'order.expired', 'https://merchant.example/cb', $3, now(), 1)`,
          [merchant.merchantId, early.uuid, body],
        );
        written();
        await committed;
      });
      await wrote;
      await deposit(late.uuid, 2_000_000, merchant); // written after, committed before
      const during = await get<EventPage>(`/partner/v1/platforms/events?cursor=${start}`, merchant);
      expect(during.body.data).toEqual([]);
      commit();
      await held;
      await other.close();
      const after = await get<EventPage>(`/partner/v1/platforms/events?cursor=${during.body.nextCursor}`, merchant);
      expect(after.body.data.map((e) => e.id)).toEqual(['msg_heldheldheldheldheldheld', expect.stringMatching(/^msg_/)]);
      expect(after.body.data[1]!.orderUuid).toBe(late.uuid);
    });

    it('refuses a cursor older than what pruning removed (410), never skipping past', async () => {
      const merchant = await t.createMerchant('away for long');
      const order = await create('pruned-1', merchant);
      for (const amount of [100_000, 200_000, 300_000]) await deposit(order.uuid, amount, merchant);
      // The three events were recorded and delivered 40 days ago; a walk then stopped after the first.
      await t.db.query("UPDATE callback_outbox SET created_at = created_at - interval '40 days', state = 'delivered' WHERE merchant_id = $1", [merchant.merchantId]);
      const first = await get<EventPage>('/partner/v1/platforms/events?limit=1', merchant);
      expect(first.body).toMatchObject({ hasMore: true, data: [{ data: { sequence: 1 } }] });
      const caughtUp = await get<EventPage>('/partner/v1/platforms/events', merchant);
      expect(caughtUp.body.data).toHaveLength(3);

      expect(await pruneEvents(t.db, 30)).toBeGreaterThanOrEqual(2);
      // The walk that stood at the first event would miss the second: refused.
      const stale = await get<Problem>(`/partner/v1/platforms/events?limit=1&cursor=${first.body.nextCursor}`, merchant);
      expect(stale.status).toBe(410);
      expect(stale.body.code).toBe('cursor_expired');
      // A walk that had read to the end loses nothing and goes on.
      expect((await get(`/partner/v1/platforms/events?cursor=${caughtUp.body.nextCursor}`, merchant)).status).toBe(200);
      // The order's latest event is kept, so that its sequence goes on from there.
      const restart = await get<EventPage>('/partner/v1/platforms/events', merchant);
      expect(restart.body.data.map((e) => e.data.sequence)).toEqual([3]);
      await deposit(order.uuid, 1, merchant);
      const next = await get<EventPage>(`/partner/v1/platforms/events?cursor=${restart.body.nextCursor}`, merchant);
      expect(next.body.data.map((e) => e.data.sequence)).toEqual([4]);
    });
  });

  describe('deliveries and redelivery', () => {
    it('shows each attempt with its error, redelivers under the same webhook-id, and limits redeliveries', async () => {
      const merchant = await t.createMerchant('deliveries');
      const order = await create('deliver-1', merchant, { callbackUrl: 'http://127.0.0.1:9/closed' });
      await deposit(order.uuid, 2_000_000, merchant);
      const { body } = await get<EventPage>('/partner/v1/platforms/events', merchant);
      const event = body.data[0]!;
      // An attempt recorded as the dispatcher records one (the dispatcher itself: test/server/callbacks).
      await t.db.query(
        `INSERT INTO callback_attempts (outbox_id, attempted_at, status_code, latency_ms, error, error_kind)
         SELECT id, now(), NULL, 3, 'connect ECONNREFUSED 127.0.0.1:9', 'connection_refused' FROM callback_outbox WHERE webhook_id = $1`,
        [event.id],
      );
      await t.db.query("UPDATE callback_outbox SET state = 'failed', attempts = 1 WHERE webhook_id = $1", [event.id]);
      const deliveries = await get<{ eventId: string; delivery: { state: string }; data: { error?: string; errorMessage?: string; url: string; durationMs: number }[] }>(
        `/partner/v1/platforms/events/${event.id}/deliveries`,
        merchant,
      );
      expect(deliveries.body).toMatchObject({
        eventId: event.id,
        delivery: { state: 'failed', attempts: 1, url: 'http://127.0.0.1:9/closed' },
        data: [{ error: 'connection_refused', errorMessage: 'connect ECONNREFUSED 127.0.0.1:9', url: 'http://127.0.0.1:9/closed', durationMs: 3 }],
      });
      const redelivered = await t.signed('POST', `/partner/v1/platforms/events/${event.id}/redeliver`, { credentials: merchant });
      expect(redelivered.status).toBe(202);
      expect(await redelivered.json()).toMatchObject({ eventId: event.id, delivery: { state: 'pending', attempts: 1 } });
      const [row] = await t.db.query<{ webhook_id: string; state: string }>('SELECT webhook_id, state FROM callback_outbox WHERE webhook_id = $1', [event.id]);
      expect(row).toEqual({ webhook_id: event.id, state: 'pending' });
      // The quota here is 3 a minute: two more pass, the fourth is refused with Retry-After.
      expect((await t.signed('POST', `/partner/v1/platforms/events/${event.id}/redeliver`, { credentials: merchant })).status).toBe(202);
      expect((await t.signed('POST', `/partner/v1/platforms/events/${event.id}/redeliver`, { credentials: merchant })).status).toBe(202);
      const refused = await t.signed('POST', `/partner/v1/platforms/events/${event.id}/redeliver`, { credentials: merchant });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      const malformed = await get<Problem>('/partner/v1/platforms/events/not%20an%20id/deliveries', merchant);
      expect(malformed.status).toBe(422);
      // An event's id is no UUID: the problem says what it must be (the fuzz run found "must be a UUID" here).
      expect(malformed.body.errors).toEqual([{ pointer: '', parameter: 'eventId', detail: 'must match pattern "^[A-Za-z0-9_-]{1,64}$"' }]);
      expect((await get<Problem>('/partner/v1/platforms/events/msg_unknown/deliveries', merchant)).status).toBe(404);
    });

    it('refuses a redelivery while an attempt is under way (409)', async () => {
      const merchant = await t.createMerchant('in flight');
      const order = await create('in-flight-1', merchant);
      await deposit(order.uuid, 2_000_000, merchant);
      const { body } = await get<EventPage>('/partner/v1/platforms/events', merchant);
      await t.db.query("UPDATE callback_outbox SET lease_token = gen_random_uuid(), next_attempt_at = now() + interval '30 seconds' WHERE webhook_id = $1", [body.data[0]!.id]);
      const response = await t.signed('POST', `/partner/v1/platforms/events/${body.data[0]!.id}/redeliver`, { credentials: merchant });
      expect(response.status).toBe(409);
      expect(((await response.json()) as Problem).code).toBe('delivery_in_flight');
    });
  });
});
