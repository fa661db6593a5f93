// The merchant's routes, registered together in one Fastify plugin (as fastify's demo registers a concern
// once for the routes it covers): its preValidation hook is the guard every merchant route runs,
// authentication on the raw bytes (./authentication.ts), the failure budget per client address, the
// merchant's quota, and only then JSON. And the opening every list shares: its request (db/pages.ts
// ListRequest), its moments checked.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ListRequest } from '../db/pages.js';
import type { Merchant } from '../merchants/merchants.js';
import { firstDuplicateKey } from '../shared/json-keys.js';
import { parsePlatformDateTime, platformDateTime } from '../shared/time.js';
import { MerchantRefusal, type Authenticator } from './authentication.js';
import { invalidParameters, ProblemError } from './problems.js';
import type { RateLimiter } from './rate-limit.js';

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
  return body;
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
    if (request.routeOptions.schema?.body) request.body = parseJsonBody(request, raw);
  };
}

/** Registers the merchant's routes (`routes`) behind the guard, once for all of them. */
export function merchantRoutes(app: FastifyInstance, deps: GuardDeps, routes: (scoped: FastifyInstance) => void): void {
  void app.register(async (scoped) => {
    scoped.addHook('preValidation', merchantGuard(deps));
    routes(scoped);
  });
}

const TIME_PARAMETERS = ['createdFrom', 'createdBefore', 'updatedSince'] as const;

/**
 * The contract's pattern lets 2026-02-31 and year 0000 through: a moment must also be a real one, of
 * the years 1 to 9999. There is no year 0 (1 BC is followed by AD 1): JavaScript's calendar counts one,
 * PostgreSQL's refuses it, and a filter it refused was a 500 (issue 50).
 */
function checkMoments(query: Partial<Record<(typeof TIME_PARAMETERS)[number], string>>): void {
  const errors = TIME_PARAMETERS.flatMap((parameter) => {
    const value = query[parameter];
    return value === undefined || isRealMoment(value) ? [] : [{ pointer: '', parameter, detail: 'is not a moment of the calendar (years 0001 to 9999)' }];
  });
  if (errors.length > 0) throw invalidParameters(errors);
}

function isRealMoment(value: string): boolean {
  const moment = parsePlatformDateTime(value);
  return !Number.isNaN(moment.getTime()) && moment.getUTCFullYear() >= 1 && platformDateTime(moment) === value;
}

/**
 * A list's request, the opening every list and feed shares: the guarded merchant's, its filters (the
 * query but the page's size and cursor; their moments real ones), from its cursor, its limit (the
 * contract's default filled in by validation).
 */
export function listRequest<Query extends { limit?: number; cursor?: string }>(request: { merchant: Merchant | null; query: Query }): ListRequest<Omit<Query, 'limit' | 'cursor'>> {
  const { limit, cursor, ...filters } = request.query;
  checkMoments(filters);
  return { merchantId: request.merchant!.id, filters, cursor, limit: limit! };
}
