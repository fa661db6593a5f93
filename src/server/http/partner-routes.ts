// The deposit orders' operations (create, read; their list is reconciliation-routes.ts; withdrawals are
// withdrawal-routes.ts). Each request reads as a straight line:
// read raw body → verify signature → rate limit → parse → validate (contract) → handler → store → send.
import type { FastifyInstance } from 'fastify';
import type { CreateDepositOrderRequest } from '../../../generated/schema.js';
import { componentSchema, uuidPathParams } from './openapi-document.js';
import type { Orders } from '../orders/orders.js';
import type { PaymentLinks } from '../payment-page/links.js';
import { callbackUrlProblem, PRIVATE_DESTINATION, type CallbackPolicy } from '../callbacks/destinations.js';
import type { Metrics } from './metrics.js';
import { orderWriter, sendItem } from './json-text.js';
import { ProblemError } from './problems.js';

export interface PartnerRouteDeps {
  orders: Orders;
  callbackPolicy: CallbackPolicy;
  /** The return URL's: the payer's browser follows it, not the platform, so there is no request forgery to guard against, only live payers sent to a private or plain-http page. */
  returnUrlPolicy: CallbackPolicy;
  metrics: Metrics;
  paymentLinks: PaymentLinks;
}

/** Where a refused local receiver can be allowed (config.ts, loopbackOnlySandbox). */
const PRIVATE_WAY_OUT =
  "a sandbox that listens on loopback only accepts receivers on its own machine (127.0.0.1, localhost); otherwise its operator sets ALLOW_PRIVATE_CALLBACKS=true, for tests on one machine";

export function partnerRoutes(app: FastifyInstance, deps: PartnerRouteDeps) {
  const writeOrder = orderWriter(deps.paymentLinks);

  app.post<{ Body: CreateDepositOrderRequest }>(
    '/partner/v1/platforms/orders',
    { schema: { body: componentSchema('CreateDepositOrderRequest') } },
    async (request, reply) => {
      const checks = [['callbackUrl', deps.callbackPolicy], ['returnUrl', deps.returnUrlPolicy]] as const;
      const errors = checks.flatMap(([field, policy]) => {
        const url = request.body[field];
        const problem = url === undefined ? undefined : callbackUrlProblem(url, policy);
        // The way out, where there is one: the operator's setting for a receiver on the platform's machine.
        const detail = field === 'callbackUrl' && problem === PRIVATE_DESTINATION ? `${problem}; ${PRIVATE_WAY_OUT}` : problem;
        return detail ? [{ pointer: `/${field}`, detail }] : [];
      });
      if (errors.length > 0) throw new ProblemError(422, 'validation_failed', 'The request body does not match the contract.', { errors });
      const result = await deps.orders.create(request.merchant!.id, request.body);
      deps.metrics.ordersCreated.inc({ blockchain: request.body.blockchain, outcome: result.outcome });
      if (result.outcome === 'conflict') {
        throw new ProblemError(409, 'external_id_conflict', `An order with externalId ${request.body.externalId} exists with different fields.`);
      }
      if (result.outcome === 'too_many_open_orders') throw new ProblemError(429, 'too_many_open_orders', `The merchant has ${result.limit} open orders, the most allowed; more can be created once some are paid or expire.`);
      return reply.code(result.outcome === 'created' ? 201 : 200).send({ ...result.order, paymentUrl: deps.paymentLinks.url(result.order.uuid) });
    },
  );

  app.get<{ Params: { uuid: string } }>(
    '/partner/v2/platforms/orders/:uuid',
    { schema: { params: uuidPathParams('OrderUuid') } },
    async (request, reply) => {
      const order = await deps.orders.read(request.merchant!.id, request.params.uuid);
      if (!order) throw new ProblemError(404, 'not_found', 'No order with this uuid exists for this merchant.');
      return sendItem(reply, order, writeOrder);
    },
  );
}
