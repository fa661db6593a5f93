// Reconciliation: a merchant's orders and withdrawals a page at a time, its events as a feed (its orders'
// in v1, every resource's in v2), each event's deliveries and its redelivery. Registered among the
// merchant's routes (./authentication.ts merchantRoutes: the guard); each list opens with listRequest, is
// one call of its folder, which opens the cursor, reads the page and seals the next cursor (db/pages.ts),
// and one send, which releases the page's rows.
import type { FastifyInstance } from 'fastify';
import type { operations } from '../../../generated/schema.js';
import { eventDeliveries } from '../callbacks/history.js';
import { feedPage, type FeedResources } from '../callbacks/feed.js';
import { CallbackInFlightError, NoCallbackError, redeliverEvent } from '../callbacks/redelivery.js';
import type { Database } from '../db/database.js';
import type { ListRequest } from '../db/pages.js';
import type { Merchant } from '../merchants/merchants.js';
import { orderListPage } from '../orders/order-list.js';
import type { PaymentLinks } from '../payment-page/links.js';
import type { CursorCodec } from '../shared/cursors.js';
import { parsePlatformDateTime, platformDateTime } from '../shared/time.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';
import { componentSchema, queryParams } from './openapi-document.js';
import { JSON_TEXT_ITEMS, orderWriter, pageObject, sendPage } from './json-text.js';
import { invalidParameters, ProblemError } from './problems.js';
import type { RateLimiter } from './rate-limit.js';

export interface ReconciliationRouteDeps {
  db: Database;
  withdrawals: Withdrawals;
  paymentLinks: PaymentLinks;
  cursors: CursorCodec;
  /** Redeliveries per merchant (REDELIVERY_RATE_LIMIT), apart from the requests' quota. */
  redeliveryLimiter: RateLimiter;
  /** For the problem of an expired feed cursor. */
  eventRetentionDays: number;
}

type Query<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;

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
function listRequest<Query extends { limit?: number; cursor?: string }>(request: { merchant: Merchant | null; query: Query }): ListRequest<Omit<Query, 'limit' | 'cursor'>> {
  const { limit, cursor, ...filters } = request.query;
  checkMoments(filters);
  return { merchantId: request.merchant!.id, filters, cursor, limit: limit! };
}

/** An event the feed shows that has no deliveries: nothing was ever to be sent. */
const NO_CALLBACK = 'This event has no callback: its withdrawal was created without a callbackUrl, so it is in the events feed only.';

/** The merchant's reconciliation routes, among the merchant's routes (authentication.ts merchantRoutes). */
export function reconciliationRoutes(app: FastifyInstance, deps: ReconciliationRouteDeps) {
  const { db, cursors } = deps;
  const writeOrder = orderWriter(deps.paymentLinks);

  // Each item is the order as its read writes it, unconfirmed transfers included.
  app.get<{ Querystring: Query<'listDepositOrders'> }>(
    '/partner/v1/platforms/orders',
    { schema: { querystring: queryParams('/partner/v1/platforms/orders', 'get') } },
    async (request, reply) => sendPage(reply, await orderListPage(db, cursors, listRequest(request)), writeOrder),
  );

  app.get<{ Querystring: Query<'listWithdrawals'> }>(
    '/partner/v1/platforms/withdrawals',
    { schema: { querystring: queryParams('/partner/v1/platforms/withdrawals', 'get') } },
    async (request) => pageObject(await deps.withdrawals.list(cursors, listRequest(request))),
  );

  /** A page of a feed: its orders' events (v1) or every resource's (v2), each walk's cursors its own. */
  function feedRoute(path: string, resources: FeedResources) {
    // The v2 query is the v1 query's superset (withdrawalUuid, every type); each route's schema holds its own.
    app.get<{ Querystring: Query<'listAllEvents'> }>(path, { schema: { querystring: queryParams(path, 'get') } }, async (request, reply) =>
      sendPage(reply, await feedPage(db, cursors, resources, listRequest(request), deps.eventRetentionDays), JSON_TEXT_ITEMS),
    );
  }
  feedRoute('/partner/v1/platforms/events', 'orders');
  feedRoute('/partner/v2/platforms/events', 'all');

  const eventIdParams = { type: 'object', required: ['eventId'], properties: { eventId: componentSchema('EventId') } };

  app.get<{ Params: { eventId: string } }>(
    '/partner/v1/platforms/events/:eventId/deliveries',
    { schema: { params: eventIdParams } },
    async (request) => {
      const deliveries = await eventDeliveries(deps.db, request.merchant!.id, request.params.eventId);
      if (!deliveries) throw new ProblemError(404, 'not_found', 'No event with this id exists for this merchant.');
      if (deliveries === 'no callback') throw new ProblemError(404, 'not_found', NO_CALLBACK);
      return deliveries;
    },
  );

  app.post<{ Params: { eventId: string } }>(
    '/partner/v1/platforms/events/:eventId/redeliver',
    { schema: { params: eventIdParams } },
    async (request, reply) => {
      const merchantId = request.merchant!.id;
      const quota = deps.redeliveryLimiter.take(merchantId);
      if (!quota.allowed) {
        reply.header('Retry-After', String(quota.resetSeconds));
        throw new ProblemError(429, 'rate_limited', `Redeliveries are limited to ${deps.redeliveryLimiter.policy} per merchant; retry in ${quota.resetSeconds} s.`);
      }
      try {
        const deliveries = await redeliverEvent(deps.db, merchantId, request.params.eventId);
        if (!deliveries) throw new ProblemError(404, 'not_found', 'No event with this id exists for this merchant.');
        return reply.code(202).send(deliveries);
      } catch (error) {
        if (error instanceof CallbackInFlightError) throw new ProblemError(409, 'delivery_in_flight', 'This event\'s callback is being delivered right now; ask again once the attempt ends.');
        if (error instanceof NoCallbackError) throw new ProblemError(404, 'not_found', NO_CALLBACK);
        throw error;
      }
    },
  );
}
