// Request authentication (docs/design.md#request-authentication), on the raw request: the raw
// request target and the raw body bytes, checked before any JSON is parsed; timestamps within the
// tolerance; signatures compared in constant time (src/signing: node:crypto timingSafeEqual, or
// WebCrypto verify). And the merchant's routes, registered together in one Fastify plugin (as fastify's
// demo registers a concern once for the routes it covers) whose preValidation hook is the guard they all
// run: authentication, the failure budget per client address, the merchant's quota, then JSON.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRequestSigner, type RequestSigner } from '../../signing/index.js';
import type { Merchant, Merchants } from '../merchants/merchants.js';
import { firstDuplicateKey, memberNumberText } from '../shared/json-keys.js';
import type { Clock } from '../shared/time.js';
import { ProblemError } from './problems.js';
import type { RateLimiter } from './rate-limit.js';

interface CachedMerchant {
  merchant: Merchant;
  signer: RequestSigner;
  /** The previous secret version's signer during a rotation's grace period, until `until` (performance.now()). */
  previous: { signer: RequestSigner; until: number } | undefined;
  expires: number;
  /** The number of loads this authenticator had started with this one: a request that arrived before a load with a higher number started sees what was committed before it was sent. */
  generation: number;
  /** When its load started (performance.now()). */
  loadedAt: number;
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;
/** A signature that matches no secret of a cached merchant reloads it, at most once per key in this interval. */
const RELOAD_INTERVAL_MS = 1_000;

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
  // A signature that matches none of a cached merchant's secrets may be signed with secrets rotated
  // since the merchant was read (in another process: `merchants rotate-secrets`): the merchant is read
  // again, once for all the requests waiting, at most once per key per RELOAD_INTERVAL_MS (a flood of
  // bad signatures makes no query each; a request waits for the next allowed read instead of being
  // refused, so a new secret works at once).
  const reloads = new Map<string, { generation: number | undefined; done: Promise<CachedMerchant | undefined> }>();
  let loadsStarted = 0;
  // A merchant whose secrets changed through this instance (a rotation or an ended grace run by the
  // platform for an operator) is forgotten at once, and no load started before the change is kept: the
  // old secret stops here when the command returns, not up to 30 s later.
  const changedAt = new Map<string, number>();
  merchants.onSecretsChanged((apiKey) => {
    if (changedAt.size >= CACHE_MAX) changedAt.clear();
    changedAt.set(apiKey, loadsStarted);
    cache.delete(apiKey);
    pending.delete(apiKey); // a request from now on waits for a load of its own
  });

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

  async function load(apiKey: string, generation = ++loadsStarted): Promise<CachedMerchant | undefined> {
    const loadedAt = performance.now();
    const merchant = await merchants.byApiKey(apiKey);
    if (!merchant) {
      if (misses.size >= CACHE_MAX) misses.clear();
      misses.set(apiKey, now() + CACHE_TTL_MS);
      cache.delete(apiKey);
      return undefined;
    }
    if (cache.size >= CACHE_MAX) cache.clear();
    const previous = merchants.previousCredentials(merchant);
    const entry: CachedMerchant = {
      merchant,
      signer: createRequestSigner(merchants.credentials(merchant).apiSecret),
      // The grace period's end by the database's clock, as time left from the read, counted from before
      // it was sent: it ends here no later than in the database (by up to the query's time earlier).
      previous: previous && { signer: createRequestSigner(previous.apiSecret), until: loadedAt + merchant.previousSecretRemainingMs },
      expires: now() + CACHE_TTL_MS,
      generation,
      loadedAt,
    };
    const current = cache.get(apiKey);
    if ((!current || current.generation < generation) && generation > (changedAt.get(apiKey) ?? 0)) cache.set(apiKey, entry);
    return entry;
  }

  /** The merchant as read by a load that started after `arrived` loads had started. */
  async function reload(apiKey: string, arrived: number): Promise<CachedMerchant | undefined> {
    for (;;) {
      const hit = cache.get(apiKey);
      if (hit && hit.generation > arrived) return hit;
      const running = reloads.get(apiKey);
      if (running) {
        if (running.generation === undefined || running.generation > arrived) return running.done;
        await running.done; // it started before this request arrived: the next one
        continue;
      }
      const wait = hit ? Math.max(0, Math.min(RELOAD_INTERVAL_MS, hit.loadedAt + RELOAD_INTERVAL_MS - performance.now())) : 0;
      const next: { generation: number | undefined; done: Promise<CachedMerchant | undefined> } = { generation: undefined, done: Promise.resolve(undefined) };
      next.done = sleep(wait)
        .then(() => load(apiKey, (next.generation = ++loadsStarted)))
        .finally(() => reloads.delete(apiKey));
      reloads.set(apiKey, next);
      return next.done;
    }
  }

  async function verifies(entry: CachedMerchant, parts: Parameters<RequestSigner['verify']>[0], signature: string): Promise<boolean> {
    if (await entry.signer.verify(parts, signature)) return true;
    return entry.previous !== undefined && entry.previous.until > performance.now() && (await entry.previous.signer.verify(parts, signature));
  }

  return {
    async authenticate(request, rawBody) {
      const arrived = loadsStarted;
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
      let entry = await lookup(apiKey!);
      if (!entry) throw outOfWindow || new ProblemError(401, 'unknown_api_key', 'No merchant has this API key.');
      const parts = { timestamp: timestamp!, method: request.method, target: request.raw.url ?? '', body: rawBody };
      if (!(await verifies(entry, parts, signature!))) {
        // Read before this request arrived: its secrets may have been rotated since. Read it again.
        entry = entry.generation > arrived ? undefined : await reload(apiKey!, arrived);
        if (!entry || !(await verifies(entry, parts, signature!))) {
          throw outOfWindow || new ProblemError(401, 'invalid_signature', 'X-Signature does not match the request; sign X-Timestamp + METHOD + request target + raw body.');
        }
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
    /** The JSON body's text, once the guard parsed it (a merchant's route with a body). */
    jsonText: string | null;
  }
}

export interface GuardDeps {
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON body, and its text, where what JSON.parse rounds is read as written (writtenNumber). */
function parseJsonBody(request: FastifyRequest, raw: Buffer | undefined): { body: unknown; text: string } {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(type)) {
    throw new ProblemError(415, 'unsupported_media_type', 'Send the body as application/json.');
  }
  let text: string;
  let body: unknown;
  try {
    text = utf8.decode(raw ?? new Uint8Array());
    body = JSON.parse(text);
  } catch {
    throw new ProblemError(400, 'malformed_json', 'The request body is not valid UTF-8 JSON.');
  }
  const twice = firstDuplicateKey(text);
  if (twice !== undefined) {
    throw new ProblemError(400, 'malformed_json', `The request body has the key ${JSON.stringify(twice.slice(0, 64))} twice in one object: a signed body must mean one thing.`);
  }
  return { body, text };
}

/**
 * A number of the JSON body's top-level object as the caller wrote it, or undefined: the body's number
 * is a double, which has rounded what needs more than about 16 digits (an amount of whole USDT, issue 53).
 */
export function writtenNumber(request: FastifyRequest, name: string): string | undefined {
  return request.jsonText === null ? undefined : memberNumberText(request.jsonText, name);
}

/**
 * The preValidation guard of every merchant route: authentication on the raw bytes, the quota, and
 * only then JSON parsing, so that nothing unauthenticated is ever parsed.
 */
function merchantGuard({ authenticator, rateLimiter }: GuardDeps) {
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
    if (request.routeOptions.schema?.body) ({ body: request.body, text: request.jsonText } = parseJsonBody(request, raw));
  };
}

/** Registers the merchant's routes (`routes`) behind the guard, once for all of them. */
export function merchantRoutes(app: FastifyInstance, deps: GuardDeps, routes: (scoped: FastifyInstance) => void): void {
  void app.register(async (scoped) => {
    scoped.addHook('preValidation', merchantGuard(deps));
    routes(scoped);
  });
}
