// Reconciliation: a merchant's orders and withdrawals a page at a time, its events as a feed (its orders'
// in v1, every resource's in v2), each event's deliveries and its redelivery. Every request is the
// merchant's own (merchantGuard); cursors are bound to the merchant and to the walk's filters
// (shared/cursors.ts).
import type { FastifyInstance } from 'fastify';
import type { operations } from '../../../generated/schema.js';
import { eventDeliveries } from '../callbacks/history.js';
import { readFeed, type FeedPosition, type FeedResources } from '../callbacks/feed.js';
import { CallbackInFlightError, NoCallbackError, redeliverEvent } from '../callbacks/redelivery.js';
import { feedPositionExpired } from '../callbacks/retention.js';
import type { Database } from '../db/database.js';
import { ROW_POSITION_LENGTHS, type RowPosition } from '../db/pages.js';
import type { Orders } from '../orders/orders.js';
import type { PaymentLinks } from '../payment-page/links.js';
import { walkScope, type CursorCodec } from '../shared/cursors.js';
import { parsePlatformDateTime, platformDateTime } from '../shared/time.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';
import { merchantGuard, type GuardDeps } from './authentication.js';
import { componentSchema, queryParams } from './openapi-document.js';
import { JSON_TEXT_ITEMS, orderWriter, sendPage } from './json-text.js';
import { invalidParameters, ProblemError } from './problems.js';
import type { RateLimiter } from './rate-limit.js';

export interface ReconciliationRouteDeps extends GuardDeps {
  db: Database;
  orders: Orders;
  withdrawals: Withdrawals;
  paymentLinks: PaymentLinks;
  cursors: CursorCodec;
  /** Redeliveries per merchant (REDELIVERY_RATE_LIMIT), apart from the requests' quota. */
  redeliveryLimiter: RateLimiter;
  /** For the problem of an expired feed cursor. */
  eventRetentionDays: number;
}

type Query<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;
type WithPage = { limit?: number; cursor?: string };

/** The filters of a list's query: everything but the page's size and place. */
function filtersOf<Q extends WithPage>(query: Q): Omit<Q, 'limit' | 'cursor'> {
  const { limit: _limit, cursor: _cursor, ...filters } = query;
  return filters;
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

/** An event the feed shows that has no deliveries: nothing was ever to be sent. */
const NO_CALLBACK = 'This event has no callback: its withdrawal was created without a callbackUrl, so it is in the events feed only.';

function isRealMoment(value: string): boolean {
  const moment = parsePlatformDateTime(value);
  return !Number.isNaN(moment.getTime()) && moment.getUTCFullYear() >= 1 && platformDateTime(moment) === value;
}

const CURSOR_REFUSED = 'was not issued to this API key for these filters, or it was changed';

export function reconciliationRoutes(app: FastifyInstance, deps: ReconciliationRouteDeps) {
  const preValidation = merchantGuard(deps);
  const { cursors } = deps;
  const writeOrder = orderWriter(deps.paymentLinks);

  /** The position a cursor holds for this merchant and walk; a 422 naming `cursor` for any other. */
  function positionOf(merchantId: string, scope: string, cursor: string | undefined, lengths: readonly number[]): string[] | undefined {
    if (cursor === undefined) return undefined;
    const position = cursors.decode(merchantId, scope, cursor, lengths);
    if (!position) throw invalidParameters([{ pointer: '', parameter: 'cursor', detail: CURSOR_REFUSED }]);
    return position;
  }

  app.get<{ Querystring: Query<'listDepositOrders'> }>(
    '/partner/v1/platforms/orders',
    { schema: { querystring: queryParams('/partner/v1/platforms/orders', 'get') }, preValidation },
    async (request, reply) => {
      const merchantId = request.merchant!.id;
      checkMoments(request.query);
      const filters = filtersOf(request.query);
      const scope = walkScope('orders', filters);
      const after = positionOf(merchantId, scope, request.query.cursor, ROW_POSITION_LENGTHS) as RowPosition | undefined;
      const page = await deps.orders.list(merchantId, filters, after, request.query.limit!);
      // Each item is the order as its read writes it, unconfirmed transfers included.
      try {
        return sendPage(reply, page.rows, writeOrder, page.next !== undefined, page.next && cursors.encode(merchantId, scope, page.next));
      } finally {
        page.release();
      }
    },
  );

  app.get<{ Querystring: Query<'listWithdrawals'> }>(
    '/partner/v1/platforms/withdrawals',
    { schema: { querystring: queryParams('/partner/v1/platforms/withdrawals', 'get') }, preValidation },
    async (request) => {
      const merchantId = request.merchant!.id;
      checkMoments(request.query);
      const filters = filtersOf(request.query);
      const scope = walkScope('withdrawals', filters);
      const after = positionOf(merchantId, scope, request.query.cursor, ROW_POSITION_LENGTHS) as RowPosition | undefined;
      const page = await deps.withdrawals.list(merchantId, filters, after, request.query.limit!);
      return {
        data: page.withdrawals,
        hasMore: page.next !== undefined,
        ...(page.next ? { nextCursor: cursors.encode(merchantId, scope, page.next) } : {}),
      };
    },
  );

  /** A page of a feed: its orders' events (v1) or every resource's (v2), each walk's cursors its own. */
  function feedRoute(path: string, scopeName: string, resources: FeedResources) {
    // The v2 query is the v1 query's superset (withdrawalUuid, every type); each route's schema holds its own.
    app.get<{ Querystring: Query<'listAllEvents'> }>(path, { schema: { querystring: queryParams(path, 'get') }, preValidation }, async (request, reply) => {
      const merchantId = request.merchant!.id;
      const filters = filtersOf(request.query);
      const scope = walkScope(scopeName, filters);
      const after = positionOf(merchantId, scope, request.query.cursor, [3]) as FeedPosition | undefined;
      if (after && (await feedPositionExpired(deps.db, after))) {
        throw new ProblemError(410, 'cursor_expired', `The events after this cursor are no longer kept (${deps.eventRetentionDays} days); list your orders to reconcile, then read the feed without a cursor.`);
      }
      const page = await readFeed(deps.db, merchantId, resources, filters, after, request.query.limit!);
      try {
        return sendPage(reply, page.events, JSON_TEXT_ITEMS, page.more, cursors.encode(merchantId, scope, page.next));
      } finally {
        page.release();
      }
    });
  }
  feedRoute('/partner/v1/platforms/events', 'events', 'orders');
  feedRoute('/partner/v2/platforms/events', 'all-events', 'all');

  const eventIdParams = { type: 'object', required: ['eventId'], properties: { eventId: componentSchema('EventId') } };

  app.get<{ Params: { eventId: string } }>(
    '/partner/v1/platforms/events/:eventId/deliveries',
    { schema: { params: eventIdParams }, preValidation },
    async (request) => {
      const deliveries = await eventDeliveries(deps.db, request.merchant!.id, request.params.eventId);
      if (!deliveries) throw new ProblemError(404, 'not_found', 'No event with this id exists for this merchant.');
      if (deliveries === 'no callback') throw new ProblemError(404, 'not_found', NO_CALLBACK);
      return deliveries;
    },
  );

  app.post<{ Params: { eventId: string } }>(
    '/partner/v1/platforms/events/:eventId/redeliver',
    { schema: { params: eventIdParams }, preValidation },
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
