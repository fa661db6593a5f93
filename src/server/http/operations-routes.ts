// What an operator and a load balancer need: liveness, readiness, Prometheus metrics, and the docs
// and contract served beside the API.
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { haltedNetworks } from '../chain/halt.js';
import { waitingForFunds } from '../withdrawals/payout-queue.js';
import { pausedNetworks } from '../payouts/pause.js';
import { readPayoutGauges } from '../payouts/payout-gauges.js';
import type { Mode } from '../config.js';
import { contract, contractText } from './openapi-document.js';
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

/** The root's page: nothing but links, so nothing to allow but following them. */
const INDEX_HEADERS = { 'Content-Security-Policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'", 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer' };

/**
 * What a person who opens the platform's address finds (issue 49): where the docs, the contract, the
 * client package and the health checks are. Links are relative, so a proxy may mount the platform under a
 * prefix. The sandbox's credentials stay in the banner of the terminal that started it, never on a page.
 */
function indexPage(mode: Mode): string {
  const sandbox =
    mode === 'sandbox'
      ? '<p>Sandbox mode: deposit addresses come from a public test wallet, never for real funds. The sandbox merchant\'s credentials are in the banner of the terminal that started the platform; the test helpers (simulated deposits and withdrawals) are under <code>/sandbox/v1</code>, described in the docs.</p>'
      : '';
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="robots" content="noindex"><title>Partner API</title><link rel="icon" href="data:,"></head><body><main>' +
    `<h1>Partner API</h1><p>USDT deposit orders on Tron and Ethereum, withdrawals and signed callbacks (${mode} mode).</p>${sandbox}<ul>` +
    '<li><a href="docs">The docs</a>: the merchants\' guide and the API reference, with samples in curl, TypeScript and Python</li>' +
    '<li><a href="openapi.json">The contract</a> (OpenAPI 3.1)</li>' +
    '<li><a href="partner-api-client.tgz">The client package</a> for TypeScript and JavaScript (<code>npm install "$PARTNER_API_URL/partner-api-client.tgz"</code>)</li>' +
    '<li><a href="healthz">Health</a> and <a href="readyz">readiness</a></li>' +
    '</ul></main></body></html>'
  );
}

/** The docs' routes from the root that a link of the docs' menu names: its guide's sections and its tags (Redoc's slugs). */
const TAG_ROUTES = ((contract as unknown as { tags?: { name: string }[] }).tags ?? []).map((tag) => `/${tag.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);

/** How long a scrape waits for the gauges the database knows. */
const GAUGE_READ_MS = 2_000;

/** Waits for `work`, or `ms` at most. */
async function settledWithin(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export function operationsRoutes(app: FastifyInstance, deps: { db: Database; metrics: Metrics; mode: Mode }) {
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.requests.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/', staticAsset('text/html; charset=utf-8', () => Buffer.from(indexPage(deps.mode)), INDEX_HEADERS));
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    let halted;
    let waiting;
    let paused;
    try {
      [halted, waiting, paused] = await Promise.all([haltedNetworks(deps.db), waitingForFunds(deps.db), pausedNetworks(deps.db)]);
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: deps.db.kind });
    }
    // A network halted after a deep reorg needs an operator: not ready, and it says which.
    if (halted.length > 0) return reply.code(503).send({ status: 'chain_halted', database: deps.db.kind, halted: halted.map((h) => ({ network: h.network, reason: h.reason })) });
    // Payouts the hot wallet cannot cover yet, payouts an operator paused: still ready (deposits, reads and
    // withdrawal requests go on; a pause is the operator's choice, not a fault), and it says so.
    return {
      status: 'ready',
      database: deps.db.kind,
      ...(Object.keys(waiting).length > 0 ? { payoutsWaitingForFunds: waiting } : {}),
      ...(paused.length > 0 ? { payoutsPaused: paused.map((p) => ({ network: p.network, since: p.pausedAt.toISOString(), reason: p.reason })) } : {}),
    };
  });

  // The payouts' gauges the database knows, as they are now. A scrape waits at most GAUGE_READ_MS for them:
  // a database that does not answer (a frozen connection) leaves them as last read, and never holds the
  // scrape; one read at a time, so scrapes do not pile reads up behind it.
  let gaugeRead: Promise<void> | undefined;
  app.get('/metrics', async (_request, reply) => {
    gaugeRead ??= readPayoutGauges(deps.db, deps.metrics.payouts)
      .catch(() => {})
      .finally(() => (gaugeRead = undefined));
    await settledWithin(gaugeRead, GAUGE_READ_MS);
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
  const toDocs = (route: string) => (/^[A-Za-z0-9._~/-]+$/.test(route) ? `/docs#/${route}` : '/docs');
  app.get<{ Params: { '*': string } }>('/docs/*', async (request, reply) => reply.redirect(toDocs(request.params['*'].replace(/^\/+|\/+$/g, '')), 302));
  // The same routes from the root, as the docs' menu once wrote its links (href="/section/errors") and
  // as such links were copied: each opens its place in the docs (scripts/docs-hash-links.mjs).
  app.get<{ Params: { '*': string } }>('/section/*', async (request, reply) => reply.redirect(toDocs(`section/${request.params['*'].replace(/^\/+|\/+$/g, '')}`), 302));
  for (const route of TAG_ROUTES) app.get(route, async (_request, reply) => reply.redirect(`/docs#${route}`, 302));
}
