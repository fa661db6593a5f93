// The three operations of the contract. Each request reads as a straight line:
// read raw body → verify signature → rate limit → parse → validate (contract) → handler → store → send.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CreateDepositOrderRequest } from '../../../generated/schema.js';
import { componentSchema, uuidPathParams } from '../contract.js';
import type { Merchant } from '../merchants.js';
import type { Orders } from '../orders.js';
import type { PaymentLinks } from '../payment-page/links.js';
import { callbackUrlProblem, type CallbackPolicy } from '../callbacks/destinations.js';
import type { Withdrawals } from '../withdrawals.js';
import type { Metrics } from './operations-routes.js';
import type { Authenticator } from './authentication.js';
import { ProblemError } from './problems.js';
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
    // The caller's address pays for every failed attempt and for every lookup of a key not in the
    // cache, before the lookup: guessing keys is rate limited before it costs the database anything.
    let charged = false;
    const chargeCaller = () => {
      charged = true;
      const state = rateLimiter.take(`ip:${request.ip}`);
      reply.headers(rateLimiter.headers(state));
      if (!state.allowed) throw new ProblemError(429, 'rate_limited', `Too many unauthenticated requests from this address; retry in ${state.resetSeconds} s.`);
    };
    let merchant: Merchant;
    try {
      merchant = await authenticator.authenticate(request, raw, chargeCaller);
    } catch (error) {
      if (!charged) chargeCaller();
      throw error;
    }
    const state = rateLimiter.take(`merchant:${merchant.id}`);
    reply.headers(rateLimiter.headers(state));
    if (!state.allowed) throw new ProblemError(429, 'rate_limited', `The quota (${rateLimiter.policy}) is used up; retry in ${state.resetSeconds} s.`);
    request.merchant = merchant;
    // Fastify reads no body for GET, so only POST has one to parse.
    if (request.method === 'POST') request.body = parseJsonBody(request, raw);
  };
}

export interface PartnerRouteDeps extends GuardDeps {
  orders: Orders;
  withdrawals: Withdrawals;
  callbackPolicy: CallbackPolicy;
  metrics: Metrics;
  paymentLinks: PaymentLinks;
}

export function partnerRoutes(app: FastifyInstance, deps: PartnerRouteDeps) {
  const preValidation = merchantGuard(deps);

  app.post<{ Body: CreateDepositOrderRequest }>(
    '/partner/v1/platforms/orders',
    { schema: { body: componentSchema('CreateDepositOrderRequest') }, preValidation },
    async (request, reply) => {
      // The return URL is checked like the callback URL: the payer's browser follows it from the page.
      const errors = (['callbackUrl', 'returnUrl'] as const).flatMap((field) => {
        const url = request.body[field];
        const problem = url === undefined ? undefined : callbackUrlProblem(url, deps.callbackPolicy);
        return problem ? [{ pointer: `/${field}`, detail: problem }] : [];
      });
      if (errors.length > 0) throw new ProblemError(422, 'validation_failed', 'The request body does not match the contract.', { errors });
      const result = await deps.orders.create(request.merchant!.id, request.body);
      deps.metrics.ordersCreated.inc({ blockchain: request.body.blockchain, outcome: result.outcome });
      if (result.outcome === 'conflict') {
        throw new ProblemError(409, 'external_id_conflict', `An order with externalId ${request.body.externalId} exists with different fields.`);
      }
      return reply.code(result.outcome === 'created' ? 201 : 200).send({ ...result.order, paymentUrl: deps.paymentLinks.url(result.order.uuid) });
    },
  );

  app.get<{ Params: { uuid: string } }>(
    '/partner/v2/platforms/orders/:uuid',
    { schema: { params: uuidPathParams('OrderUuid') }, preValidation },
    async (request) => {
      const order = await deps.orders.read(request.merchant!.id, request.params.uuid);
      if (!order) throw new ProblemError(404, 'not_found', 'No order with this uuid exists for this merchant.');
      return { ...order, paymentUrl: deps.paymentLinks.url(order.uuid) };
    },
  );

  app.get<{ Params: { uuid: string } }>(
    '/partner/v1/platforms/withdrawals/:uuid',
    { schema: { params: uuidPathParams('WithdrawalUuid') }, preValidation },
    async (request) => {
      const withdrawal = await deps.withdrawals.read(request.merchant!.id, request.params.uuid);
      if (!withdrawal) throw new ProblemError(404, 'not_found', 'No withdrawal with this uuid exists for this merchant.');
      return withdrawal;
    },
  );
}
