// The platform's Prometheus metrics, one set per platform: created where the platform is wired and
// handed to the HTTP app (requests, order creations) and to the background jobs (chain and job
// gauges), so neither takes them from the other.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PayoutGauges } from '../payouts/payout-gauges.js';

export interface Metrics {
  registry: Registry;
  requests: Histogram<'method' | 'route' | 'status'>;
  ordersCreated: Counter<'blockchain' | 'outcome'>;
  withdrawalsRequested: Counter<'blockchain' | 'outcome'>;
  chain: { lag: Gauge<'network'>; halted: Gauge<'network'> };
  payouts: PayoutGauges;
  /** Whether this instance holds a job's lease: partner_job_lease_held, and under its old name partner_job_leader. */
  jobLease: { set(labels: { job: string }, value: number): void };
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
    withdrawalsRequested: new Counter({
      name: 'partner_api_withdrawals_requested_total',
      help: 'Withdrawals asked for over HTTP (the merchant\'s create and the sandbox\'s helper) by network and outcome (created, replayed, conflict, or the refusal: validation_failed, insufficient_balance, daily_limit_exceeded, withdrawals_disabled, network_halted)',
      labelNames: ['blockchain', 'outcome'],
      registers: [registry],
    }),
    chain: {
      lag: new Gauge({ name: 'partner_chain_cursor_lag_blocks', help: 'Confirmed blocks the scanner has not scanned yet (head − scan position; the name is kept for dashboards), by network', labelNames: ['network'], registers: [registry] }),
      halted: new Gauge({ name: 'partner_chain_halted', help: '1 while crediting on the network is halted after a reorg deeper than its confirmations', labelNames: ['network'], registers: [registry] }),
    },
    payouts: {
      hotWallet: new Gauge({ name: 'partner_payout_hot_wallet_balance', help: "The hot wallet's balance by network: asset token in the token's smallest units, asset gas in the network's own (wei on Ethereum, sun of TRX on Tron)", labelNames: ['network', 'asset'], registers: [registry] }),
      lowBalance: new Gauge({ name: 'partner_payout_hot_wallet_low_balance_threshold', help: "The hot wallet's low-balance threshold (ETHEREUM_LOW_BALANCE_USDT, _ETH, TRON_LOW_BALANCE_USDT, _TRX) in partner_payout_hot_wallet_balance's units and labels; only those configured", labelNames: ['network', 'asset'], registers: [registry] }),
      oldestInFlight: new Gauge({ name: 'partner_payout_oldest_in_flight_seconds', help: 'Seconds since the oldest payout out (stage sent) was signed, by network; 0 when none is out', labelNames: ['network'], registers: [registry] }),
      paused: new Gauge({ name: 'partner_payouts_paused', help: "1 while an operator has paused the network's payouts (partner-api payouts pause): nothing new is sent", labelNames: ['network'], registers: [registry] }),
      payouts: new Gauge({ name: 'partner_payouts', help: 'Withdrawals by where their payout stands: queued, waiting_for_funds (the hot wallet does not cover them yet), in_flight (their transaction is out)', labelNames: ['network', 'state'], registers: [registry] }),
      confirmed: new Counter({ name: 'partner_payouts_confirmed_total', help: 'Payouts the chain confirmed (DONE) since the start', labelNames: ['network'], registers: [registry] }),
      failed: new Counter({ name: 'partner_payouts_failed_total', help: 'Payouts that failed (reverted, refused by the token, not covered in time) since the start', labelNames: ['network'], registers: [registry] }),
    },
    connectionsRefused: new Counter({
      name: 'partner_http_connections_refused_total',
      help: 'Connections closed by a limit: per_address (MAX_CONNECTIONS_PER_ADDRESS) or per_network (MAX_CONNECTIONS_PER_NETWORK), as soon as accepted; at MAX_CONNECTIONS, idle_closed (the longest-idle one, for a new one) or total (the new one: none was idle)',
      labelNames: ['limit'],
      registers: [registry],
    }),
    jobLease: jobLeaseGauges(registry),
  };
}

/** Every job that runs under a lease, as the `job` label names it (jobs/jobs.ts; jobs.test.ts holds the two to each other). */
export const LEASED_JOBS = 'scan:<network>, expire-orders, prune-events, settle-sandbox-withdrawals (sandbox only), payout:<network>';

/**
 * A job's lease held, under its name and its old one: `partner_job_leader` said "leader" where every
 * other place says lease; it stays, with the same values, for the dashboards that read it.
 */
function jobLeaseGauges(registry: Registry): Metrics['jobLease'] {
  const held = new Gauge({ name: 'partner_job_lease_held', help: `1 while this instance holds the job's lease and runs it, 0 while another instance does. The jobs: ${LEASED_JOBS}`, labelNames: ['job'], registers: [registry] });
  const leader = new Gauge({ name: 'partner_job_leader', help: 'The old name of partner_job_lease_held, with the same values', labelNames: ['job'], registers: [registry] });
  return {
    set(labels, value) {
      held.set(labels, value);
      leader.set(labels, value);
    },
  };
}
