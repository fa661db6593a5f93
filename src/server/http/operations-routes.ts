// What an operator and a load balancer need: liveness, readiness, Prometheus metrics, and the docs
// and contract served beside the API.
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { haltedNetworks } from '../chain/halt.js';
import { contractText } from './openapi-document.js';
import type { Database } from '../db/database.js';
import { ProblemError } from './problems.js';
import { staticAsset } from './static-asset.js';

export const DOCS_PATH = new URL('../../../dist/docs/index.html', import.meta.url);

export interface Metrics {
  registry: Registry;
  requests: Histogram<'method' | 'route' | 'status'>;
  ordersCreated: Counter<'blockchain' | 'outcome'>;
  chain: { lag: Gauge<'network'>; halted: Gauge<'network'> };
  jobLeader: Gauge<'job'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Histogram({
      name: 'partner_api_http_request_duration_seconds',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    ordersCreated: new Counter({
      name: 'partner_api_orders_created_total',
      help: 'Order creations by network and outcome (created, replayed, conflict)',
      labelNames: ['blockchain', 'outcome'],
      registers: [registry],
    }),
    chain: {
      lag: new Gauge({ name: 'partner_chain_cursor_lag_blocks', help: 'Confirmed blocks the scanner has not scanned yet (head − cursor), by network', labelNames: ['network'], registers: [registry] }),
      halted: new Gauge({ name: 'partner_chain_halted', help: '1 while crediting on the network is halted after a reorg deeper than its confirmations', labelNames: ['network'], registers: [registry] }),
    },
    jobLeader: new Gauge({ name: 'partner_job_leader', help: '1 while this instance runs the job (a network scan, order expiry), 0 while another instance does', labelNames: ['job'], registers: [registry] }),
  };
}

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
    try {
      halted = await haltedNetworks(deps.db);
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: deps.db.kind });
    }
    // A network halted after a deep reorg needs an operator: not ready, and it says which.
    if (halted.length > 0) return reply.code(503).send({ status: 'chain_halted', database: deps.db.kind, halted: halted.map((h) => ({ network: h.network, reason: h.reason })) });
    return { status: 'ready', database: deps.db.kind };
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
    }),
  );
  // Deep links: Redoc routes in the URL's fragment (/docs#/section/errors), which a server never sees;
  // a path under /docs (/docs/section/errors, /docs/tag/Withdrawals) is sent to that route.
  app.get<{ Params: { '*': string } }>('/docs/*', async (request, reply) => {
    const route = request.params['*'].replace(/^\/+|\/+$/g, '');
    return reply.redirect(/^[A-Za-z0-9._~/-]+$/.test(route) ? `/docs#/${route}` : '/docs', 302);
  });
}
