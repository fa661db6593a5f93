// The platform's Prometheus metrics, one set per platform: created where the platform is wired and
// handed to the HTTP app (requests, order creations) and to the background jobs (chain and job
// gauges), so neither takes them from the other.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Histogram<'method' | 'route' | 'status'>;
  ordersCreated: Counter<'blockchain' | 'outcome'>;
  chain: { lag: Gauge<'network'>; halted: Gauge<'network'> };
  jobLease: Gauge<'job'>;
  /** Connections closed as soon as accepted: over MAX_CONNECTIONS (`total`) or MAX_CONNECTIONS_PER_ADDRESS (`per_address`). */
  connectionsRefused: Counter<'limit'>;
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
    connectionsRefused: new Counter({
      name: 'partner_http_connections_refused_total',
      help: 'Connections closed as soon as accepted, by the limit they passed: total (MAX_CONNECTIONS) or per_address (MAX_CONNECTIONS_PER_ADDRESS)',
      labelNames: ['limit'],
      registers: [registry],
    }),
    jobLease: new Gauge({ name: 'partner_job_leader', help: '1 while this instance runs the job (a network scan, order expiry), 0 while another instance does', labelNames: ['job'], registers: [registry] }),
  };
}
