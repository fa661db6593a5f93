// The HTTP application: every concern registered here, in the order a request meets them.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { callbackPolicy } from '../callbacks/destinations.js';
import type { Config } from '../config.js';
import { createContractAjv } from './contract-ajv.js';
import type { Database } from '../db/database.js';
import type { Merchants } from '../merchants/merchants.js';
import type { Orders } from '../orders/orders.js';
import { listenUrl, PaymentLinks, withoutToken } from '../payment-page/links.js';
import { pageOrderReader } from '../payment-page/order.js';
import { pageContext } from '../payment-page/render.js';
import type { Clock } from '../shared/time.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';
import { createAuthenticator, merchantRoutes } from './authentication.js';
import { closeAfterUnreadBodies, effectiveTotal, limitConnections, openFileLimit } from './connection-limits.js';
import type { Metrics } from './metrics.js';
import { operationsRoutes } from './operations-routes.js';
import { partnerRoutes } from './partner-routes.js';
import { paymentPageRoutes } from './payment-page-routes.js';
import { clientErrorHandler, errorHandler, frameworkErrorHandler, ProblemError, sendProblem } from './problems.js';
import { createRateLimiter } from './rate-limit.js';
import { reconciliationRoutes } from './reconciliation-routes.js';
import { sandboxRoutes } from './sandbox-routes.js';
import { withdrawalRoutes } from './withdrawal-routes.js';
import { CursorCodec } from '../shared/cursors.js';

export const BODY_LIMIT = 16 * 1024;

export interface AppDeps {
  config: Pick<
    Config,
    'mode' | 'timestampToleranceSeconds' | 'rateLimit' | 'trustedProxies' | 'logLevel' | 'callbacks' | 'watchWindowSeconds' | 'requestTimeoutSeconds' | 'networks' | 'publicUrl' | 'paymentPageRateLimit' | 'explorerTxUrls' | 'eventRetentionDays' | 'redeliveryRateLimit' | 'connections'
  >;
  db: Database;
  merchants: Merchants;
  orders: Orders;
  withdrawals: Withdrawals;
  /** The key of the payment pages' links (SecretKeeper.paymentPageKey). */
  paymentPageKey: Buffer;
  /** The key of the lists' and the feed's cursors (SecretKeeper.cursorKey). */
  cursorKey: Buffer;
  now: Clock;
  metrics: Metrics;
  /** false for benchmarks; otherwise JSON logs at config.logLevel, on stdout or into `stream` (tests read them). */
  logger?: boolean | { stream: { write(line: string): void } };
}

export interface App {
  fastify: FastifyInstance;
}

/** Every route's URL pattern as a regular expression, with its methods (HEAD with GET, as Fastify serves it). */
type RouteTable = Map<string, { pattern: RegExp; methods: Set<string> }>;

function routeTable(fastify: FastifyInstance): RouteTable {
  const table: RouteTable = new Map();
  fastify.addHook('onRoute', (route) => {
    const entry = table.get(route.url) ?? { pattern: urlPattern(route.url), methods: new Set<string>() };
    for (const method of [route.method].flat()) entry.methods.add(method);
    table.set(route.url, entry);
  });
  return table;
}

/** `/partner/v2/platforms/orders/:uuid` → one path segment for the parameter; `*` → the rest. */
function urlPattern(url: string): RegExp {
  const escaped = url.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/:[A-Za-z0-9_]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
}

/**
 * What a request no route took gets: 405 with `Allow` when its path exists with other methods (RFC 9110),
 * else 404.
 */
function unrouted(routes: RouteTable, method: string, url: string): ProblemError {
  const path = url.split('?')[0]!;
  const allowed = new Set([...routes.values()].filter((route) => route.pattern.test(path)).flatMap((route) => [...route.methods]));
  if (allowed.size === 0) return new ProblemError(404, 'not_found', 'No such resource.');
  const allow = [...allowed].sort().join(', ');
  return new ProblemError(405, 'method_not_allowed', `${method} is not a method of ${path}; it has ${allow}.`, {}, { Allow: allow });
}

export function buildApp(deps: AppDeps): App {
  const fastify = Fastify({
    bodyLimit: BODY_LIMIT,
    // Long path ids reach validation (a 422 problem) instead of the router's bare 414.
    routerOptions: { maxParamLength: 2048 },
    // A request must arrive in full within the timeout (a body that never completes holds a socket and
    // a buffer otherwise); Node checks every second so that the bound is kept to about a second.
    requestTimeout: deps.config.requestTimeoutSeconds * 1000,
    http: { headersTimeout: deps.config.requestTimeoutSeconds * 1000, connectionsCheckingInterval: 1000 },
    clientErrorHandler: clientErrorHandler(deps.config.requestTimeoutSeconds),
    frameworkErrors: frameworkErrorHandler,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // request.ip (the rate limits, the logs) is the TCP peer, or the client X-Forwarded-For names when
    // the peer is one of the operator's proxies: the nearest address there that is not a trusted proxy.
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    logger:
      deps.logger === false
        ? false
        : {
            level: deps.config.logLevel,
            ...(typeof deps.logger === 'object' ? { stream: deps.logger.stream } : {}),
            // Requests are logged without headers or bodies: no keys, signatures or secrets in logs.
            serializers: {
              req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: withoutToken(req.url), ip: req.ip }),
            },
          },
  });
  // Connections per address and in total, and no body read on past what is used (./connection-limits.ts).
  const total = effectiveTotal(deps.config.connections.total);
  if (total < deps.config.connections.total) fastify.log.warn({ maxConnections: total }, `MAX_CONNECTIONS ${deps.config.connections.total} lowered to ${total}: the process may open ${openFileLimit()} files (ulimit -n)`);
  limitConnections(fastify.server, { ...deps.config.connections, total }, deps.config.trustedProxies, deps.metrics.connectionsRefused);
  closeAfterUnreadBodies(fastify);
  const ajv = createContractAjv();
  const queryAjv = createContractAjv({ forQuery: true });
  fastify.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'querystring' ? queryAjv : ajv).compile(schema));
  const routes = routeTable(fastify);
  fastify.setErrorHandler(function (error: FastifyError, request, reply) {
    // Fastify wants a Content-Type of a QUERY (or other body method) before it runs the not-found handler;
    // no route takes such a method, so the answer is the path's 405 or 404, not a body error.
    if (error.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE') return sendProblem(reply, unrouted(routes, request.method, request.url));
    return errorHandler.call(this, error, request, reply);
  });
  fastify.setNotFoundHandler((request, reply) => sendProblem(reply, unrouted(routes, request.method, request.url)));

  // Bodies are kept as raw bytes: the signature is over them, and JSON is parsed only after it checks.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));
  fastify.decorateRequest('merchant', null);
  fastify.decorateRequest('jsonText', null);

  const { metrics } = deps;
  operationsRoutes(fastify, { db: deps.db, metrics, mode: deps.config.mode });
  const guard = {
    authenticator: createAuthenticator(deps.merchants, deps.config.timestampToleranceSeconds, deps.now),
    rateLimiter: createRateLimiter(deps.config.rateLimit.limit, deps.config.rateLimit.windowSeconds, deps.now),
  };
  // The listen address, read once the server listens (a getsockname system call a read, 100 a list page of 100).
  let listening: string | undefined;
  const listenBase = () => (listening ??= fastify.server.listening ? listenUrl(fastify.server.address()) : undefined) ?? listenUrl(null);
  const paymentLinks = new PaymentLinks(deps.paymentPageKey, () => deps.config.publicUrl ?? listenBase());
  const callbacks = callbackPolicy(deps.config.mode, deps.config.callbacks.allowPrivate, deps.config.callbacks.allowLoopback);
  const cursors = new CursorCodec(deps.cursorKey);
  // The merchant's routes, behind one guard (./authentication.ts).
  merchantRoutes(fastify, guard, (merchant) => {
    partnerRoutes(merchant, {
      paymentLinks,
      orders: deps.orders,
      callbackPolicy: callbacks,
      // A shop's page may be on the merchant's own machine in the sandbox; live payers get https and public hosts only.
      returnUrlPolicy: { requireHttps: deps.config.mode === 'live', allowPrivate: deps.config.mode === 'sandbox', publicNamesOnly: deps.config.mode === 'live' },
      metrics,
    });
    withdrawalRoutes(merchant, { db: deps.db, withdrawals: deps.withdrawals, callbackPolicy: callbacks, metrics });
    reconciliationRoutes(merchant, {
      db: deps.db,
      withdrawals: deps.withdrawals,
      paymentLinks,
      cursors,
      redeliveryLimiter: createRateLimiter(deps.config.redeliveryRateLimit.limit, deps.config.redeliveryRateLimit.windowSeconds, deps.now),
      eventRetentionDays: deps.config.eventRetentionDays,
    });
    if (deps.config.mode === 'sandbox') {
      sandboxRoutes(merchant, { paymentLinks, db: deps.db, withdrawals: deps.withdrawals, callbackPolicy: callbacks, metrics, now: deps.now, watchWindowSeconds: deps.config.watchWindowSeconds });
    }
  });
  paymentPageRoutes(fastify, {
    links: paymentLinks,
    readOrder: pageOrderReader(deps.db),
    context: pageContext(deps.config),
    rateLimiter: createRateLimiter(deps.config.paymentPageRateLimit.limit, deps.config.paymentPageRateLimit.windowSeconds, deps.now),
    now: deps.now,
  });
  return { fastify };
}
