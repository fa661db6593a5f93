// Request authentication (docs/design.md#request-authentication), on the raw request: the raw
// request target and the raw body bytes, checked before any JSON is parsed; timestamps within the
// tolerance; signatures compared in constant time (src/signing: node:crypto timingSafeEqual, or
// WebCrypto verify). Also the guard every merchant route (partner and sandbox) runs:
// authentication, the failure budget per client address, the merchant's quota, then JSON.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createRequestSigner, type RequestSigner } from '../../signing/index.js';
import type { Merchant, Merchants } from '../merchants/merchants.js';
import type { Clock } from '../shared/time.js';
import { ProblemError } from './problems.js';
import type { RateLimiter } from './rate-limit.js';

interface CachedMerchant {
  merchant: Merchant;
  signer: RequestSigner;
  expires: number;
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;

/** A refusal of a request the merchant did sign (a timestamp out of the window): counted on the merchant's quota. */
export class MerchantRefusal extends Error {
  constructor(
    readonly merchant: Merchant,
    readonly problem: ProblemError,
  ) {
    super(problem.detail);
  }
}

export interface Authenticator {
  /** The merchant that signed the request; throws a 401 ProblemError naming the failed check. */
  authenticate(request: FastifyRequest, rawBody: Uint8Array | undefined): Promise<Merchant>;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function createAuthenticator(merchants: Merchants, toleranceSeconds: number, now: Clock): Authenticator {
  // Merchants and their imported HMAC keys are kept for a short while: a signed GET then costs no
  // database round trip for authentication.
  const cache = new Map<string, CachedMerchant>();
  // Keys no merchant has, for as long: a flood of made-up keys costs one indexed query per key and
  // 30 s, and the same key asked for by many requests at once is looked up once (`pending`).
  const misses = new Map<string, number>();
  const pending = new Map<string, Promise<CachedMerchant | undefined>>();

  function lookup(apiKey: string): Promise<CachedMerchant | undefined> {
    const hit = cache.get(apiKey);
    if (hit && hit.expires > now()) return Promise.resolve(hit);
    if ((misses.get(apiKey) ?? 0) > now()) return Promise.resolve(undefined);
    let loading = pending.get(apiKey);
    if (!loading) {
      loading = load(apiKey).finally(() => pending.delete(apiKey));
      pending.set(apiKey, loading);
    }
    return loading;
  }

  async function load(apiKey: string): Promise<CachedMerchant | undefined> {
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
    async authenticate(request, rawBody) {
      const apiKey = headerValue(request, 'x-api-key');
      const timestamp = headerValue(request, 'x-timestamp');
      const signature = headerValue(request, 'x-signature');
      const missing = [!apiKey && 'X-Api-Key', !timestamp && 'X-Timestamp', !signature && 'X-Signature'].filter(Boolean);
      if (missing.length > 0) throw new ProblemError(401, 'missing_credentials', `Missing header: ${missing.join(', ')}.`);
      if (!/^\d{1,12}$/.test(timestamp!)) throw new ProblemError(401, 'missing_credentials', 'X-Timestamp must be UNIX time in seconds.');
      if (!/^[0-9a-f]{64}$/.test(signature!)) throw new ProblemError(401, 'missing_credentials', 'X-Signature must be 64 lowercase hex characters.');
      if (apiKey!.length > 128) throw new ProblemError(401, 'unknown_api_key', 'No merchant has this API key.');

      const serverTime = Math.floor(now() / 1000);
      const outOfWindow =
        Math.abs(serverTime - Number(timestamp)) > toleranceSeconds &&
        new ProblemError(401, 'timestamp_out_of_window', `X-Timestamp ${timestamp} is more than ${toleranceSeconds} s from the server's time ${serverTime}.`, { serverTime });
      const entry = await lookup(apiKey!);
      if (!entry) throw outOfWindow || new ProblemError(401, 'unknown_api_key', 'No merchant has this API key.');
      const parts = { timestamp: timestamp!, method: request.method, target: request.raw.url ?? '', body: rawBody };
      if (!(await entry.signer.verify(parts, signature!))) {
        throw outOfWindow || new ProblemError(401, 'invalid_signature', 'X-Signature does not match the request; sign X-Timestamp + METHOD + request target + raw body.');
      }
      // Signed by the merchant, only at the wrong time (a clock off): its own mistake, on its own budget.
      if (outOfWindow) throw new MerchantRefusal(entry.merchant, outOfWindow);
      return entry.merchant;
    },
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    merchant: Merchant | null;
  }
}

export interface GuardDeps {
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJsonBody(request: FastifyRequest, raw: Buffer | undefined): unknown {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(type)) {
    throw new ProblemError(415, 'unsupported_media_type', 'Send the body as application/json.');
  }
  try {
    return JSON.parse(utf8.decode(raw ?? new Uint8Array()));
  } catch {
    throw new ProblemError(400, 'malformed_json', 'The request body is not valid UTF-8 JSON.');
  }
}

/**
 * The preValidation guard of every merchant route: authentication on the raw bytes, the quota, and
 * only then JSON parsing, so that nothing unauthenticated is ever parsed.
 */
export function merchantGuard({ authenticator, rateLimiter }: GuardDeps) {
  return async function guard(request: FastifyRequest, reply: FastifyReply) {
    const raw = Buffer.isBuffer(request.body) ? request.body : undefined;
    let merchant: Merchant;
    try {
      merchant = await authenticator.authenticate(request, raw);
    } catch (error) {
      if (error instanceof MerchantRefusal) {
        // A merchant that authenticates is judged by its own budget, never by its address's failures.
        const state = rateLimiter.take(`merchant:${error.merchant.id}`);
        reply.headers(rateLimiter.headers(state));
        if (!state.allowed) throw new ProblemError(429, 'rate_limited', `The quota (${rateLimiter.policy}) is used up; retry in ${state.resetSeconds} s.`);
        throw error.problem;
      }
      // Only a failure is charged to the caller's address, once the lookup or the check has failed:
      // a correctly signed request of an existing merchant never pays for other callers' failures,
      // even from the same address (one NAT, or a proxy not listed in TRUSTED_PROXIES).
      const state = rateLimiter.take(`ip:${request.ip}`);
      reply.headers(rateLimiter.headers(state));
      if (!state.allowed) throw new ProblemError(429, 'rate_limited', `Too many failed authentications from this address; retry in ${state.resetSeconds} s.`);
      throw error;
    }
    const state = rateLimiter.take(`merchant:${merchant.id}`);
    reply.headers(rateLimiter.headers(state));
    if (!state.allowed) throw new ProblemError(429, 'rate_limited', `The quota (${rateLimiter.policy}) is used up; retry in ${state.resetSeconds} s.`);
    request.merchant = merchant;
    // Only an operation with a request body has one to parse (a redelivery's POST has none).
    if (request.routeOptions.schema?.body) request.body = parseJsonBody(request, raw);
  };
}
