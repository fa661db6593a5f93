import openapiFetch, { type Client } from 'openapi-fetch';
import type { DepositOrder, DepositOrderPage, Event, EventPage, paths, Withdrawal, WithdrawalPage } from '../../generated/schema.js';
import { requestClass, signingFetch, type Clock, type Fetch } from './auth.js';
import { paged, type ListDepositOrdersQuery, type ListEventsQuery, type ListWithdrawalsQuery, type Paged } from './pagination.js';

export interface PartnerClientOptions {
  /** Absolute base URL of the API, e.g. `https://api.partner-platform.test`. */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** A fetch to use instead of the global one (a test double, a proxy-aware fetch). */
  fetch?: Fetch;
  /** Clock for X-Timestamp, in milliseconds like Date.now. */
  now?: Clock;
}

/**
 * The typed openapi-fetch client (`GET`, `POST`, …, `use`) with iterators over the lists and the
 * events feed. Each iterator walks the pages lazily and throws `PartnerApiError` on a failure.
 */
export interface PartnerClient extends Client<paths> {
  /** Deposit orders, newest first, matching the filters: `GET /partner/v1/platforms/orders` page by page. */
  listDepositOrders(query?: ListDepositOrdersQuery): Paged<DepositOrder, DepositOrderPage>;
  /** Withdrawals, newest first, matching the filters: `GET /partner/v1/platforms/withdrawals` page by page. */
  listWithdrawals(query?: ListWithdrawalsQuery): Paged<Withdrawal, WithdrawalPage>;
  /**
   * The events feed, oldest first, from `query.cursor` (a page's stored `nextCursor`) or from the oldest
   * event kept: `GET /partner/v1/platforms/events` page by page, up to the page whose `hasMore` is false
   * (it does not wait for new events). Every page has a `nextCursor` to resume from, an empty one too.
   */
  listEvents(query?: ListEventsQuery): Paged<Event, EventPage>;
}

// openapi-fetch's CommonJS build sets `exports.default` without an `__esModule` marker, so under
// require() its default import is the exports object, while under ESM it is the function itself.
const createClient = (openapiFetch as unknown as { default?: typeof openapiFetch }).default ?? openapiFetch;

/** Thrown by createPartnerClient when its options cannot make a working client. */
export class PartnerClientConfigError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'PartnerClientConfigError';
  }
}

function checkedBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || !URL.canParse(baseUrl)) {
    throw new PartnerClientConfigError(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  const url = new URL(baseUrl);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new PartnerClientConfigError(`baseUrl must use http or https, got ${url.protocol}`);
  }
  if (url.search || url.hash) throw new PartnerClientConfigError('baseUrl must not carry a query or a fragment');
  return baseUrl.replace(/\/+$/, '');
}

function checkedCredential(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new PartnerClientConfigError(`${name} is required: a non-empty string`);
  }
  return value;
}

/**
 * A typed client of the partner API whose every request is signed. Each call returns
 * `{ data, error, response }`: `error` is the typed problem (`Problem`) of a failure. The list
 * iterators (`listDepositOrders`, `listWithdrawals`, `listEvents`) throw `PartnerApiError` instead.
 */
export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  if (typeof options !== 'object' || options === null) throw new PartnerClientConfigError('options are required');
  const baseUrl = checkedBaseUrl(options.baseUrl);
  const apiKey = checkedCredential('apiKey', options.apiKey);
  const apiSecret = checkedCredential('apiSecret', options.apiSecret);
  let middlewares = false;
  const client = createClient<paths>({
    baseUrl,
    Request: requestClass(() => middlewares),
    fetch: signingFetch(apiKey, apiSecret, options.now ?? Date.now, options.fetch),
  });
  const use = client.use.bind(client);
  client.use = (...added) => {
    middlewares = true;
    use(...added);
  };
  const lists: Omit<PartnerClient, keyof Client<paths>> = {
    listDepositOrders: (query) => paged((q) => client.GET('/partner/v1/platforms/orders', { params: { query: q } }), query),
    listWithdrawals: (query) => paged((q) => client.GET('/partner/v1/platforms/withdrawals', { params: { query: q } }), query),
    listEvents: (query) => paged((q) => client.GET('/partner/v1/platforms/events', { params: { query: q } }), query),
  };
  return Object.assign(client, lists);
}
