// The Ethereum payout job's round (docs/design.md#paying-out): first what is out, then what is to pay.
//
// Never twice: a payout's transaction is signed with a nonce fixed before signing, written with its hash
// (its intent) in the transaction that moves the withdrawal to `sent`, and only then broadcast. After a
// crash the same bytes are sent again ("already known" is success). A transaction not mined for a while
// is replaced only under the same nonce with higher fees and its original's gas, every candidate kept: at
// most one can be mined, and whichever is, is the one recorded. The chain alone makes a withdrawal DONE: a
// successful receipt holding the token's Transfer from the hot wallet to the destination for the exact
// amount, in a block the network counts as final (the scanner's rule). A payout is paid anew only on
// proof that none of its candidates can ever be mined: another transaction of the hot wallet holds its
// nonce in a final block, found there with its receipt. A nonce spent with no such proof (a node blind to
// receipts, a load balancer behind on one of its backends) is waited on, never paid again.
import { formatDecimalUnits } from '../shared/money.js';
import type { WithdrawalRow } from '../withdrawals/withdrawal-rows.js';
import { isExecutionReverted, type EthereumNode, type Receipt } from './ethereum-node.js';
import { replacementFees, signedGasLimit, signErc20Transfer } from './ethereum.js';
import type { HotWallet } from './hot-wallet.js';
import { highestNonce, minedSince, recordIntent, type PayoutTransaction, type SentPayout } from './payout-store.js';
import { queuedWithdrawals } from '../withdrawals/payout-queue.js';
import { provesTransfer } from './transfer-proof.js';
import { BATCH, PayoutJob, type PayoutJobOptions } from './payout-job.js';

export interface EthereumPayerOptions extends PayoutJobOptions {
  node: EthereumNode;
  /** The token contract (0x hex). */
  token: string;
  /** Blocks a payout's block needs below the head (the head counting as one), where `finality` says so. */
  confirmations: number;
  /** The scanner's rule of finality (ETHEREUM_FINALITY): a payout is DONE as a deposit is credited. */
  finality?: 'confirmations' | 'finalized';
  maxFeePerGas: bigint;
  replaceAfterSeconds: number;
}

/** How often an idle round reads the hot wallet's balances (for its gauges). */
const IDLE_BALANCE_READ_MS = 60_000;
/** The gas estimate's margin: a token's transfer costs a little more to a fresh address than estimated at times. */
const GAS_MARGIN_PERCENT = 120n;
/**
 * How far below the head a settled payout is looked at again after a deep reorg: deeper than any reorg
 * of a chain with finality (Ethereum finalizes within about 64 blocks).
 */
const REORG_RECHECK_BLOCKS = 256n;

/** The round's view of the chain: its heads, and the hot wallet's nonce at each, asked once a round. */
interface View {
  confirmed: bigint;
  latest: bigint;
  nonceAt(address: string, at: 'final' | 'latest'): Promise<bigint>;
}

export class EthereumPayer extends PayoutJob {
  private chainId: bigint | undefined;
  /** When the wallet's balances were last read (performance.now()): idle rounds read them once a minute. */
  private balancesReadAt = -Infinity;
  /** Where each spent nonce of the hot wallet was found spent ("address:nonce" → block): final, so kept. */
  private readonly spentAt = new Map<string, bigint>();
  /** Whether settled payouts are to be looked at again: at the first round, and after a reorg below the final block, until each is found. */
  private recheckSettled = true;
  /** The final block of the last round, by number and hash: if its hash changes, a reorg went deeper than the rule of finality. */
  private lastFinal: { number: bigint; hash: string } | undefined;

  constructor(private readonly options: EthereumPayerOptions) {
    super('Ethereum', options);
  }

  protected async pay(): Promise<number> {
    const { node } = this.options;
    const heads = await node.heads(this.options.finality ?? 'confirmations', this.options.confirmations);
    const nonces = new Map<string, Promise<bigint>>();
    const view: View = {
      ...heads,
      nonceAt: (address, at) => {
        const key = `${address}@${at}`;
        if (!nonces.has(key)) nonces.set(key, node.nonce(address, at === 'latest' ? 'latest' : heads.confirmed < 0n ? 0n : heads.confirmed));
        return nonces.get(key)!;
      },
    };
    const { sent } = await this.followEach((payout) => this.follow(payout, view));
    if (await this.finalBlockReplaced(heads.confirmed)) this.recheckSettled = true;
    if (this.recheckSettled) this.recheckSettled = !(await this.sendRemovedAgain(view, sent));
    return this.options.wallet ? this.payQueued(this.options.wallet, sent) : 0;
  }

  /** A payout that is out: DONE or FAILED once its block is final, else sent again, replaced, or paid anew on proof. */
  private async follow({ withdrawal, transactions }: SentPayout, view: View): Promise<void> {
    const live = transactions.filter((t) => t.state !== 'dropped' && t.state !== 'failed');
    for (const transaction of live) {
      const receipt = await this.options.node.receipt(transaction.tx_hash);
      if (!receipt) continue;
      // Mined, not final: wait (a reorg may still take it away).
      if (receipt.blockNumber > view.confirmed) {
        if (transaction.state !== 'mined') await this.mark({ transaction, state: 'mined', blockNumber: receipt.blockNumber });
        return;
      }
      return this.settle(withdrawal, transaction, receipt);
    }
    const own = live.filter((t) => t.payer === 'hot_wallet');
    if (own.length === 0) return; // the operator's transaction: not in a block yet
    const latest = own.at(-1)!;
    const from = latest.from_address!;
    const nonce = latest.nonce!;
    if ((await view.nonceAt(from, 'final')) > nonce) return this.nonceSpentAtFinal(withdrawal, own, view);
    // Spent in a block not final yet, by one of these or another: the chain will say which; nothing to send.
    if ((await view.nonceAt(from, 'latest')) > nonce) return;
    // A mined one that a reorg took away is pending again.
    const unmined = live.filter((t) => t.state === 'mined').map((transaction) => ({ transaction, state: 'pending' as const }));
    if (unmined.length > 0) await this.mark(...unmined);
    // Paused: no replacement; its same bytes are still sent again (nothing new: the transaction is out).
    if (this.options.wallet && !this.paused && latest.age_seconds > this.options.replaceAfterSeconds) {
      if (await this.replace(this.options.wallet, withdrawal, latest)) return;
    }
    await this.broadcast(withdrawal, latest);
  }

  /**
   * Whether the last round's final block was replaced since: a reorg deeper than the rule of finality (the
   * scanner halts on it, and the payer waits until the operator resumes). One block asked a round, two
   * when the final block moved.
   */
  private async finalBlockReplaced(final: bigint): Promise<boolean> {
    const { rpc } = this.options.node;
    const last = this.lastFinal;
    const replaced = last !== undefined && (await rpc.block(last.number))?.hash !== last.hash;
    // The final block has not moved since (and is still there): nothing more to ask.
    if (last !== undefined && !replaced && last.number === final) return false;
    const block = final >= 0n ? await rpc.block(final) : undefined;
    this.lastFinal = block && { number: block.number, hash: block.hash };
    return replaced;
  }

  /**
   * A reorg deeper than the rule of finality (looked for at the first round, and when the last round's
   * final block was replaced) can take a settled payout's block away, its withdrawal DONE. Its signed
   * bytes are still the one transaction under its nonce, which the reorg gave back to the hot wallet: they
   * are sent again, so the same transfer lands again (never a second one: the same hash). True when every
   * settled payout within REORG_RECHECK_BLOCKS is in the chain.
   */
  private async sendRemovedAgain(view: View, sent: SentPayout[]): Promise<boolean> {
    const out = new Set(sent.map((payout) => payout.withdrawal.uuid));
    const settled = (await minedSince(this.options.db, 'Ethereum', view.latest - REORG_RECHECK_BLOCKS)).filter((t) => !out.has(t.withdrawal_uuid));
    let allThere = true;
    for (const transaction of settled) {
      if (await this.options.node.receipt(transaction.tx_hash)) continue;
      allThere = false;
      const withdrawal = { uuid: transaction.withdrawal_uuid };
      const fields = { txId: transaction.tx_hash, nonce: transaction.nonce?.toString() };
      this.log('warn', withdrawal, fields, "a reorg took a DONE payout's transaction out of the chain: its same signed bytes are sent again");
      if ((await this.broadcast(withdrawal, { ...transaction, broadcast_at: transaction.broadcast_at ?? new Date() })) === 'nonce spent') {
        this.log('error', withdrawal, fields, "a DONE payout's transaction left the chain in a reorg and another transaction holds its nonce now: its destination may not hold its amount, for the operator");
      }
    }
    return allThere;
  }

  /**
   * The payout's nonce is spent in a final block, and the node shows no receipt of its candidates. Paid
   * anew only on proof that another transaction took the nonce: found in the block where the nonce was
   * spent, not one of these, with a receipt. Else the node is blind to what is there (one of ours, most
   * likely): it waits, and says so every round, for the operator.
   */
  private async nonceSpentAtFinal(withdrawal: WithdrawalRow, own: PayoutTransaction[], view: View): Promise<void> {
    const latest = own.at(-1)!;
    const taker = await this.takerOf(latest.from_address!, latest.nonce!, view.confirmed);
    const proven = taker !== undefined && !own.some((t) => t.tx_hash === taker) && (await this.options.node.receipt(taker)) !== undefined;
    if (!proven) {
      this.log('warn', withdrawal, { nonce: latest.nonce!.toString(), txId: latest.tx_hash, taker }, 'payout: its nonce is spent in a final block but the node shows no receipt of it nor the transaction that took it; it waits, never paid again on missing evidence');
      return;
    }
    this.log('warn', withdrawal, { nonce: latest.nonce!.toString(), txId: latest.tx_hash, takenBy: taker }, 'payout: another transaction of the hot wallet took its nonce (found with its receipt) and none of its own can be mined; it is paid anew');
    await this.move(withdrawal, { to: 'requeued', reason: `its nonce was taken by transaction ${taker}` }, ...own.map((transaction) => ({ transaction, state: 'dropped' as const })));
  }

  /**
   * The transaction that spent the hot wallet's `nonce` at or below `final`, as the node shows it. Where it
   * was spent is kept once the transaction was found there (a final block); a search a lagging backend
   * answered wrong finds nothing, keeps nothing, and is made again next round.
   */
  private async takerOf(address: string, nonce: bigint, final: bigint): Promise<string | undefined> {
    const key = `${address}:${nonce}`;
    const { node } = this.options;
    const block = this.spentAt.get(key) ?? (await node.blockSpendingNonce(address, nonce, final));
    const taker = await node.transactionAtNonce(address, nonce, block);
    if (taker !== undefined) this.spentAt.set(key, block);
    return taker;
  }

  /** A final receipt: DONE with its proof, FAILED when it reverted; its transaction marked with the move. */
  private async settle(withdrawal: WithdrawalRow, transaction: PayoutTransaction, receipt: Receipt): Promise<void> {
    const expected = { token: this.options.token, from: transaction.from_address ?? '', to: withdrawal.destination_address, amount: withdrawal.amount_units };
    const proven = receipt.succeeded && (transaction.payer === 'hot_wallet' ? provesTransfer('Ethereum', receipt.logs, expected) : provesAnySender(receipt, expected));
    const at = { transaction, blockNumber: receipt.blockNumber };
    if (proven) {
      if (await this.move(withdrawal, { to: 'confirmed', txId: transaction.tx_hash }, { ...at, state: 'mined' })) {
        this.log('info', withdrawal, { txId: transaction.tx_hash, block: receipt.blockNumber.toString() }, 'payout confirmed: DONE');
        this.counted('confirmed');
      }
      return;
    }
    const what = receipt.succeeded ? `carries no transfer of exactly ${formatDecimalUnits(withdrawal.amount_units)} USDT to the destination` : 'reverted';
    if (transaction.payer === 'operator') {
      // The operator's payment did not pay it: the withdrawal waits for another.
      this.log('warn', withdrawal, { txId: transaction.tx_hash }, `the operator's recorded transaction ${what}: the withdrawal is queued again`);
      await this.move(withdrawal, { to: 'requeued', reason: `the recorded transaction ${what}` }, { ...at, state: 'failed' });
      return;
    }
    if (!receipt.succeeded) {
      this.log('warn', withdrawal, { txId: transaction.tx_hash }, 'payout reverted: FAILED, its hold released');
      this.counted('failed');
      await this.move(withdrawal, { to: 'reverted', reason: `Its transfer ${transaction.tx_hash} reverted on chain; nothing was paid.` }, { ...at, state: 'failed' });
      return;
    }
    // Our own transaction ran and moved something else: never guessed at, for the operator to look at
    // (`ledger check` lists the withdrawal as out with no live transaction).
    await this.mark({ ...at, state: 'failed' });
    this.log('error', withdrawal, { txId: transaction.tx_hash }, `payout mined without its transfer (${what}): left for the operator`);
  }

  protected send(raw: string): Promise<string> {
    return this.options.node.broadcast(raw);
  }

  /** A fee bump under the same nonce (10 % at least, and at least today's fees), within the cap, with the original's gas. */
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
    // The same transfer as its original, so the same gas: an estimate now runs against the pending state,
    // where the original has already moved the tokens, and comes out short.
    const gasLimit = signedGasLimit(latest.raw!);
    const signed = signErc20Transfer(wallet, { chainId: await this.chain(), nonce: latest.nonce!, ...fees, gasLimit, token: this.options.token, to: withdrawal.destination_address, amount: withdrawal.amount_units });
    const intent = { withdrawalUuid: withdrawal.uuid, network: 'Ethereum' as const, payer: 'hot_wallet' as const, fromAddress: wallet.address, nonce: latest.nonce, txHash: signed.hash, raw: signed.raw, ...fees };
    const written = await this.write((tx) => recordIntent(tx, intent, 'resent'));
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
  private async payQueued(wallet: HotWallet, sent: SentPayout[]): Promise<number> {
    const { db, node, token } = this.options;
    const queued = await queuedWithdrawals(db, 'Ethereum', BATCH);
    // Nothing to pay or follow: the node is asked for the wallet's balances once a minute, for the gauges alone.
    if (queued.length === 0 && sent.length === 0 && performance.now() - this.balancesReadAt < IDLE_BALANCE_READ_MS) return 0;
    this.balancesReadAt = performance.now();
    const [tokens, gas] = await Promise.all([node.tokenBalance(token, wallet.address), node.balance(wallet.address)]);
    this.options.gauges?.hotWallet.set({ network: 'Ethereum', asset: 'token' }, Number(tokens));
    this.options.gauges?.hotWallet.set({ network: 'Ethereum', asset: 'gas' }, Number(gas));
    // Paused by the operator: nothing new is signed; the queue waits as it is (not even for funds).
    if (queued.length === 0 || this.paused) return 0;
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
        this.counted('failed');
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
      const written = await this.write((tx) => recordIntent(tx, intent, 'sent'));
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
