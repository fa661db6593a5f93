import openapiFetch, { type Client } from 'openapi-fetch';
import type { Balance, CreateWithdrawalRequest, DepositOrder, DepositOrderPage, Event, EventPage, paths, PlatformEvent, PlatformEventPage, Withdrawal, WithdrawalPage, WithdrawalTerms } from '../../generated/schema.js';
import { PartnerApiError, WithdrawalRefusedError } from './errors.js';
import { requestClass, signingFetch, type Clock, type Fetch } from './auth.js';
import { paged, type ListAllEventsQuery, type ListDepositOrdersQuery, type ListEventsQuery, type ListWithdrawalsQuery, type Paged } from './pagination.js';

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
  /**
   * The feed of every event, orders' and withdrawals', oldest first: `GET /partner/v2/platforms/events`
   * page by page, as `listEvents` walks the orders' feed. Each event names its `orderUuid` or its
   * `withdrawalUuid`; skip a `type` your code does not know.
   */
  listAllEvents(query?: ListAllEventsQuery): Paged<PlatformEvent, PlatformEventPage>;
  /**
   * Asks for a withdrawal from the balance (`POST /partner/v1/platforms/withdrawals`): the withdrawal,
   * new or the same one again for the same request (idempotent on `externalId`). A refusal throws
   * `WithdrawalRefusedError`, its `problem.code` one of `insufficient_balance` (with `available`),
   * `daily_limit_exceeded`, `withdrawals_disabled`, `validation_failed` or `network_halted` (`503`: send
   * the same request again later); any other failure (`409`
   * `external_id_conflict`, `401`, `429`, …) `PartnerApiError`.
   */
  createWithdrawal(request: CreateWithdrawalRequest): Promise<Withdrawal>;
  /** Your balance on each network, in the smallest unit (`GET /partner/v1/platforms/balances`); throws `PartnerApiError`. */
  getBalances(): Promise<Balance[]>;
  /**
   * What a withdrawal must meet now on each network (`GET /partner/v1/platforms/withdrawals/terms`):
   * `enabled`, `fee`, `minimum`, `maximum`, `dailyLimit` and `dailyLeft`, `approvalAbove` (whole units,
   * as a withdrawal's `amount`; `null` where there is no limit) and `allowedDestinations` (empty: any);
   * throws `PartnerApiError`.
   */
  getWithdrawalTerms(): Promise<WithdrawalTerms[]>;
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

/** The data of a call that succeeded; else its failure as PartnerApiError. */
function succeeded<Data>({ data, error, response }: { data?: Data; error?: unknown; response: Response }): Data {
  if (!response.ok || data === undefined) throw new PartnerApiError(response, error);
  return data;
}

/**
 * A typed client of the partner API whose every request is signed. Each call returns
 * `{ data, error, response }`: `error` is the typed problem (`Problem`) of a failure. The list
 * iterators (`listDepositOrders`, `listWithdrawals`, `listEvents`, `listAllEvents`), `createWithdrawal`,
 * `getBalances` and `getWithdrawalTerms` return the data and throw `PartnerApiError` instead.
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
  const calls: Omit<PartnerClient, keyof Client<paths>> = {
    listDepositOrders: (query) => paged((q) => client.GET('/partner/v1/platforms/orders', { params: { query: q } }), query),
    listWithdrawals: (query) => paged((q) => client.GET('/partner/v1/platforms/withdrawals', { params: { query: q } }), query),
    listEvents: (query) => paged((q) => client.GET('/partner/v1/platforms/events', { params: { query: q } }), query),
    listAllEvents: (query) => paged((q) => client.GET('/partner/v2/platforms/events', { params: { query: q } }), query),
    createWithdrawal: async (request) => {
      const result = await client.POST('/partner/v1/platforms/withdrawals', { body: request });
      if (WithdrawalRefusedError.is(result.response, result.error)) throw new WithdrawalRefusedError(result.response, result.error);
      return succeeded(result);
    },
    getBalances: async () => succeeded(await client.GET('/partner/v1/platforms/balances')).data,
    getWithdrawalTerms: async () => succeeded(await client.GET('/partner/v1/platforms/withdrawals/terms')).data,
  };
  return Object.assign(client, calls);
}
