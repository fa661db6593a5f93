// What an operator and a load balancer need: liveness, readiness, Prometheus metrics, and the docs
// and contract served beside the API.
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { haltedNetworks } from '../chain/halt.js';
import { waitingForFunds } from '../payouts/payout-store.js';
import { contractText } from './openapi-document.js';
import type { Database } from '../db/database.js';
import type { Metrics } from './metrics.js';
import { ProblemError } from './problems.js';
import { staticAsset } from './static-asset.js';

export const DOCS_PATH = new URL('../../../dist/docs/index.html', import.meta.url);
/** The client package, packed beside the docs by `npm run docs` (scripts/pack-client.mjs). */
export const CLIENT_TARBALL_PATH = new URL('../../../dist/docs/partner-api-client.tgz', import.meta.url);

/**
 * The docs page's policy as its own meta tag states it (openapi/docs-template.hbs: Redoc inlined, nothing
 * fetched), and what only a header can say: no other site may frame it.
 */
const DOCS_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

export function operationsRoutes(app: FastifyInstance, deps: { db: Database; metrics: Metrics }) {
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.requests.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    let halted;
    let waiting;
    try {
      [halted, waiting] = await Promise.all([haltedNetworks(deps.db), waitingForFunds(deps.db)]);
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: deps.db.kind });
    }
    // A network halted after a deep reorg needs an operator: not ready, and it says which.
    if (halted.length > 0) return reply.code(503).send({ status: 'chain_halted', database: deps.db.kind, halted: halted.map((h) => ({ network: h.network, reason: h.reason })) });
    // Payouts the hot wallet cannot cover yet: still ready (deposits and reads go on), and it says so.
    return { status: 'ready', database: deps.db.kind, ...(Object.keys(waiting).length > 0 ? { payoutsWaitingForFunds: waiting } : {}) };
  });

  app.get('/metrics', async (_request, reply) => {
    return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });

  app.get('/openapi.json', staticAsset('application/json', () => Buffer.from(contractText)));
  app.get(
    '/docs',
    staticAsset('text/html; charset=utf-8', () => {
      if (!existsSync(DOCS_PATH)) throw new ProblemError(404, 'not_found', 'The docs are not built: run npm run docs.');
      return readFileSync(DOCS_PATH);
    }, DOCS_HEADERS),
  );
  // The client package beside the docs, as the page's "Download the client" link (relative) reaches it
  // from /docs: what the guide's `npm install "$PARTNER_API_URL/partner-api-client.tgz"` installs.
  app.get(
    '/partner-api-client.tgz',
    staticAsset('application/gzip', () => {
      if (!existsSync(CLIENT_TARBALL_PATH)) throw new ProblemError(404, 'not_found', 'The client package is not built: run npm run build.');
      return readFileSync(CLIENT_TARBALL_PATH);
    }, { 'Content-Disposition': 'attachment; filename="partner-api-client.tgz"' }, { compressed: true }),
  );
  // Deep links: Redoc routes in the URL's fragment (/docs#/section/errors), which a server never sees;
  // a path under /docs (/docs/section/errors, /docs/tag/Withdrawals) is sent to that route.
  app.get<{ Params: { '*': string } }>('/docs/*', async (request, reply) => {
    const route = request.params['*'].replace(/^\/+|\/+$/g, '');
    return reply.redirect(/^[A-Za-z0-9._~/-]+$/.test(route) ? `/docs#/${route}` : '/docs', 302);
  });
}
