// The operator's payout commands: `payouts pause` and `payouts resume` of a network (issue 54 item 3),
// kept in the database (payouts/pause.ts), so that every instance's payer obeys at its next round. On
// PGlite the running platform runs them (its operator socket).
import type { Platform } from '../platform.js';
import { pausePayouts, resumePayouts, type PausedNetwork } from '../payouts/pause.js';
import { networkFlag, textFlag, type Flags } from './flags.js';
import { JSON_FLAG, blockchainFlag, printedResult, type Command } from './command.js';
import { platformDateTime } from '../shared/time.js';

/** The reason kept when none is given. */
const DEFAULT_REASON = 'Paused by the operator.';
const MAX_REASON = 500;

const shown = (p: PausedNetwork) => ({ network: p.network, since: platformDateTime(p.pausedAt), reason: p.reason });

export async function payoutsPauseCommand(platform: Platform, flags: Flags): Promise<{ value: unknown; text: string }> {
  const network = networkFlag(flags, 'blockchain');
  const reason = flags.reason === undefined ? DEFAULT_REASON : textFlag(flags, 'reason', MAX_REASON);
  const { pause, wasPaused } = await pausePayouts(platform.db, network, reason);
  const value = { ...shown(pause), wasPaused };
  const text = wasPaused
    ? `${network}: payouts were already paused since ${value.since} (${pause.reason}); nothing changed`
    : `${network}: payouts paused (${pause.reason}): from the payer's next round nothing new is sent; payouts out are still followed to the end; withdrawals are still accepted and queued`;
  return { value, text };
}

export async function payoutsResumeCommand(platform: Platform, flags: Flags): Promise<{ value: unknown; text: string }> {
  const network = networkFlag(flags, 'blockchain');
  const ended = await resumePayouts(platform.db, network);
  const value = { network, wasPaused: ended !== undefined, ...(ended ? { pausedSince: platformDateTime(ended.pausedAt), reason: ended.reason } : {}) };
  const text = ended ? `${network}: payouts resumed (paused since ${value.pausedSince}: ${ended.reason}); the queue is paid from the payer's next round` : `${network}: payouts were not paused; nothing changed`;
  return { value, text };
}

export const PAYOUT_COMMANDS: Command[] = [
  {
    words: ['payouts', 'pause'],
    summary: "pauses a network's payouts on every instance: nothing new is sent, what is out is followed; withdrawals are still queued",
    flags: {
      blockchain: { ...blockchainFlag('the network whose payouts pause'), required: true },
      reason: { value: 'TEXT', description: `why, shown in /readyz and the log (default "${DEFAULT_REASON}")` },
      json: JSON_FLAG,
    },
    example: 'partner-api payouts pause --blockchain Ethereum --reason "hot wallet key rotation"',
    runByRunningPlatform: true,
    run: printedResult(payoutsPauseCommand),
  },
  {
    words: ['payouts', 'resume'],
    summary: "resumes a network's paused payouts: the queue is paid again from the payer's next round",
    flags: {
      blockchain: { ...blockchainFlag('the paused network'), required: true },
      json: JSON_FLAG,
    },
    example: 'partner-api payouts resume --blockchain Ethereum',
    runByRunningPlatform: true,
    run: printedResult(payoutsResumeCommand),
  },
];
