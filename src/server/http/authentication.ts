// Request authentication per DESIGN §3, on the raw request: the raw request target and the raw body
// bytes, checked before any JSON is parsed; timestamps within the tolerance; signatures compared in
// constant time (src/signing: node:crypto timingSafeEqual, or WebCrypto verify).
import type { FastifyRequest } from 'fastify';
import { createRequestSigner, type RequestSigner } from '../../signing/index.js';
import type { Merchant, Merchants } from '../merchants/merchants.js';
import type { Clock } from '../shared/time.js';
import { ProblemError } from './problems.js';

interface CachedMerchant {
  merchant: Merchant;
  signer: RequestSigner;
  expires: number;
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;

export interface Authenticator {
  /**
   * The merchant that signed the request; throws a 401 ProblemError naming the failed check.
   * `beforeLookup` runs before an API key not in the cache costs any work (it charges the caller's
   * quota and may throw a 429), so guessing keys is bounded before it reaches the database.
   */
  authenticate(request: FastifyRequest, rawBody: Uint8Array | undefined, beforeLookup: () => void): Promise<Merchant>;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function createAuthenticator(merchants: Merchants, toleranceSeconds: number, now: Clock): Authenticator {
  // Merchants and their imported HMAC keys are kept for a short while: a signed GET then costs no
  // database round trip for authentication.
  const cache = new Map<string, CachedMerchant>();
  // Keys no merchant has, for as long: a flood of made-up keys costs one query each at most once.
  const misses = new Map<string, number>();

  async function lookup(apiKey: string, beforeLookup: () => void): Promise<CachedMerchant | undefined> {
    const hit = cache.get(apiKey);
    if (hit && hit.expires > now()) return hit;
    beforeLookup();
    if ((misses.get(apiKey) ?? 0) > now()) return undefined;
    const merchant = await merchants.byApiKey(apiKey);
    if (!merchant) {
      if (misses.size >= CACHE_MAX) misses.clear();
      misses.set(apiKey, now() + CACHE_TTL_MS);
      return undefined;
    }
    if (cache.size >= CACHE_MAX) cache.clear();
    const entry = { merchant, signer: createRequestSigner(merchants.credentials(merchant).apiSecret), expires: now() + CACHE_TTL_MS };
    cache.set(apiKey, entry);
    return entry;
  }

  return {
    async authenticate(request, rawBody, beforeLookup) {
      const apiKey = headerValue(request, 'x-api-key');
      const timestamp = headerValue(request, 'x-timestamp');
      const signature = headerValue(request, 'x-signature');
      const missing = [!apiKey && 'X-Api-Key', !timestamp && 'X-Timestamp', !signature && 'X-Signature'].filter(Boolean);
      if (missing.length > 0) throw new ProblemError(401, 'missing_credentials', `Missing header: ${missing.join(', ')}.`);
      if (!/^\d{1,12}$/.test(timestamp!)) throw new ProblemError(401, 'missing_credentials', 'X-Timestamp must be UNIX time in seconds.');
      if (!/^[0-9a-f]{64}$/.test(signature!)) throw new ProblemError(401, 'missing_credentials', 'X-Signature must be 64 lowercase hex characters.');
      if (apiKey!.length > 128) throw new ProblemError(401, 'unknown_api_key', 'No merchant has this API key.');

      const serverTime = Math.floor(now() / 1000);
      if (Math.abs(serverTime - Number(timestamp)) > toleranceSeconds) {
        throw new ProblemError(
          401,
          'timestamp_out_of_window',
          `X-Timestamp ${timestamp} is more than ${toleranceSeconds} s from the server's time ${serverTime}.`,
          { serverTime },
        );
      }
      const entry = await lookup(apiKey!, beforeLookup);
      if (!entry) throw new ProblemError(401, 'unknown_api_key', 'No merchant has this API key.');
      const parts = { timestamp: timestamp!, method: request.method, target: request.raw.url ?? '', body: rawBody };
      if (!(await entry.signer.verify(parts, signature!))) {
        throw new ProblemError(401, 'invalid_signature', 'X-Signature does not match the request; sign X-Timestamp + METHOD + request target + raw body.');
      }
      return entry.merchant;
    },
  };
}
