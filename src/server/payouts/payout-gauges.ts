// What the payout jobs report (partner_payout_* metrics): made with the platform's other metrics
// (http/metrics.ts) and handed to the jobs, so neither takes them from the other. Never a key, never an
// address of a merchant's in a label.
import type { Counter, Gauge } from 'prom-client';
import type { Sql } from '../db/database.js';
import { NETWORKS, type Network } from '../shared/network.js';
import { payoutCounts, sentWithdrawals } from '../withdrawals/payout-queue.js';
import { pausedNetworks } from './pause.js';

export interface PayoutGauges {
  /** The hot wallet's balances: `token` in smallest units, `gas` in the network's own (wei, sun). */
  hotWallet: Gauge<'network' | 'asset'>;
  /** The low-balance thresholds (ETHEREUM_LOW_BALANCE_USDT, …), in hotWallet's units and labels: set where configured. */
  lowBalance: Gauge<'network' | 'asset'>;
  /** Withdrawals by where their payout stands: `queued`, `waiting_for_funds`, `in_flight`. */
  payouts: Gauge<'network' | 'state'>;
  /** How long the oldest payout out has been out (0: none out). */
  oldestInFlight: Gauge<'network'>;
  /** 1 while an operator has paused the network's payouts. */
  paused: Gauge<'network'>;
  confirmed: Counter<'network'>;
  failed: Counter<'network'>;
}

/**
 * The gauges the database knows, read at each scrape (http/operations-routes.ts) so that every instance
 * shows the same, current values, whichever holds the payout lease and whether its payer runs at all (an
 * age set by a payer that stopped would stop growing, and its alert never fire).
 */
export async function readPayoutGauges(sql: Sql, gauges: PayoutGauges): Promise<void> {
  const paused = await pausedNetworks(sql);
  for (const network of NETWORKS) {
    await readPayoutCounts(sql, gauges, network);
    gauges.oldestInFlight.set({ network }, await oldestInFlight(sql, network));
    gauges.paused.set({ network }, paused.some((p) => p.network === network) ? 1 : 0);
  }
}

/** The network's withdrawals by where their payout stands (partner_payouts). */
export async function readPayoutCounts(sql: Sql, gauges: PayoutGauges, network: Network): Promise<void> {
  for (const [state, count] of Object.entries(await payoutCounts(sql, network))) gauges.payouts.set({ network, state }, count);
}

/** The seconds since the oldest payout out was first signed (its earliest transaction that may still be mined); 0 when none is out. */
async function oldestInFlight(sql: Sql, network: Network): Promise<number> {
  const out = (await sentWithdrawals(sql, network)).map((w) => w.uuid);
  if (out.length === 0) return 0;
  const [row] = await sql.query<{ seconds: number | null }>(
    "SELECT extract(epoch FROM now() - min(created_at))::float8 AS seconds FROM payout_transactions WHERE withdrawal_uuid = ANY($1::uuid[]) AND state IN ('pending', 'mined')",
    [out],
  );
  return row?.seconds ?? 0;
}
