// What the payout jobs report (partner_payout_* metrics): made with the platform's other metrics
// (http/metrics.ts) and handed to the jobs, so neither takes them from the other. Never a key, never an
// address of a merchant's in a label.
import type { Counter, Gauge } from 'prom-client';

export interface PayoutGauges {
  /** The hot wallet's balances: `token` in smallest units, `gas` in the network's own (wei, sun). */
  hotWallet: Gauge<'network' | 'asset'>;
  /** Withdrawals by where their payout stands: `queued`, `waiting_for_funds`, `in_flight`. */
  payouts: Gauge<'network' | 'state'>;
  confirmed: Counter<'network'>;
  failed: Counter<'network'>;
}
