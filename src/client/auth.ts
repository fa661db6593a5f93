import { createRequestSigner } from '../signing/index.js';

/** Clock in milliseconds since the epoch, like Date.now; injectable for tests. */
export type Clock = () => number;

export type Fetch = (input: Request) => Promise<Response>;

/**
 * The fetch openapi-fetch calls: signs each request per DESIGN §3 over what is really sent (the body
 * bytes openapi-fetch serialized, and the path and query of its URL) and sends it. Signing here rather
 * than in a middleware runs after any middleware a caller added, and reads the body once instead of
 * cloning the request; the request goes out as a URL and init (no second Request) unless the caller
 * gave a fetch of their own, which gets a Request as it always has.
 */
export function signingFetch(apiKey: string, apiSecret: string, now: Clock, send: Fetch | undefined): Fetch {
  const signer = createRequestSigner(apiSecret);
  return async (request) => {
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
    const url = request.url;
    // A normalised absolute URL: the target is everything from the first slash after the authority.
    const target = url.slice(url.indexOf('/', url.indexOf('//') + 2));
    const timestamp = Math.floor(now() / 1000);
    const signature = await signer.sign({ timestamp, method: request.method, target, body });
    const headers = request.headers;
    headers.set('X-Api-Key', apiKey);
    headers.set('X-Timestamp', String(timestamp));
    headers.set('X-Signature', signature);
    const init: RequestInit = { method: request.method, headers, signal: request.signal, redirect: request.redirect, ...(body ? { body } : {}) };
    return send ? send(new Request(url, init)) : fetch(url, init);
  };
}
