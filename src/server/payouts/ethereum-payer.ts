// The Ethereum payout job's round (docs/design.md#paying-out): first what is out, then what is to pay.
//
// Never twice: a payout's transaction is signed with a nonce fixed before signing, written with its hash
// (its intent) in the transaction that moves the withdrawal to `sent`, and only then broadcast. After a
// crash the same bytes are sent again ("already known" is success). A transaction not mined for a while
// is replaced only under the same nonce with higher fees, every candidate kept: at most one can be mined,
// and whichever is, is the one recorded. The chain alone makes a withdrawal DONE: a successful receipt
// holding the token's Transfer from the hot wallet to the destination for the exact amount, with the
// network's confirmations. A payout whose nonce another transaction took (an outside transfer from the
// hot wallet), and none of whose candidates was mined, is paid anew: the queue never wedges on it.
import type { Database } from '../db/database.js';
import type { Logger } from '../shared/logger.js';
import { formatDecimalUnits } from '../shared/money.js';
import { moveWithdrawal, type WithdrawalMove } from '../withdrawals/settlement.js';
import type { WithdrawalRow } from '../withdrawals/withdrawal-rows.js';
import { isExecutionReverted, type EthereumNode, type Receipt } from './ethereum-node.js';
import { replacementFees, signErc20Transfer } from './ethereum.js';
import type { HotWallet } from './hot-wallet.js';
import { highestNonce, markBroadcast, markTransaction, recordIntent, sentPayouts, type PayoutTransaction, type SentPayout } from './payout-store.js';
import { awaitFunds, payoutCounts, queuedWithdrawals } from '../withdrawals/payout-queue.js';
import { provesTransfer } from './transfer-proof.js';
import type { PayoutGauges } from './payout-gauges.js';

export interface EthereumPayerOptions {
  db: Database;
  node: EthereumNode;
  /** The hot wallet; without one the job only checks the operator's recorded transactions. */
  wallet: HotWallet | undefined;
  /** The token contract (0x hex). */
  token: string;
  /** Blocks a payout's block needs below the head (the head counting as one). */
  confirmations: number;
  maxFeePerGas: bigint;
  replaceAfterSeconds: number;
  fundsWaitHours: number;
  log?: Logger | undefined;
  gauges?: PayoutGauges | undefined;
}

/** Payouts signed in one round at most: a long queue is paid over several rounds. */
const BATCH = 20;
/** How often an idle round reads the hot wallet's balances (for its gauges). */
const IDLE_BALANCE_READ_MS = 60_000;
/** The gas estimate's margin: a token's transfer costs a little more to a fresh address than estimated at times. */
const GAS_MARGIN_PERCENT = 120n;

export class EthereumPayer {
  private chainId: bigint | undefined;
  /** When the wallet's balances were last read (performance.now()): idle rounds read them once a minute. */
  private balancesReadAt = -Infinity;

  constructor(private readonly options: EthereumPayerOptions) {}

  /** One round: what is out, then what is to pay. True when more is to pay at once (a full batch). */
  async round(): Promise<boolean> {
    const head = await this.options.node.blockNumber();
    const sent = await sentPayouts(this.options.db, 'Ethereum');
    for (const payout of sent) await this.follow(payout, head);
    const signed = this.options.wallet ? await this.pay(this.options.wallet, sent) : 0;
    if (this.options.gauges) {
      for (const [state, count] of Object.entries(await payoutCounts(this.options.db, 'Ethereum'))) this.options.gauges.payouts.set({ network: 'Ethereum', state }, count);
    }
    return signed === BATCH;
  }

  private log(level: 'info' | 'warn' | 'error', withdrawal: WithdrawalRow, fields: Record<string, unknown>, message: string) {
    this.options.log?.[level]?.({ network: 'Ethereum', withdrawal: withdrawal.uuid, ...fields }, message);
  }

  /** Moves a withdrawal as the chain says; a move refused (it moved meanwhile) changes nothing. */
  private move(withdrawal: WithdrawalRow, move: WithdrawalMove) {
    return this.options.db.transaction((tx) => moveWithdrawal(tx, withdrawal.uuid, move));
  }

  /** A payout that is out: DONE or FAILED once its block is deep enough, else sent again, replaced, or paid anew. */
  private async follow({ withdrawal, transactions }: SentPayout, head: bigint): Promise<void> {
    const { node, confirmations } = this.options;
    const live = transactions.filter((t) => t.state !== 'dropped' && t.state !== 'failed');
    for (const transaction of live) {
      const receipt = await node.receipt(transaction.tx_hash);
      if (!receipt) continue;
      const depth = head - receipt.blockNumber + 1n;
      if (transaction.state !== 'mined') await markTransaction(this.options.db, transaction.id, 'mined', receipt.blockNumber);
      if (depth < BigInt(confirmations)) return; // mined, not final: wait (a reorg may still take it away)
      return this.settle(withdrawal, transaction, receipt);
    }
    // None mined. A mined one that a reorg took away is pending again: back to what it was.
    for (const transaction of live.filter((t) => t.state === 'mined')) await markTransaction(this.options.db, transaction.id, 'pending');
    const own = live.filter((t) => t.payer === 'hot_wallet');
    if (own.length === 0) return; // the operator's transaction: not in a block yet
    const latest = own.at(-1)!;
    if (await this.nonceTakenElsewhere(latest, head)) {
      for (const transaction of own) await markTransaction(this.options.db, transaction.id, 'dropped');
      this.log('warn', withdrawal, { nonce: latest.nonce?.toString(), txId: latest.tx_hash }, 'payout: another transaction of the hot wallet took its nonce and none of its own was mined; it is paid anew');
      await this.move(withdrawal, { to: 'requeued', reason: 'its nonce was taken by another transaction' });
      return;
    }
    if (this.options.wallet && latest.age_seconds > this.options.replaceAfterSeconds) {
      if (await this.replace(this.options.wallet, withdrawal, latest)) return;
    }
    await this.broadcast(withdrawal, latest);
  }

  /**
   * The nonce is spent at a depth the network calls final and none of the payout's candidates has a
   * receipt: another transaction of the hot wallet took it, and none of these can ever be mined.
   */
  private async nonceTakenElsewhere(transaction: PayoutTransaction, head: bigint): Promise<boolean> {
    const final = head - BigInt(this.options.confirmations) + 1n;
    if (final < 0n || transaction.nonce === null) return false;
    return (await this.options.node.nonce(transaction.from_address!, final)) > transaction.nonce;
  }

  /** A final receipt: DONE with its proof, FAILED when it reverted. */
  private async settle(withdrawal: WithdrawalRow, transaction: PayoutTransaction, receipt: Receipt): Promise<void> {
    const expected = { token: this.options.token, from: transaction.from_address ?? '', to: withdrawal.destination_address, amount: withdrawal.amount_units };
    const proven = receipt.succeeded && (transaction.payer === 'hot_wallet' ? provesTransfer('Ethereum', receipt.logs, expected) : provesAnySender(receipt, expected));
    if (proven) {
      await this.move(withdrawal, { to: 'confirmed', txId: transaction.tx_hash });
      this.log('info', withdrawal, { txId: transaction.tx_hash, block: receipt.blockNumber.toString() }, 'payout confirmed: DONE');
      this.options.gauges?.confirmed.inc({ network: 'Ethereum' });
      return;
    }
    await markTransaction(this.options.db, transaction.id, 'failed');
    const what = receipt.succeeded ? `carries no transfer of exactly ${formatDecimalUnits(withdrawal.amount_units)} USDT to the destination` : 'reverted';
    if (transaction.payer === 'operator') {
      // The operator's payment did not pay it: the withdrawal waits for another.
      this.log('warn', withdrawal, { txId: transaction.tx_hash }, `the operator's recorded transaction ${what}: the withdrawal is queued again`);
      await this.move(withdrawal, { to: 'requeued', reason: `the recorded transaction ${what}` });
      return;
    }
    if (!receipt.succeeded) {
      this.log('warn', withdrawal, { txId: transaction.tx_hash }, 'payout reverted: FAILED, its hold released');
      this.options.gauges?.failed.inc({ network: 'Ethereum' });
      await this.move(withdrawal, { to: 'reverted', reason: `Its transfer ${transaction.tx_hash} reverted on chain; nothing was paid.` });
      return;
    }
    // Our own transaction ran and moved something else: never guessed at, for the operator to look at.
    this.log('error', withdrawal, { txId: transaction.tx_hash }, `payout mined without its transfer (${what}): left for the operator`);
  }

  /** Sends the signed bytes again (after a crash, a node that lost them, a reorg that took them away). */
  private async broadcast(withdrawal: WithdrawalRow, transaction: PayoutTransaction): Promise<void> {
    try {
      const result = await this.options.node.broadcast(transaction.raw!);
      if (transaction.broadcast_at === null) await markBroadcast(this.options.db, transaction.id);
      if (result === 'sent' && transaction.broadcast_at === null) this.log('info', withdrawal, { txId: transaction.tx_hash, nonce: transaction.nonce?.toString() }, 'payout broadcast');
    } catch (error) {
      this.log('warn', withdrawal, { txId: transaction.tx_hash, err: (error as Error).message }, 'payout broadcast refused; sent again next round');
    }
  }

  /** A fee bump under the same nonce (10 % at least, and at least today's fees), within the cap. */
  private async replace(wallet: HotWallet, withdrawal: WithdrawalRow, latest: PayoutTransaction): Promise<boolean> {
    const previous = { maxFeePerGas: BigInt(latest.max_fee_per_gas!), maxPriorityFeePerGas: BigInt(latest.max_priority_fee_per_gas!) };
    const bumped = replacementFees(previous);
    const market = await this.marketFees();
    const fees = {
      maxFeePerGas: max(bumped.maxFeePerGas, market.maxFeePerGas),
      maxPriorityFeePerGas: max(bumped.maxPriorityFeePerGas, market.maxPriorityFeePerGas),
    };
    if (fees.maxFeePerGas > this.options.maxFeePerGas) {
      this.log('warn', withdrawal, { txId: latest.tx_hash, maxFeePerGas: fees.maxFeePerGas.toString() }, 'payout not mined, and its replacement would pass ETHEREUM_MAX_FEE_GWEI: it waits');
      return false;
    }
    const gasLimit = await this.gasLimit(wallet, withdrawal);
    if (gasLimit === undefined) return false;
    const signed = signErc20Transfer(wallet, { chainId: await this.chain(), nonce: latest.nonce!, ...fees, gasLimit, token: this.options.token, to: withdrawal.destination_address, amount: withdrawal.amount_units });
    const intent = { withdrawalUuid: withdrawal.uuid, network: 'Ethereum' as const, payer: 'hot_wallet' as const, fromAddress: wallet.address, nonce: latest.nonce, txHash: signed.hash, raw: signed.raw, ...fees };
    const written = await recordIntent(this.options.db, intent, 'resent');
    if (!written) return true;
    this.log('info', withdrawal, { txId: signed.hash, replaces: latest.tx_hash, nonce: latest.nonce?.toString(), maxFeePerGas: fees.maxFeePerGas.toString() }, 'payout replaced with higher fees under the same nonce');
    await this.broadcast(withdrawal, written);
    return true;
  }

  private async chain(): Promise<bigint> {
    this.chainId ??= await this.options.node.chainId();
    return this.chainId;
  }

  /** Today's fees: twice the base fee and the tip, within the cap. */
  private async marketFees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; baseFee: bigint }> {
    const { baseFee, tip } = await this.options.node.fees();
    const maxFeePerGas = min(2n * baseFee + tip, this.options.maxFeePerGas);
    return { maxFeePerGas, maxPriorityFeePerGas: min(tip, maxFeePerGas), baseFee };
  }

  /** The transfer's gas with a margin; undefined when the token refuses it (the withdrawal then FAILED). */
  private async gasLimit(wallet: HotWallet, withdrawal: WithdrawalRow): Promise<bigint | undefined> {
    try {
      const estimate = await this.options.node.estimateTransfer(wallet.address, this.options.token, withdrawal.destination_address, withdrawal.amount_units);
      return (estimate * GAS_MARGIN_PERCENT) / 100n;
    } catch (error) {
      if (!isExecutionReverted(error)) throw error;
      return undefined;
    }
  }

  /** Signs, writes and broadcasts the queued withdrawals the hot wallet covers; how many it signed. */
  private async pay(wallet: HotWallet, sent: SentPayout[]): Promise<number> {
    const { db, node, token } = this.options;
    const queued = await queuedWithdrawals(db, 'Ethereum', BATCH);
    // Nothing to pay or follow: the node is asked for the wallet's balances once a minute, for the gauges alone.
    if (queued.length === 0 && sent.length === 0 && performance.now() - this.balancesReadAt < IDLE_BALANCE_READ_MS) return 0;
    this.balancesReadAt = performance.now();
    const [tokens, gas] = await Promise.all([node.tokenBalance(token, wallet.address), node.balance(wallet.address)]);
    this.options.gauges?.hotWallet.set({ network: 'Ethereum', asset: 'token' }, Number(tokens));
    this.options.gauges?.hotWallet.set({ network: 'Ethereum', asset: 'gas' }, Number(gas));
    if (queued.length === 0) return 0;
    // What the hot wallet's payouts out, not mined yet, will still take from it: theirs is spoken for.
    let available = tokens - sent.filter(unmined).reduce((sum, p) => sum + p.withdrawal.amount_units, 0n);
    let gasAvailable = gas;
    const fees = await this.marketFees();
    if (fees.baseFee >= this.options.maxFeePerGas) {
      this.options.log?.warn({ network: 'Ethereum', baseFee: fees.baseFee.toString() }, 'payouts wait: the base fee is at or above ETHEREUM_MAX_FEE_GWEI');
      return 0;
    }
    let nonce: bigint | undefined;
    let signed = 0;
    for (const withdrawal of queued) {
      if (withdrawal.amount_units > available) {
        await this.waitForFunds(withdrawal, `the hot wallet holds ${formatDecimalUnits(available < 0n ? 0n : available)} USDT beyond the payouts out`);
        continue;
      }
      const gasLimit = await this.gasLimit(wallet, withdrawal);
      if (gasLimit === undefined) {
        this.log('warn', withdrawal, {}, 'the token refuses this transfer (eth_estimateGas reverted): FAILED, its hold released');
        this.options.gauges?.failed.inc({ network: 'Ethereum' });
        await this.move(withdrawal, { to: 'FAILED', reason: 'The token contract refuses this transfer (it would revert); nothing was paid.' });
        continue;
      }
      if (gasLimit * fees.maxFeePerGas > gasAvailable) {
        await this.waitForFunds(withdrawal, 'the hot wallet has not enough ether for its gas');
        continue;
      }
      nonce ??= max(await node.nonce(wallet.address, 'pending'), ((await highestNonce(db, wallet.address)) ?? -1n) + 1n);
      const transfer = signErc20Transfer(wallet, { chainId: await this.chain(), nonce, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, gasLimit, token, to: withdrawal.destination_address, amount: withdrawal.amount_units });
      const intent = { withdrawalUuid: withdrawal.uuid, network: 'Ethereum' as const, payer: 'hot_wallet' as const, fromAddress: wallet.address, nonce, txHash: transfer.hash, raw: transfer.raw, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
      // Written before it is broadcast; not written (the withdrawal moved meanwhile): never broadcast.
      const written = await recordIntent(db, intent, 'sent');
      if (!written) continue;
      this.log('info', withdrawal, { txId: transfer.hash, nonce: nonce.toString() }, 'payout signed and written');
      nonce += 1n;
      signed += 1;
      available -= withdrawal.amount_units;
      gasAvailable -= gasLimit * fees.maxFeePerGas;
      await this.broadcast(withdrawal, written);
    }
    return signed;
  }

  /** The hot wallet cannot cover it yet: it waits (a metric, /readyz); past PAYOUT_FUNDS_WAIT_HOURS it fails. */
  private async waitForFunds(withdrawal: WithdrawalRow, why: string): Promise<void> {
    const waited = await awaitFunds(this.options.db, withdrawal.uuid);
    if (waited < this.options.fundsWaitHours) {
      this.log('warn', withdrawal, { amount: formatDecimalUnits(withdrawal.amount_units) }, `payout waits: ${why}`);
      return;
    }
    this.options.gauges?.failed.inc({ network: 'Ethereum' });
    await this.move(withdrawal, { to: 'FAILED', reason: `The platform's hot wallet did not cover it within ${this.options.fundsWaitHours} hours; nothing was paid.` });
  }
}

/** A payout of the hot wallet whose tokens have not left it yet: none of its transactions is in a block. */
function unmined({ transactions }: SentPayout): boolean {
  return transactions.some((t) => t.payer === 'hot_wallet' && t.state === 'pending') && !transactions.some((t) => t.state === 'mined');
}

/** An operator's payment may come from any of their addresses: the transfer to the destination, of the amount. */
function provesAnySender(receipt: Receipt, expected: { token: string; to: string; amount: bigint }): boolean {
  return receipt.logs.some((log) => {
    const from = log.topics[1];
    return from !== undefined && provesTransfer('Ethereum', [log], { ...expected, from: `0x${from.slice(-40)}` });
  });
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);
