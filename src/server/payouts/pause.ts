// An operator's pause of a network's payouts (issue 54 item 3): `partner-api payouts pause`, kept in the
// database (a payout_pauses row), so the payer of every instance reads it at its next round. While paused
// the payer sends nothing new (no first send, no replacement, no rebuild) and keeps following what is out:
// stopping that would leave money in flight unwatched. Shaped as the network halt (../chain/halt.ts), but
// an operator's choice, not a fault: readiness stays ready.
import type { Sql } from '../db/database.js';
import type { Network } from '../shared/network.js';

export interface PausedNetwork {
  network: Network;
  pausedAt: Date;
  reason: string;
  /** How long it has been paused, by the database's clock (the same on every instance). */
  seconds: number;
}

const COLUMNS = 'network, paused_at, reason, extract(epoch FROM now() - paused_at)::float8 AS seconds';
type Row = { network: Network; paused_at: Date; reason: string; seconds: number };
const paused = (r: Row): PausedNetwork => ({ network: r.network, pausedAt: r.paused_at, reason: r.reason, seconds: r.seconds });

/** Pauses a network's payouts; one already paused keeps its time and reason. The pause in force. */
export async function pausePayouts(sql: Sql, network: Network, reason: string): Promise<{ pause: PausedNetwork; wasPaused: boolean }> {
  const inserted = await sql.query('INSERT INTO payout_pauses (network, reason) VALUES ($1, $2) ON CONFLICT (network) DO NOTHING RETURNING 1', [network, reason]);
  return { pause: (await payoutPause(sql, network))!, wasPaused: inserted.length === 0 };
}

/** Resumes a network's payouts; the pause it ended, if there was one. */
export async function resumePayouts(sql: Sql, network: Network): Promise<PausedNetwork | undefined> {
  const [row] = await sql.query<Row>(`DELETE FROM payout_pauses WHERE network = $1 RETURNING ${COLUMNS}`, [network]);
  return row && paused(row);
}

export async function payoutPause(sql: Sql, network: Network): Promise<PausedNetwork | undefined> {
  const [row] = await sql.query<Row>(`SELECT ${COLUMNS} FROM payout_pauses WHERE network = $1`, [network]);
  return row && paused(row);
}

export async function pausedNetworks(sql: Sql): Promise<PausedNetwork[]> {
  return (await sql.query<Row>(`SELECT ${COLUMNS} FROM payout_pauses ORDER BY network`)).map(paused);
}
