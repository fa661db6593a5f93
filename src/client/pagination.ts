import type { operations } from '../../generated/schema.js';
import { PartnerApiError } from './errors.js';

/** The filters of `listDepositOrders`, and `limit` and the `cursor` to start from. */
export type ListDepositOrdersQuery = NonNullable<operations['listDepositOrders']['parameters']['query']>;
/** The filters of `listWithdrawals`, and `limit` and the `cursor` to start from. */
export type ListWithdrawalsQuery = NonNullable<operations['listWithdrawals']['parameters']['query']>;
/** The filters of `listEvents`, and `limit` and the `cursor` to resume from. */
export type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>;
/** The filters of `listAllEvents`, and `limit` and the `cursor` to resume from. */
export type ListAllEventsQuery = NonNullable<operations['listAllEvents']['parameters']['query']>;

/**
 * A walk over a list, page by page: iterate it for the items, or `.pages()` for the pages (with
 * `hasMore` and `nextCursor`, to store). Each page is one request, made only when the loop asks for
 * more: breaking out of the loop requests nothing further. The walk starts at the query's `cursor`
 * (or at the first page without one), passes each page's `nextCursor` as `cursor` with the same
 * filters, and ends after the page whose `hasMore` is false. Each iteration is a walk of its own, from
 * the start. A failure throws `PartnerApiError`.
 */
export interface Paged<Item, Page> extends AsyncIterable<Item> {
  pages(): AsyncIterable<Page>;
}

interface PageShape<Item> {
  data: Item[];
  hasMore: boolean;
  nextCursor?: string;
}

/** What an openapi-fetch call resolves to. */
interface FetchResult<Page> {
  data?: Page;
  error?: unknown;
  response: Response;
}

/** A walk that fetches each page with `fetchPage`, given the query with the page's cursor. */
export function paged<Item, Page extends PageShape<Item>, Query extends { cursor?: string }>(
  fetchPage: (query: Query) => Promise<FetchResult<Page>>,
  query: Query | undefined,
): Paged<Item, Page> {
  // A copy: the walk keeps the filters it was given, whatever the caller does with its object later.
  const start = { ...query } as Query;

  async function* pages(): AsyncGenerator<Page, void, undefined> {
    let cursor = start.cursor;
    for (;;) {
      const { data, error, response } = await fetchPage({ ...start, cursor });
      if (!response.ok) throw new PartnerApiError(response, error);
      if (!isPage<Item>(data)) throw new PartnerApiError(response, undefined, `${response.status}: the response is not a page`);
      yield data as Page;
      if (!data.hasMore) return;
      // A page that says more follow but gives no way on would be asked for again and again.
      if (typeof data.nextCursor !== 'string' || data.nextCursor === cursor) {
        throw new PartnerApiError(response, undefined, `${response.status}: the page has more but no new nextCursor`);
      }
      cursor = data.nextCursor;
    }
  }

  return {
    pages,
    async *[Symbol.asyncIterator]() {
      for await (const page of pages()) yield* page.data;
    },
  };
}

function isPage<Item>(body: unknown): body is PageShape<Item> {
  return typeof body === 'object' && body !== null && Array.isArray((body as PageShape<Item>).data) && typeof (body as PageShape<Item>).hasMore === 'boolean';
}
