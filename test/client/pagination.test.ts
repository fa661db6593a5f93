// The client's iterators over the lists and the events feed: each page one signed request, made only
// when the loop asks for more, with the cursor of the page before and the same filters; failures thrown
// as PartnerApiError. Against a recording fetch: no server.
import { describe, expect, it } from 'vitest';
import {
  createPartnerClient,
  createRequestSigner,
  PartnerApiError,
  type DepositOrder,
  type DepositOrderPage,
  type Event,
  type EventPage,
  type Problem,
  type Withdrawal,
  type WithdrawalPage,
} from '../../src/client/index.js';
import { DONE_ORDER } from '../fixtures/orders.js';

const BASE_URL = 'https://api.partner-platform.test';
const SECRET = 'sk_test_pagination';
const TIMESTAMP = 1763700000;

const ORDER = DONE_ORDER;
const order = (n: number): DepositOrder => ({ ...ORDER, uuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` });

const WITHDRAWAL: Withdrawal = {
  uuid: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  amount: 250,
  blockchain: 'Ethereum',
  currencyCode: 'USDT',
  destinationAddress: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
  status: 'PENDING',
  createAt: '2026-11-20 16:02:11',
  externalId: 'wd-1999',
};

const event = (n: number): Event => ({
  id: `msg_${n}`,
  type: 'order.deposit',
  orderUuid: ORDER.uuid,
  createdAt: '2026-11-21 10:41:12',
  data: { ...ORDER, event: 'order.deposit', occurredAt: '2026-11-21 10:41:12', sequence: n, amount: 2500000, txId: `tx${n}` },
  delivery: { state: 'delivered', url: 'https://merchant.example/callbacks/deposits', attempts: 1 },
});

const json = (body: unknown, status = 200, type = 'application/json') =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': type } });
const problemResponse = (problem: Problem) => json(problem, problem.status, 'application/problem+json');

/** A fetch that records each request's URL and headers and answers with `respond(url)`. */
function recordingFetch(respond: (url: URL) => Response) {
  const requests: Request[] = [];
  const fetch = async (request: Request) => {
    requests.push(request);
    return respond(new URL(request.url));
  };
  const queries = () => requests.map((r) => Object.fromEntries(new URL(r.url).searchParams));
  return { fetch, requests, queries };
}

const clientWith = (fetch: (r: Request) => Promise<Response>) =>
  createPartnerClient({ baseUrl: BASE_URL, apiKey: 'pk_test_1', apiSecret: SECRET, fetch, now: () => TIMESTAMP * 1000 });

/** Three pages of orders, two each: the cursor `c<n>` leads to page n (0, 1, 2). */
function threeOrderPages(url: URL): Response {
  const cursor = url.searchParams.get('cursor');
  const index = cursor === null ? 0 : Number(cursor.slice(1));
  const last = index === 2;
  const page: DepositOrderPage = {
    data: [order(2 * index), order(2 * index + 1)],
    hasMore: !last,
    ...(last ? {} : { nextCursor: `c${index + 1}` }),
  };
  return json(page);
}

describe('listDepositOrders and listWithdrawals walk every page', () => {
  it('walks 3 pages, passing each nextCursor as cursor with the same filters, each request signed over its URL', async () => {
    const { fetch, requests, queries } = recordingFetch(threeOrderPages);
    const partner = clientWith(fetch);
    const uuids: string[] = [];
    for await (const item of partner.listDepositOrders({ status: 'DONE', blockchain: 'Tron', updatedSince: '2026-11-21 00:00:00', limit: 2 })) {
      uuids.push(item.uuid);
    }
    expect(uuids).toEqual([0, 1, 2, 3, 4, 5].map((n) => order(n).uuid));
    const filters = { status: 'DONE', blockchain: 'Tron', updatedSince: '2026-11-21 00:00:00', limit: '2' };
    expect(queries()).toEqual([filters, { ...filters, cursor: 'c1' }, { ...filters, cursor: 'c2' }]);

    const signer = createRequestSigner(SECRET);
    for (const request of requests) {
      const url = new URL(request.url);
      expect(request.method).toBe('GET');
      expect(url.pathname).toBe('/partner/v1/platforms/orders');
      expect(url.search).toContain('updatedSince=2026-11-21%2000%3A00%3A00');
      expect(request.headers.get('X-Api-Key')).toBe('pk_test_1');
      expect(request.headers.get('X-Timestamp')).toBe(String(TIMESTAMP));
      const signature = request.headers.get('X-Signature')!;
      expect(await signer.verify({ timestamp: TIMESTAMP, method: 'GET', target: url.pathname + url.search }, signature)).toBe(true);
      // Over the exact URL: the same request without its query is not what was signed.
      expect(await signer.verify({ timestamp: TIMESTAMP, method: 'GET', target: url.pathname }, signature)).toBe(false);
    }
  });

  it('fetches lazily: nothing before the loop, one request per page, none after a break', async () => {
    const { fetch, requests } = recordingFetch(threeOrderPages);
    const walk = clientWith(fetch).listDepositOrders({ limit: 2 });
    expect(requests).toHaveLength(0);
    const seen: string[] = [];
    for await (const item of walk) {
      seen.push(item.uuid);
      if (seen.length === 3) break; // the first item of the second page
    }
    expect(requests).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(requests).toHaveLength(2);

    // A walk iterated again starts again from its start.
    const again: string[] = [];
    for await (const item of walk) again.push(item.uuid);
    expect(again).toHaveLength(6);
    expect(requests.map((r) => new URL(r.url).searchParams.get('cursor'))).toEqual([null, 'c1', null, 'c1', 'c2']);
  });

  it('.pages() yields the pages with their nextCursor, starting at the given cursor', async () => {
    const { fetch, queries } = recordingFetch(threeOrderPages);
    const pages: DepositOrderPage[] = [];
    for await (const page of clientWith(fetch).listDepositOrders({ cursor: 'c1', customerId: 'cust-42' }).pages()) pages.push(page);
    expect(pages.map((p) => [p.data.length, p.hasMore, p.nextCursor])).toEqual([
      [2, true, 'c2'],
      [2, false, undefined],
    ]);
    expect(queries()).toEqual([{ customerId: 'cust-42', cursor: 'c1' }, { customerId: 'cust-42', cursor: 'c2' }]);
  });

  it('with no query, asks for the first page with no parameter at all', async () => {
    const { fetch, requests } = recordingFetch(() => json({ data: [WITHDRAWAL], hasMore: false } satisfies WithdrawalPage));
    const items: Withdrawal[] = [];
    for await (const item of clientWith(fetch).listWithdrawals()) items.push(item);
    expect(items).toEqual([WITHDRAWAL]);
    expect(requests.map((r) => r.url)).toEqual([`${BASE_URL}/partner/v1/platforms/withdrawals`]);
  });

  it('listWithdrawals passes its filters and limit through', async () => {
    const { fetch, queries } = recordingFetch(() => json({ data: [], hasMore: false } satisfies WithdrawalPage));
    const pages: WithdrawalPage[] = [];
    const walk = clientWith(fetch).listWithdrawals({ status: 'PENDING', externalId: 'wd-1999', createdFrom: '2026-11-20 00:00:00', limit: 100 });
    for await (const page of walk.pages()) pages.push(page);
    expect(pages).toEqual([{ data: [], hasMore: false }]);
    expect(queries()).toEqual([{ status: 'PENDING', externalId: 'wd-1999', createdFrom: '2026-11-20 00:00:00', limit: '100' }]);
  });

  it("keeps the filters it was given, whatever the caller does with the query object later", async () => {
    const { fetch, queries } = recordingFetch(threeOrderPages);
    const query = { status: 'DONE' as const, limit: 2 };
    const walk = clientWith(fetch).listDepositOrders(query);
    query.limit = 50;
    for await (const _ of walk.pages()) break;
    expect(queries()).toEqual([{ status: 'DONE', limit: '2' }]);
  });
});

describe('listEvents reads the feed', () => {
  it('resumes from the given cursor and ends at hasMore false, without polling', async () => {
    const { fetch, queries } = recordingFetch((url) => {
      const cursor = url.searchParams.get('cursor');
      if (cursor === 'e7') return json({ data: [event(8), event(9)], hasMore: true, nextCursor: 'e9' } satisfies EventPage);
      if (cursor === 'e9') return json({ data: [event(10)], hasMore: false, nextCursor: 'e10' } satisfies EventPage);
      return json({ data: [], hasMore: false, nextCursor: cursor ?? 'e0' } satisfies EventPage);
    });
    const partner = clientWith(fetch);
    const state = { cursor: 'e7', ids: [] as string[] };
    for await (const page of partner.listEvents({ cursor: state.cursor, type: 'order.deposit' }).pages()) {
      for (const e of page.data) state.ids.push(e.id);
      state.cursor = page.nextCursor;
    }
    expect(state).toEqual({ cursor: 'e10', ids: ['msg_8', 'msg_9', 'msg_10'] });
    expect(queries()).toEqual([
      { type: 'order.deposit', cursor: 'e7' },
      { type: 'order.deposit', cursor: 'e9' },
    ]);

    // Nothing new: one request, an empty page that still carries the cursor to resume from.
    const pages: EventPage[] = [];
    for await (const page of partner.listEvents({ cursor: state.cursor }).pages()) pages.push(page);
    expect(pages).toEqual([{ data: [], hasMore: false, nextCursor: 'e10' }]);
    const items: Event[] = [];
    for await (const item of partner.listEvents({ cursor: state.cursor })) items.push(item);
    expect(items).toEqual([]);
    expect(queries()).toHaveLength(4);
  });

  it('without a cursor reads from the oldest event kept, and goes through the middleware a caller added', async () => {
    const { fetch, requests } = recordingFetch(() => json({ data: [event(1)], hasMore: false, nextCursor: 'e1' } satisfies EventPage));
    const partner = clientWith(fetch);
    partner.use({
      onRequest({ request }) {
        request.headers.set('X-Trace', 'feed');
        return request;
      },
    });
    const items: Event[] = [];
    for await (const item of partner.listEvents({ orderUuid: ORDER.uuid })) items.push(item);
    expect(items.map((e) => e.data.sequence)).toEqual([1]);
    const url = new URL(requests[0]!.url);
    expect(Object.fromEntries(url.searchParams)).toEqual({ orderUuid: ORDER.uuid });
    expect(requests[0]!.headers.get('X-Trace')).toBe('feed');
    const ok = await createRequestSigner(SECRET).verify(
      { timestamp: TIMESTAMP, method: 'GET', target: url.pathname + url.search },
      requests[0]!.headers.get('X-Signature')!,
    );
    expect(ok).toBe(true);
  });
});

/** What a walk throws, which must be a PartnerApiError; what it yielded before, into `seen`. */
async function failureOf<Item>(walk: AsyncIterable<Item>, seen: Item[] = []): Promise<PartnerApiError> {
  try {
    for await (const item of walk) seen.push(item);
  } catch (err) {
    expect(err).toBeInstanceOf(PartnerApiError);
    return err as PartnerApiError;
  }
  throw new Error('the walk ended without a failure');
}

describe('a failure throws PartnerApiError', () => {
  const invalidCursor: Problem = {
    type: '/docs#/section/errors/validation_failed',
    title: 'Validation failed',
    status: 422,
    code: 'validation_failed',
    detail: 'The query parameter cursor is invalid: it was not issued to this API key for these filters, or it was changed.',
    errors: [{ pointer: '', parameter: 'cursor', detail: 'was not issued to this API key for these filters, or it was changed' }],
  };
  const expired: Problem = {
    type: '/docs#/section/errors/cursor_expired',
    title: 'Cursor expired',
    status: 410,
    code: 'cursor_expired',
  };

  it('a 422 on a later page, after the items of the pages before it', async () => {
    const { fetch } = recordingFetch((url) => (url.searchParams.get('cursor') === 'c1' ? problemResponse(invalidCursor) : threeOrderPages(url)));
    const seen: DepositOrder[] = [];
    const error = await failureOf(clientWith(fetch).listDepositOrders(), seen);
    expect(seen).toHaveLength(2);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('PartnerApiError');
    expect(error.status).toBe(422);
    expect(error.problem).toEqual(invalidCursor);
    expect(error.response.status).toBe(422);
    expect(error.problem?.errors?.[0]?.parameter).toBe('cursor');
    expect(error.message).toBe(`422 validation_failed: ${invalidCursor.detail}`);
  });

  it('a 410 cursor_expired from the feed, typed', async () => {
    const { fetch } = recordingFetch(() => problemResponse(expired));
    const error = await failureOf(clientWith(fetch).listEvents({ cursor: 'e-old' }).pages());
    const code: Problem['code'] | undefined = error.problem?.code;
    expect([error.status, code]).toEqual([410, 'cursor_expired']);
    expect(error.message).toBe('410 cursor_expired: Cursor expired');
  });

  it('a body that is not a problem leaves problem undefined', async () => {
    const { fetch } = recordingFetch(() => new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway', headers: { 'Content-Type': 'text/html' } }));
    const error = await failureOf(clientWith(fetch).listWithdrawals());
    expect(error.status).toBe(502);
    expect(error.problem).toBeUndefined();
    expect(error.message).toBe('502 Bad Gateway: the response is not a problem (RFC 9457)');
  });

  it('a page that says hasMore without a new nextCursor, after yielding it, instead of asking for it again and again', async () => {
    const { fetch, requests } = recordingFetch(() => json({ data: [event(1)], hasMore: true, nextCursor: 'same' }));
    const items: Event[] = [];
    const error = await failureOf(clientWith(fetch).listEvents({ cursor: 'same' }), items);
    expect(items).toHaveLength(1);
    expect(requests).toHaveLength(1);
    expect(error.message).toMatch(/no new nextCursor/);
  });

  it('a 2xx answer that is not a page', async () => {
    const { fetch } = recordingFetch(() => json({ uuid: 'x' }));
    expect((await failureOf(clientWith(fetch).listDepositOrders())).message).toBe('200: the response is not a page');
  });
});

describe('the iterators are typed by the contract', () => {
  it('refuses a filter value the contract does not have (tsc checks this file)', () => {
    const partner = clientWith(async () => json({ data: [], hasMore: false }));
    // @ts-expect-error 'PAID' is no OrderStatus
    partner.listDepositOrders({ status: 'PAID' });
    // @ts-expect-error withdrawals have no blockchain filter
    partner.listWithdrawals({ blockchain: 'Tron' });
    // @ts-expect-error limit is a number
    partner.listEvents({ limit: '20' });
    // Building a walk requests nothing: the calls above sent no request.
    const storedCursor = (page: EventPage): string => page.nextCursor; // always there, on an event page
    const listCursor = (page: DepositOrderPage): string | undefined => page.nextCursor;
    // @ts-expect-error a list page's nextCursor is there only when hasMore is true
    const notAlways = (page: DepositOrderPage): string => page.nextCursor;
    expect([storedCursor, listCursor, notAlways]).toHaveLength(3);
  });
});
