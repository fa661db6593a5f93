// What both payers share (docs/design.md#paying-out): a round fenced by its lease, each payout followed on
// its own, the withdrawal's move and its transactions' marks written together, the wait for funds. The
// network's own rules (nonces and replacements, expirations and rebuilds) are each payer's.
import type { Database, Sql } from '../db/database.js';
import { fencedTransaction, LeaseLostError, UNFENCED, type Fence } from '../db/fence.js';
import type { Logger } from '../shared/logger.js';
import { formatDecimalUnits } from '../shared/money.js';
import type { Network } from '../shared/network.js';
import { awaitFunds } from '../withdrawals/payout-queue.js';
import { moveWithdrawal, type WithdrawalMove } from '../withdrawals/settlement.js';
import type { WithdrawalRow } from '../withdrawals/withdrawal-rows.js';
import type { HotWallet } from './hot-wallet.js';
import { payoutPause } from './pause.js';
import { readPayoutCounts, type PayoutGauges } from './payout-gauges.js';
import { markBroadcast, markTransaction, sentPayouts, type PayoutTransaction, type PayoutTransactionState, type SentPayout } from './payout-store.js';

export interface PayoutJobOptions {
  db: Database;
  /** The hot wallet; without one the job only checks the operator's recorded transactions. */
  wallet: HotWallet | undefined;
  fundsWaitHours: number;
  log?: Logger | undefined;
  gauges?: PayoutGauges | undefined;
}

/** Payouts signed in one round at most: a long queue is paid over several rounds. */
export const BATCH = 20;

/** A transaction's mark, written with the move it goes with. */
export type Mark = { transaction: PayoutTransaction; state: PayoutTransactionState; blockNumber?: bigint };

export abstract class PayoutJob {
  /** The round's fence: every write proves with it that the round's lease is still held. */
  private fence: Fence = UNFENCED;
  /**
   * Whether an operator paused the network's payouts (payouts/pause.ts), read at the start of each round:
   * while true the payer sends nothing new (no first send, no replacement, no rebuild) and still follows
   * what is out.
   */
  protected paused = false;
  /**
   * The withdrawals said to wait for funds, with why: a wait is logged as it starts and when its reason
   * changes, not every round (a poll of a few seconds made it a line per payout every few seconds).
   */
  private waitsSaid = new Map<string, string>();
  private waitsThisRound = new Map<string, string>();

  constructor(
    readonly network: Network,
    private readonly job: PayoutJobOptions,
  ) {}

  /**
   * One round under `fence` (the lease's, jobs/jobs.ts; a test may drive a round unfenced): what is out,
   * then what is to pay. True when more is to pay at once (a full batch).
   */
  async round(fence: Fence = UNFENCED): Promise<boolean> {
    this.fence = fence;
    await this.readPause();
    this.waitsThisRound = new Map();
    let signed: number;
    try {
      signed = await this.pay();
      this.waitsSaid = this.waitsThisRound; // the waits that ended are forgotten
    } catch (error) {
      this.waitsSaid = new Map([...this.waitsSaid, ...this.waitsThisRound]); // a round cut short forgets nothing
      throw error;
    }
    // The counts as the round leaves them; every scrape reads them again (readPayoutGauges), on every instance.
    if (this.job.gauges) await readPayoutCounts(this.job.db, this.job.gauges, this.network);
    return signed === BATCH;
  }

  /** Reads the operator's pause for this round; says so once as it starts and once as it ends. */
  private async readPause(): Promise<void> {
    const pause = await payoutPause(this.job.db, this.network);
    const log = this.job.log;
    if (pause && !this.paused) log?.warn({ network: this.network, pausedAt: pause.pausedAt, reason: pause.reason }, `payouts on ${this.network} are paused by the operator: nothing new is sent, what is out is followed, until partner-api payouts resume --blockchain ${this.network.toLowerCase()}`);
    if (!pause && this.paused) log?.info?.({ network: this.network }, `payouts on ${this.network} are resumed`);
    this.paused = pause !== undefined;
  }

  /** The network's round: follow what is out, pay what is queued; how many it signed. */
  protected abstract pay(): Promise<number>;

  /**
   * Each payout that is out, followed on its own: one payout's trouble (a node's odd answer, a row that
   * refuses) is logged and never stops the round for the others. A lost lease ends the round.
   */
  protected async followEach<T>(follow: (payout: SentPayout) => Promise<T>): Promise<{ sent: SentPayout[]; results: Map<SentPayout, T> }> {
    const sent = await sentPayouts(this.job.db, this.network);
    const results = new Map<SentPayout, T>();
    for (const payout of sent) {
      try {
        results.set(payout, await follow(payout));
      } catch (error) {
        if (error instanceof LeaseLostError) throw error;
        this.log('warn', payout.withdrawal, { err: (error as Error).message }, 'payout could not be followed this round; tried again next round');
      }
    }
    return { sent, results };
  }

  /** The network's broadcast of signed bytes: 'sent' when the node took them now; throws when refused. */
  protected abstract send(raw: string): Promise<string>;

  /**
   * Sends a payout's signed bytes (again: after a crash, a lost answer, a node that dropped them, a reorg
   * that took them away). A node's refusal is logged and tried again next round; a write refused (the
   * lease lost) ends the round.
   */
  protected async broadcast(withdrawal: Pick<WithdrawalRow, 'uuid'>, transaction: PayoutTransaction): Promise<string | undefined> {
    let result: string;
    try {
      result = await this.send(transaction.raw!);
    } catch (error) {
      this.log('warn', withdrawal, { txId: transaction.tx_hash, err: (error as Error).message }, 'payout broadcast refused; sent again next round');
      return undefined;
    }
    if (transaction.broadcast_at !== null) return result;
    await this.write((tx) => markBroadcast(tx, transaction.id));
    if (result === 'sent') this.log('info', withdrawal, { txId: transaction.tx_hash, ...(transaction.nonce !== null ? { nonce: transaction.nonce.toString() } : {}) }, 'payout broadcast');
    return result;
  }

  /** Writes under the round's fence, in one database transaction. */
  protected write<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return fencedTransaction(this.job.db, this.fence, work);
  }

  /** Marks transactions, in one fenced transaction. */
  protected mark(...marks: Mark[]): Promise<void> {
    return this.write((tx) => markAll(tx, marks));
  }

  /**
   * Moves a withdrawal as the chain says, and marks its transactions, in one fenced transaction: a crash
   * never leaves a withdrawal out whose transactions are all marked dead. A move refused (it moved
   * meanwhile) changes nothing, marks included.
   */
  protected move(withdrawal: WithdrawalRow, move: WithdrawalMove, ...marks: Mark[]): Promise<boolean> {
    return this.write(async (tx) => {
      const moved = await moveWithdrawal(tx, withdrawal.uuid, move);
      if (!moved || 'refused' in moved) return false;
      await markAll(tx, marks);
      return true;
    });
  }

  protected log(level: 'info' | 'warn' | 'error', withdrawal: Pick<WithdrawalRow, 'uuid'>, fields: Record<string, unknown>, message: string): void {
    this.job.log?.[level]?.({ network: this.network, withdrawal: withdrawal.uuid, ...fields }, message);
  }

  protected counted(outcome: 'confirmed' | 'failed'): void {
    this.job.gauges?.[outcome].inc({ network: this.network });
  }

  /** The hot wallet cannot cover it yet: it waits (a metric, /readyz); past PAYOUT_FUNDS_WAIT_HOURS it fails. */
  protected async waitForFunds(withdrawal: WithdrawalRow, why: string): Promise<void> {
    const waited = await this.write((tx) => awaitFunds(tx, withdrawal.uuid));
    if (waited < this.job.fundsWaitHours) {
      if (this.waitsSaid.get(withdrawal.uuid) !== why) this.log('warn', withdrawal, { amount: formatDecimalUnits(withdrawal.amount_units) }, `payout waits: ${why}`);
      this.waitsThisRound.set(withdrawal.uuid, why);
      return;
    }
    // Counted only when it failed: claimed for hand payment meanwhile, it is the operator's (settlement.ts).
    if (await this.move(withdrawal, { to: 'FAILED', reason: `The platform's hot wallet did not cover it within ${this.job.fundsWaitHours} hours; nothing was paid.` })) this.counted('failed');
  }
}

/** Marks transactions in the caller's transaction. */
export async function markAll(tx: Sql, marks: Mark[]): Promise<void> {
  for (const { transaction, state, blockNumber } of marks) await markTransaction(tx, transaction.id, state, blockNumber);
}
