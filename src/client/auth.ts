import { createRequestSigner, type Clock } from '../signing/index.js';

export type { Clock };

export type Fetch = (input: Request) => Promise<Response>;

/**
 * The fetch openapi-fetch calls: signs each request per docs/design.md#request-authentication over what is really sent (the body
 * bytes openapi-fetch serialized, and the path and query of its URL) and sends it. Signing here rather
 * than in a middleware runs after any middleware a caller added, and reads the body once instead of
 * cloning the request; the request goes out as a URL and init (no second Request) unless the caller
 * gave a fetch of their own, which gets a Request as it always has.
 */
export function signingFetch(apiKey: string, apiSecret: string, now: Clock, send: Fetch | undefined): Fetch {
  const signer = createRequestSigner(apiSecret);
  return async (request) => {
    const body = request instanceof Request ? await realBodyBytes(request) : plainBodyBytes(request);
    const url = request.url;
    // A normalised absolute URL: the target is everything from the first slash after the authority.
    const target = url.slice(url.indexOf('/', url.indexOf('//') + 2));
    const timestamp = Math.floor(now() / 1000);
    const signature = await signer.sign({ timestamp, method: request.method, target, body });
    const headers = request.headers;
    headers.set('X-Api-Key', apiKey);
    headers.set('X-Timestamp', String(timestamp));
    headers.set('X-Signature', signature);
    // A caller's AbortSignal and the redirect mode travel on the request (openapi-fetch copies its init's
    // fields onto a plain request).
    const init: RequestInit = { method: request.method, headers, signal: request.signal ?? null, redirect: request.redirect ?? 'follow' };
    if (body) init.body = body as Uint8Array<ArrayBuffer>;
    return send ? send(new Request(url, init)) : fetch(url, init);
  };
}

/**
 * What openapi-fetch builds a request with (its `Request` option): the URL, method, headers and the
 * body it serialized, kept as they are. Building a real Request, with its stream and AbortSignal, only
 * for fetch to build another was about a quarter of the client's overhead over a raw fetch. Once a
 * caller adds a middleware (which is owed a real Request), the constructor returns a real one.
 */
export function requestClass(middlewaresInUse: () => boolean): typeof Request {
  return class PlainRequest {
    /** openapi-fetch checks a middleware's result against this class: a real Request is one too. */
    static [Symbol.hasInstance](value: unknown): boolean {
      return value instanceof Request || (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === PlainRequest.prototype);
    }

    readonly url!: string;
    readonly method!: string;
    readonly headers!: Headers;
    readonly body: string | Uint8Array | undefined;
    constructor(url: string, init: { method?: string; headers: Headers; body?: string | Uint8Array }) {
      if (middlewaresInUse()) return new Request(url, init as RequestInit) as unknown as PlainRequest;
      this.url = url;
      this.method = init.method ?? 'GET';
      this.headers = init.headers;
      this.body = init.body;
    }
  } as unknown as typeof Request;
}

const utf8 = new TextEncoder();

/** The bytes a plain request will send: its JSON text. Read without an await, which would cost a turn. */
function plainBodyBytes(request: object): Uint8Array | undefined {
  const body = (request as { body?: string | Uint8Array }).body;
  return typeof body === 'string' ? utf8.encode(body) : body;
}

/** The bytes a real Request will send, read once. */
async function realBodyBytes(request: Request): Promise<Uint8Array | undefined> {
  return request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
}
