// The Tron payout job's round (docs/design.md#paying-out): first what is out, then what is to pay.
//
// Never twice: a payout's TRC-20 transfer is built and signed offline, its txID (sha256 of its raw data)
// fixed before signing, and written with its broadcast body (its intent) in the transaction that moves
// the withdrawal to `sent`; only then is it broadcast. Tron has no nonces: a transaction can be included
// until its expiration and never after. So the same bytes are sent again while it may still be included
// (DUP_TRANSACTION_ERROR is success), and a new transaction (new reference block, new expiration, new
// txID) is built only once the old one can never be included anywhere: the solidified block's time is
// past the expiration of each of the payout's own transactions, and no block holds any of them. The
// absence is evidence only when it is everywhere and lasts: a node behind a load balancer answers each
// request from one backend, and a backend behind the others answers `{}` for a transaction it has not
// reached. So none of the four reads that know a transaction in a block (gettransactionbyid and
// gettransactioninfobyid, of /wallet and of /walletsolidity) may know any of them (the dropped ones
// too), in one round and again in a round at least UNKNOWN_AGAIN_AFTER_BLOCKS solidified blocks later (five
// minutes: the margin past the expiration); the first sighting is kept in memory, so a payer that restarts
// or takes over waits for two sightings of its own. Nothing a backend behind answers may shorten that wait:
// the blocks are counted on the highest solidified block this payer has seen (a lower one is a backend
// behind, never taken), and the five minutes must also have passed on this process's own clock (a first
// sighting on a backend's low height, the next on another's up-to-date one, would count its lag as blocks).
// A hot wallet short of what a transfer burns waits for funds, as one short of USDT does: before a payout
// is signed (or rebuilt) its TRX must cover the fee limit (the energy); a transaction the node refuses for
// the wallet's bandwidth (BANDWITH_ERROR: no bandwidth of its own and too little TRX to burn for it) is not
// sent again (the refusal logged once), and once it can never be included its payout goes back to the queue
// and waits there. Two payers never act on one payout at once: every
// write of a round proves the job's lease (payout-job.ts), and a round that outlived it writes nothing.
// The chain alone makes a withdrawal DONE: a solidified transaction whose receipt says SUCCESS and whose
// logs hold the token's Transfer from the hot wallet to the destination for the exact amount.
import { formatDecimalUnits } from '../shared/money.js';
import type { WithdrawalRow } from '../withdrawals/withdrawal-rows.js';
import { PayoutRequestError } from './errors.js';
import type { HotWallet } from './hot-wallet.js';
import { recordIntent, type PayoutTransaction, type SentPayout } from './payout-store.js';
import { queuedWithdrawals } from '../withdrawals/payout-queue.js';
import { BATCH, markAll, PayoutJob, type Mark, type PayoutJobOptions } from './payout-job.js';
import { decodeTokenTransfer, provesTransfer, type ChainLog } from './transfer-proof.js';
import { MAX_EXPIRATION_MS, signTrc20Transfer, type TronReferenceBlock } from './tron.js';
import { TronNodeError, type TronNode, type TronTransactionInfo } from './tron-node.js';

export interface TronPayerOptions extends PayoutJobOptions {
  node: TronNode;
  /** The TRC-20 contract, base58check (T…). */
  token: string;
  /** The most TRX (sun) a payout may burn for its energy: its fee_limit, and what the hot wallet must hold for it. */
  feeLimitSun: number;
  /** How long after its reference block a payout's transaction may be included (at most 24 hours). */
  expirationSeconds: number;
  /** Milliseconds on a clock that never goes back (default performance.now): the wait between two sightings. */
  clock?: () => number;
}

/** How often an idle round reads the hot wallet's balances (for its gauges). */
const IDLE_BALANCE_READ_MS = 60_000;

/**
 * How many solidified blocks (3 s each: five minutes) apart two rounds must both find an expired payout
 * unknown to every read of the node before it is rebuilt: the margin past its expiration, time for a backend
 * minutes behind the others to catch up. A rebuild later than needed costs minutes; a wrong one pays twice.
 */
export const UNKNOWN_AGAIN_AFTER_BLOCKS = 100;
/** The same wait on this process's clock: 100 blocks of 3 s, which no backend's answer can shorten. */
export const UNKNOWN_AGAIN_AFTER_MS = UNKNOWN_AGAIN_AFTER_BLOCKS * 3_000;

export class TronPayer extends PayoutJob {
  /** The last raw_data.timestamp this payer wrote: each of its transactions has its own. */
  private lastTimestamp = 0;
  /** When the wallet's balances were last read (performance.now()): idle rounds read them once a minute. */
  private balancesReadAt = -Infinity;
  /** Expired payouts found unknown everywhere: their latest txID → the solidified block's number and the clock at the first sighting. */
  private readonly unknownSince = new Map<string, { block: number; at: number }>();
  /** The highest solidified block seen: solidified blocks are final, so a lower one comes from a backend behind. */
  private solid: TronReferenceBlock | undefined;
  /** Transactions the node refused for the hot wallet's bandwidth or TRX (BANDWITH_ERROR): not sent again. */
  private readonly refusedForResources = new Set<string>();

  constructor(private readonly options: TronPayerOptions) {
    super('Tron', options);
  }

  protected async pay(): Promise<number> {
    const { node } = this.options;
    const head = await node.headBlock();
    const solid = this.highestSolid(await node.solidBlock());
    const { sent, results } = await this.followEach((payout) => this.follow(payout, head, solid));
    this.forgetSightings(sent);
    // The payouts whose transfer may still take the hot wallet's tokens (one that could not be followed counts as out).
    const out = sent.filter((payout) => results.get(payout) !== false);
    return this.options.wallet ? this.payQueued(this.options.wallet, head, out, sent.length > 0) : 0;
  }

  /** The solidified block to judge by: the one read, unless a higher one was seen before. */
  private highestSolid(read: TronReferenceBlock): TronReferenceBlock {
    if (!this.solid || read.number > this.solid.number) this.solid = read;
    return this.solid;
  }

  /** Forgets the sightings and refusals of transactions no longer out (settled, rebuilt, or moved by another instance). */
  private forgetSightings(sent: SentPayout[]): void {
    const out = new Set(sent.flatMap((payout) => payout.transactions.filter((t) => t.state === 'pending').map((t) => t.tx_hash)));
    for (const txId of this.unknownSince.keys()) if (!out.has(txId)) this.unknownSince.delete(txId);
    for (const txId of this.refusedForResources) if (!out.has(txId)) this.refusedForResources.delete(txId);
  }

  /**
   * A payout that is out: DONE or FAILED once a transaction of it is solidified; else its transaction sent
   * again, or, once it can never be included, a new one. True while the hot wallet's transfer is still out.
   * Each step moves the withdrawal and marks its transactions in one database transaction.
   */
  private async follow({ withdrawal, transactions }: SentPayout, head: TronReferenceBlock, solid: TronReferenceBlock): Promise<boolean> {
    const { node } = this.options;
    const live = transactions.filter((t) => t.state !== 'dropped' && t.state !== 'failed');
    for (const transaction of live) {
      const info = await node.solidifiedInfo(transaction.tx_hash);
      if (!info) continue;
      await this.settle(withdrawal, transaction, info);
      return false;
    }
    const own = live.filter((t) => t.payer === 'hot_wallet');
    if (own.length === 0) return false; // the operator's transaction: not solidified yet
    const latest = own.at(-1)!;
    const expiration = latest.expires_at!.getTime();
    const lastExpiration = Math.max(...own.map((t) => t.expires_at!.getTime()));
    // Paused: no rebuild (the expired transaction stays out, followed, until the operator resumes).
    if (!this.paused && solid.timestamp > lastExpiration && (await this.neverIncluded(withdrawal, transactions, latest, solid))) {
      // Expired before the solidified block and in no block, seen twice: no node can include it any more.
      this.log('warn', withdrawal, { txId: latest.tx_hash, expiredAt: latest.expires_at!.toISOString() }, 'payout expired and no block holds it: it can never be included');
      const dropped = own.map((transaction) => ({ transaction, state: 'dropped' as const }));
      const { wallet } = this.options;
      // Without the TRX its rebuild would burn, it waits in the queue for funds (payQueued, this round).
      const short = wallet && this.trxShortfall(await node.trxBalance(wallet.address));
      if (!wallet || short) {
        await this.move(withdrawal, { to: 'requeued', reason: short ? `its transaction expired without being included, and ${short}` : 'its transaction expired without being included' }, ...dropped);
        return false;
      }
      const rebuilt = await this.signAndRecord(wallet, withdrawal, head, 'resent', dropped);
      if (!rebuilt) return false;
      await this.broadcast(withdrawal, rebuilt);
      return true;
    }
    // Past its expiration for new blocks: nothing to send; it waits for the solidified block to pass it. One
    // refused for the wallet's resources is not sent again: it expires, and its payout waits for funds.
    if (head.timestamp <= expiration && !this.refusedForResources.has(latest.tx_hash)) await this.broadcast(withdrawal, latest);
    return true;
  }

  /**
   * Whether no block can ever hold a transaction of this payout, each of its own expired before the
   * solidified block (the caller's check): none of the node's four transaction reads knows any of them
   * (the dropped ones too), and a round at least UNKNOWN_AGAIN_AFTER_BLOCKS solidified blocks earlier (by the
   * highest seen) and UNKNOWN_AGAIN_AFTER_MS earlier (by this process's clock), past the expirations already,
   * saw the same of its latest (`latest`). One `{}` may come from a backend behind the others; the same
   * silence everywhere, minutes apart, is what a rebuild rests on. The first sighting is kept in this
   * payer's memory: a payer that restarts or takes over sees twice again, later, never sooner.
   */
  private async neverIncluded(withdrawal: WithdrawalRow, transactions: PayoutTransaction[], latest: PayoutTransaction, solid: TronReferenceBlock): Promise<boolean> {
    for (const transaction of transactions) {
      if (transaction.payer !== 'hot_wallet' || transaction.state === 'failed') continue;
      const where = await this.options.node.whereKnown(transaction.tx_hash);
      if (where === undefined) continue;
      this.unknownSince.delete(latest.tx_hash);
      // A transaction dropped as never included is in a block after all: never rebuilt again, for the operator.
      if (transaction.state === 'dropped') this.log('error', withdrawal, { txId: transaction.tx_hash, where }, 'a dropped payout transaction is known to the node: nothing is rebuilt, left for the operator');
      return false;
    }
    const since = this.unknownSince.get(latest.tx_hash);
    const now = (this.options.clock ?? performance.now.bind(performance))();
    if (since === undefined) {
      this.unknownSince.set(latest.tx_hash, { block: solid.number, at: now });
      this.log('info', withdrawal, { txId: latest.tx_hash, solidBlock: solid.number }, `payout expired and unknown to the node: rebuilt if still unknown ${UNKNOWN_AGAIN_AFTER_BLOCKS} solidified blocks and ${UNKNOWN_AGAIN_AFTER_MS / 60_000} minutes later`);
      return false;
    }
    return solid.number >= since.block + UNKNOWN_AGAIN_AFTER_BLOCKS && now - since.at >= UNKNOWN_AGAIN_AFTER_MS;
  }

  /** A solidified transaction: DONE with its proof, FAILED when it failed on chain. */
  private async settle(withdrawal: WithdrawalRow, transaction: PayoutTransaction, info: TronTransactionInfo): Promise<void> {
    const blockNumber = BigInt(info.blockNumber);
    const expected = { token: this.options.token, from: transaction.from_address ?? '', to: withdrawal.destination_address, amount: withdrawal.amount_units };
    const succeeded = info.result === 'SUCCESS' && !info.failed;
    const proven = succeeded && (transaction.payer === 'hot_wallet' ? provesTransfer('Tron', info.logs, expected) : provesAnySender(info.logs, expected));
    const at = { transaction, blockNumber };
    if (proven) {
      if (await this.move(withdrawal, { to: 'confirmed', txId: transaction.tx_hash }, { ...at, state: 'mined' })) {
        this.log('info', withdrawal, { txId: transaction.tx_hash, block: info.blockNumber }, 'payout confirmed: DONE');
        this.counted('confirmed');
      }
      return;
    }
    const what = succeeded ? `carries no transfer of exactly ${formatDecimalUnits(withdrawal.amount_units)} USDT to the destination` : `failed on chain (${info.result}${info.message ? `: ${info.message}` : ''})`;
    if (transaction.payer === 'operator') {
      // The operator's payment did not pay it: the withdrawal waits for another.
      this.log('warn', withdrawal, { txId: transaction.tx_hash }, `the operator's recorded transaction ${what}: the withdrawal is queued again`);
      await this.move(withdrawal, { to: 'requeued', reason: `the recorded transaction ${what}` }, { ...at, state: 'failed' });
      return;
    }
    if (!succeeded) {
      this.log('warn', withdrawal, { txId: transaction.tx_hash, result: info.result }, 'payout failed on chain: FAILED, its hold released');
      this.counted('failed');
      await this.move(withdrawal, { to: 'reverted', reason: `Its transfer ${transaction.tx_hash} failed on chain (${info.result}); nothing was paid.` }, { ...at, state: 'failed' });
      return;
    }
    // Our own transaction ran and moved something else: never guessed at, for the operator to look at
    // (`ledger check` lists the withdrawal as out with no live transaction).
    await this.mark({ ...at, state: 'failed' });
    this.log('error', withdrawal, { txId: transaction.tx_hash }, `payout solidified without its transfer (${what}): left for the operator`);
  }

  /** A refusal for the hot wallet's bandwidth (or the TRX to burn for it) is remembered: that transaction is not sent again. */
  protected async send(raw: string): Promise<string> {
    try {
      return await this.options.node.broadcast(raw);
    } catch (error) {
      if (error instanceof TronNodeError && error.code === 'BANDWITH_ERROR') this.refusedForResources.add((JSON.parse(raw) as { txID: string }).txID);
      throw error;
    }
  }

  /** Why the hot wallet's TRX (sun) cannot pay a transfer's energy up to its fee limit; undefined when it can. */
  private trxShortfall(trx: bigint): string | undefined {
    const feeLimit = BigInt(this.options.feeLimitSun);
    return trx < feeLimit ? `the hot wallet holds ${trx} sun of TRX, less than the fee limit of ${feeLimit} sun for its energy` : undefined;
  }

  /**
   * Builds and signs the transfer with the head as its reference block, expiring TRON_PAYOUT_EXPIRATION_SECONDS
   * after it, and writes it (moving the withdrawal on, and marking the transactions it replaces) before
   * anything is broadcast. Undefined when the withdrawal was not where the move needs it: then nothing was
   * written and nothing may be sent.
   */
  private async signAndRecord(wallet: HotWallet, withdrawal: WithdrawalRow, head: TronReferenceBlock, move: 'sent' | 'resent', replaced: Mark[] = []): Promise<PayoutTransaction | undefined> {
    const expiration = head.timestamp + Math.min(this.options.expirationSeconds * 1000, MAX_EXPIRATION_MS);
    const transfer = signTrc20Transfer(wallet, {
      referenceBlock: head,
      expiration,
      timestamp: this.timestamp(head, expiration),
      feeLimit: this.options.feeLimitSun,
      token: this.options.token,
      to: withdrawal.destination_address,
      amount: withdrawal.amount_units,
    });
    const intent = {
      withdrawalUuid: withdrawal.uuid,
      network: 'Tron' as const,
      payer: 'hot_wallet' as const,
      fromAddress: wallet.address,
      nonce: null,
      txHash: transfer.txID,
      raw: JSON.stringify(transfer),
      expiresAt: new Date(expiration),
    };
    const written = await this.write(async (tx) => {
      const row = await recordIntent(tx, intent, move);
      if (row) await markAll(tx, replaced);
      return row;
    });
    if (written) this.log('info', withdrawal, { txId: transfer.txID, referenceBlock: head.number, expiresAt: intent.expiresAt.toISOString() }, move === 'sent' ? 'payout signed and written' : 'payout rebuilt, signed and written');
    return written;
  }

  /**
   * raw_data.timestamp: the machine's time within the reference block's time and the expiration (a field
   * of the transaction, no decision rests on it), and never the same twice from this payer, so that two
   * payouts of one amount to one address are two transactions with two txIDs. (Should two payers ever
   * build the same bytes, the txID's unique row refuses the second.)
   */
  private timestamp(head: TronReferenceBlock, expiration: number): number {
    const time = Math.min(Math.max(head.timestamp, Math.min(Date.now(), expiration - 1), this.lastTimestamp + 1), expiration - 1);
    this.lastTimestamp = time;
    return time;
  }

  /** Signs, writes and broadcasts the queued withdrawals the hot wallet covers; how many it signed. */
  private async payQueued(wallet: HotWallet, head: TronReferenceBlock, out: SentPayout[], followed: boolean): Promise<number> {
    const { db, node, token, feeLimitSun } = this.options;
    const queued = await queuedWithdrawals(db, 'Tron', BATCH);
    // Nothing to pay or follow: the node is asked for the wallet's balances once a minute, for the gauges alone.
    if (queued.length === 0 && !followed && performance.now() - this.balancesReadAt < IDLE_BALANCE_READ_MS) return 0;
    this.balancesReadAt = performance.now();
    const tokens = await node.tokenBalance(token, wallet.address);
    const trx = await node.trxBalance(wallet.address);
    this.options.gauges?.hotWallet.set({ network: 'Tron', asset: 'token' }, Number(tokens));
    this.options.gauges?.hotWallet.set({ network: 'Tron', asset: 'gas' }, Number(trx));
    // Paused by the operator: nothing new is signed; the queue waits as it is (not even for funds).
    if (queued.length === 0 || this.paused) return 0;
    // The solidified balance, less what the payouts out will take: none of them is solidified, so none has
    // moved it yet (a head balance would count a payout included but not solidified twice).
    let available = tokens - out.reduce((sum, p) => sum + p.withdrawal.amount_units, 0n);
    let trxAvailable = trx;
    let signed = 0;
    for (const withdrawal of queued) {
      if (withdrawal.amount_units > available) {
        await this.waitForFunds(withdrawal, `the hot wallet holds ${formatDecimalUnits(available < 0n ? 0n : available)} USDT beyond the payouts out`);
        continue;
      }
      // The energy is paid in TRX burnt up to the fee_limit: the hot wallet must hold all of it.
      const short = this.trxShortfall(trxAvailable);
      if (short) {
        await this.waitForFunds(withdrawal, short);
        continue;
      }
      let written: PayoutTransaction | undefined;
      try {
        written = await this.signAndRecord(wallet, withdrawal, head, 'sent');
      } catch (error) {
        if (!(error instanceof PayoutRequestError)) throw error;
        this.log('warn', withdrawal, { err: error.message }, 'no Tron transfer can pay this withdrawal: FAILED, its hold released');
        this.counted('failed');
        await this.move(withdrawal, { to: 'FAILED', reason: `No Tron transfer can pay it (${error.message}); nothing was paid.` });
        continue;
      }
      // Not written (the withdrawal moved meanwhile): never broadcast.
      if (!written) continue;
      signed += 1;
      available -= withdrawal.amount_units;
      trxAvailable -= BigInt(feeLimitSun);
      await this.broadcast(withdrawal, written);
    }
    return signed;
  }
}

/** An operator's payment may come from any of their addresses: the transfer to the destination, of the amount. */
function provesAnySender(logs: readonly ChainLog[], expected: { token: string; to: string; amount: bigint }): boolean {
  return logs.some((log) => {
    const transfer = decodeTokenTransfer('Tron', log);
    return transfer !== undefined && provesTransfer('Tron', [log], { ...expected, from: transfer.from });
  });
}
