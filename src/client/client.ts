import openapiFetch, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/schema.js';
import { requestClass, signingFetch, type Clock, type Fetch } from './auth.js';

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

export type PartnerClient = Client<paths>;

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
 * `{ data, error, response }`: `error` is the typed problem (`Problem`) of a failure.
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
  return client;
}
