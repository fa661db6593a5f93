// The operator's withdrawal commands: create one, list them and what awaits a person, approve, reject,
// claim one to pay by hand and record that payment, settle by the operator's word.
import { formatDecimalUnits } from '../shared/money.js';
import { platformDateTime } from '../shared/time.js';
import { isUuid } from '../shared/uuid.js';
import type { Network } from '../shared/network.js';
import type { Platform } from '../platform.js';
import type { Refusal } from '../withdrawals/requests.js';
import { txIdProblem, type WithdrawalMove } from '../withdrawals/settlement.js';
import { toWithdrawal } from '../withdrawals/withdrawal-rows.js';
import { payoutsOutSince, recordOperatorPayment } from '../payouts/payout-store.js';
import { claimForHand, unclaim, type ClaimOutcome } from '../withdrawals/hand-payment.js';
import { awaits, listWithdrawals, pendingWithdrawals, type Awaits, type ListedWithdrawal } from '../withdrawals/operator-lists.js';
import type { Withdrawal } from '../../../generated/schema.js';
import { durationFlag, NETWORK_VALUE, networkFlag, required, textFlag, type Flags } from './flags.js';
import type { Config } from '../config.js';
import { RefusedError, UsageError } from './errors.js';
import { JSON_FLAG, blockchainFlag, print, withPlatform, merchantOf, uuidFlag, amountFlag, type Command, type Io } from './command.js';

/** --reason: 1 to 500 characters without control characters (a failure's, which the merchant reads; an override's, the operator's own). */
function reasonFlag(flags: Flags, fallback: string): string {
  if (flags.reason === undefined) return fallback;
  const reason = required(flags, 'reason');
  if (reason.length > 500 || /[\u0000-\u001F\u007F]/.test(reason)) throw new UsageError('--reason must be 1 to 500 characters without control characters');
  return reason;
}

/** --override-policy's reason: both flags or neither. */
function overrideReason(flags: Flags): string | undefined {
  if (!flags['override-policy']) {
    if (flags.reason !== undefined) throw new UsageError('--reason goes with --override-policy');
    return undefined;
  }
  if (flags.reason === undefined) throw new UsageError('--override-policy needs --reason TEXT: why the policy is passed over, kept on the withdrawal');
  return reasonFlag(flags, '');
}

/** A refusal of a withdrawal request, as one line for the operator. */
function refusalText(refusal: Refusal): string {
  switch (refusal.code) {
    case 'validation_failed':
      return refusal.errors.map((e) => `${e.pointer.slice(1)} ${e.detail}`).join('; ');
    case 'insufficient_balance':
      return `it needs ${formatDecimalUnits(refusal.needed)} USDT (fee ${formatDecimalUnits(refusal.fee)} included), the balance has ${formatDecimalUnits(refusal.available)} available`;
    case 'daily_limit_exceeded':
      return `over the daily limit of ${formatDecimalUnits(refusal.limit)} USDT (${formatDecimalUnits(refusal.left)} left)`;
    case 'withdrawals_disabled':
      return 'withdrawals through the API are not enabled for this merchant';
    case 'network_halted':
      return `the network is halted since ${platformDateTime(refusal.haltedAt)} UTC after a deep reorg: resume it first (partner-api chain resume)`;
  }
}

/** Whether a hot wallet pays the network here (its key file is set; live mode only). */
const hotWalletPays = (config: Config, network: Network) => config.payouts.keyFiles[network] !== undefined;

/** A payout out longer than this many PAYOUT_REPLACE_AFTER_SECONDS awaits a look (withdrawals pending). */
const IN_FLIGHT_REPLACEMENTS = 10;

/** `withdrawals pending`'s columns: those it always had first, in their order (scripts read them by position), then the new. */
const PENDING_HEADER = ['uuid', 'network', 'destinationAddress', 'amount', 'merchantId', 'externalId', 'createdAt', 'waitingForFundsSince', 'stage', 'awaits', 'claimedAt', 'sentAt', 'txId'];
const LIST_HEADER = [...PENDING_HEADER.slice(0, 9), 'status', 'fee', 'claimedAt', 'txId', 'failureReason', 'settledWithoutProof', 'policyOverrideReason'];

const STAGES = ['awaiting_approval', 'queued', 'sent'] as const;
const STATUSES = ['PENDING', 'DONE', 'FAILED'] as const;

/** A time as the lists print it (ISO 8601, UTC), or null. */
/** A time as the API writes it (YYYY-MM-DD HH:MM:SS, UTC), as every command prints times (docs/operating.md). */
const apiTime = (date: Date | null) => (date ? platformDateTime(date) : null);

/** Rows as CSV (RFC 4180, CRLF lines) under `header`, or as JSON with --json. */
function printRows(io: Io, flags: Flags, header: string[], rows: Record<string, string | boolean | null>[]) {
  if (flags.json) return void io.stdout.write(JSON.stringify(rows, null, 2) + '\n');
  const csv = (value: string | boolean | null | undefined) => {
    const text = value === null || value === undefined ? '' : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  io.stdout.write([header.join(','), ...rows.map((row) => header.map((column) => csv(row[column])).join(','))].join('\r\n') + '\r\n');
}

/** The columns both lists share, those `withdrawals pending` always had. */
function commonColumns(w: ListedWithdrawal) {
  return {
    uuid: w.uuid,
    network: w.network,
    destinationAddress: w.destination_address,
    amount: formatDecimalUnits(w.amount),
    merchantId: w.merchant_id,
    externalId: w.external_id,
    createdAt: platformDateTime(w.created_at),
    waitingForFundsSince: apiTime(w.funds_awaited_since),
    stage: w.stage,
    claimedAt: apiTime(w.claimed_at),
    txId: w.tx_id,
  };
}

/** Claims a withdrawal for hand payment, or gives it back, as the operator asked: since when it is claimed (null: given back); a refusal names why. */
async function changeClaim(io: Io, config: Config, uuid: string, claim: boolean): Promise<Date | null> {
  const outcome: ClaimOutcome = await withPlatform(io, config, (p) => p.db.transaction((tx) => (claim ? claimForHand(tx, uuid) : unclaim(tx, uuid))));
  if (outcome.outcome === 'none') throw new RefusedError(`no withdrawal ${uuid}`);
  if (outcome.outcome === 'refused') throw new RefusedError(`withdrawal ${uuid} cannot be ${claim ? 'claimed' : 'given back'}: ${outcome.why}`);
  return outcome.outcome === 'claimed' ? outcome.claimedAt : null;
}

/** --merchant: a merchant's id, as the lists' merchantId column shows it (an id no merchant has lists nothing). */
function merchantIdFlag(flags: Flags): string | undefined {
  if (flags.merchant === undefined) return undefined;
  const id = required(flags, 'merchant');
  if (!isUuid(id)) throw new UsageError('--merchant must be a merchant id (the merchantId column of withdrawals list and pending)');
  return id;
}

/** The PENDING withdrawals a person must act on, oldest first, each with what it awaits and, if out, since when. */
async function awaitingAPerson(p: Platform, network: Network | undefined, inFlightSeconds: number): Promise<(ListedWithdrawal & { awaits: Awaits; sentAt: Date | null })[]> {
  const rows = await pendingWithdrawals(p.db, network);
  const out = await payoutsOutSince(p.db, rows.filter((w) => w.stage === 'sent').map((w) => w.uuid));
  const settings = { inFlightSeconds, hotWallet: { Tron: hotWalletPays(p.config, 'Tron'), Ethereum: hotWalletPays(p.config, 'Ethereum') } };
  return rows.flatMap((row) => {
    const what = awaits(row, out.get(row.uuid)?.seconds, settings);
    return what ? [{ ...row, awaits: what, sentAt: out.get(row.uuid)?.since ?? null }] : [];
  });
}

function oneOf<T extends string>(flags: Flags, name: string, values: readonly T[]): T | undefined {
  if (flags[name] === undefined) return undefined;
  const value = required(flags, name);
  if (!(values as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${values.join(', ')}`);
  return value as T;
}

function limitFlag(flags: Flags): number {
  if (flags.limit === undefined) return 100;
  const text = required(flags, 'limit');
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  return Number(text);
}

/** Moves a withdrawal for the operator; a refusal names why. */
async function movedWithdrawal(p: Platform, uuid: string, move: WithdrawalMove): Promise<Withdrawal> {
  const result = await p.withdrawals.move(uuid, move);
  if (result === undefined) throw new RefusedError(`no withdrawal ${uuid}`);
  if ('refused' in result) throw new RefusedError(`withdrawal ${uuid} cannot be ${move.to === 'approved' ? 'approved' : `moved to ${move.to}`}: ${result.refused}`);
  return result;
}

export const WITHDRAWAL_COMMANDS: Command[] = [
  {
    words: ['withdrawals', 'create'],
    summary: "records a merchant's withdrawal within its policy (merchants set-withdrawals), its amount plus the network's fee held from the merchant's balance; queued to be paid",
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      'external-id': { value: 'ID', description: "the merchant's id of the withdrawal, 1 to 128 characters, unique per merchant", required: true },
      amount: { value: 'AMOUNT', description: 'whole USDT with at most 6 decimals, e.g. 12.5', required: true },
      blockchain: { value: NETWORK_VALUE, description: 'the network', required: true },
      'destination-address': { value: 'ADDR', description: 'the address paid to, on that network', required: true },
      'override-policy': { description: "create it past the merchant's largest withdrawal, daily limit or allowed destinations (with --reason, kept on the withdrawal)" },
      reason: { value: 'TEXT', description: 'with --override-policy: why, 1 to 500 characters (withdrawals list --json shows it; the merchant never does)' },
      json: JSON_FLAG,
    },
    example: 'partner-api withdrawals create --api-key pk_test_… --external-id wd-1 --amount 12.5 --blockchain Tron --destination-address T…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const amountUnits = amountFlag(flags, 'amount');
      const blockchain = networkFlag(flags, 'blockchain');
      const destinationAddress = required(flags, 'destination-address');
      const externalId = textFlag(flags, 'external-id', 128);
      const apiKey = required(flags, 'api-key');
      const policyOverrideReason = overrideReason(flags);
      const withdrawal = await withPlatform(io, config, async (p) => {
        const merchant = await merchantOf(p, apiKey);
        const result = await p.withdrawals.request({ merchantId: merchant.id, externalId, network: blockchain, currency: 'USDT', amountUnits, destinationAddress, callbackUrl: undefined, source: 'operator', policyOverrideReason });
        if (result.outcome === 'conflict' || result.outcome === 'replayed') throw new RefusedError(`merchant ${merchant.name} already has a withdrawal with external id ${externalId}`);
        if (result.outcome === 'refused' && result.byPolicy) {
          throw new RefusedError(`the withdrawal was refused by merchant ${merchant.name}'s policy: ${refusalText(result.refusal)} (--override-policy --reason TEXT creates it anyway)`);
        }
        if (result.outcome === 'refused') throw new RefusedError(`the withdrawal was refused: ${refusalText(result.refusal)}`);
        return toWithdrawal(result.row);
      });
      const overridden = policyOverrideReason === undefined ? '' : ` past the merchant's policy (${JSON.stringify(policyOverrideReason)}, recorded)`;
      print(io, flags, withdrawal, `withdrawal ${withdrawal.uuid} created${overridden} (${withdrawal.status}, ${withdrawal.stage}): ${withdrawal.amount} USDT + fee ${withdrawal.fee} USDT held`);
    },
  },
  {
    words: ['withdrawals', 'set-status'],
    summary: "settles a queued withdrawal by the operator's word: DONE with the transaction that paid it (its hold spent; in live mode only --without-proof, else record-tx) or FAILED (its hold back in the balance)",
    flags: {
      uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true },
      status: { value: 'DONE|FAILED', description: 'the new status', required: true },
      'tx-id': { value: 'HASH', description: 'with DONE: the chain transaction that paid it (0x + 64 hex on Ethereum, 64 hex on Tron); required in live mode, made up when not given in the sandbox' },
      'without-proof': { description: 'with DONE and --tx-id in live mode: no chain checks it (recorded on the withdrawal, listed by ledger check)' },
      reason: { value: 'TEXT', description: 'with FAILED: why, as the merchant reads it (default "Failed by the operator.")' },
      json: JSON_FLAG,
    },
    example: 'partner-api withdrawals set-status --uuid 6f1c… --status FAILED --reason "Destination not verified."',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const uuid = uuidFlag(flags);
      const status = required(flags, 'status');
      if (status === 'PENDING') throw new UsageError('--status PENDING: every withdrawal starts PENDING and never goes back to it; give DONE or FAILED');
      if (status !== 'DONE' && status !== 'FAILED') throw new UsageError('--status must be DONE or FAILED');
      const txId = flags['tx-id'] === undefined ? undefined : required(flags, 'tx-id').toLowerCase();
      if (txId !== undefined && (status !== 'DONE' || !/^(0x)?[0-9a-f]{64}$/.test(txId))) throw new UsageError('--tx-id goes with --status DONE: 0x + 64 hex (Ethereum) or 64 hex (Tron)');
      if (flags.reason !== undefined && status !== 'FAILED') throw new UsageError('--reason goes with --status FAILED');
      if (flags['without-proof'] && status !== 'DONE') throw new UsageError('--without-proof goes with --status DONE');
      // In live mode DONE is the chain's to say (a payout job checks it): the operator's word alone only when said so, naming its transaction.
      if (status === 'DONE' && config.mode === 'live' && !flags['without-proof']) {
        throw new RefusedError(`in live mode a withdrawal is DONE once the chain confirms its payment: record the payment with partner-api withdrawals record-tx --uuid ${uuid} --tx-id HASH, or say --without-proof --tx-id HASH (recorded on it)`);
      }
      if (status === 'DONE' && config.mode === 'live' && txId === undefined) throw new UsageError('--without-proof needs --tx-id HASH: a DONE withdrawal names the transaction that paid it');
      const move: WithdrawalMove = status === 'DONE' ? { to: 'DONE', txId, withoutProof: Boolean(flags['without-proof']) } : { to: 'FAILED', reason: reasonFlag(flags, 'Failed by the operator.') };
      const withdrawal = await withPlatform(io, config, (p) => movedWithdrawal(p, uuid, move));
      const how = flags['without-proof'] ? ' (no chain checked it: recorded)' : txId === undefined ? ' (made up by the sandbox)' : '';
      print(io, flags, withdrawal, `withdrawal ${uuid} is ${withdrawal.status}${status === 'DONE' ? `: its hold is spent, its txId ${withdrawal.txId}${how}` : ': its hold is back in the balance'}`);
    },
  },
  {
    words: ['withdrawals', 'list'],
    summary: 'lists withdrawals, newest first, by stage, status, merchant and network, with what only the operator sees (CSV, or JSON)',
    flags: {
      stage: { value: STAGES.join('|'), description: "only PENDING ones at this stage (the contract's: one claimed for hand payment is queued)" },
      status: { value: STATUSES.join('|'), description: 'only those with this status' },
      merchant: { value: 'MERCHANT_ID', description: "only this merchant's: its id, as the merchantId column shows it" },
      blockchain: blockchainFlag("only this network's"),
      limit: { value: 'N', description: 'at most N, newest first (1 to 10000, default 100)' },
      json: { description: 'print JSON instead of CSV' },
    },
    example: 'partner-api withdrawals list --stage awaiting_approval --blockchain Tron',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const stage = oneOf(flags, 'stage', STAGES);
      const status = oneOf(flags, 'status', STATUSES);
      const network = flags.blockchain === undefined ? undefined : networkFlag(flags, 'blockchain');
      const limit = limitFlag(flags);
      const merchantId = merchantIdFlag(flags);
      const rows = await withPlatform(io, config, (p) => listWithdrawals(p.db, { stage, status, network, limit, merchantId }));
      const shown = rows.map((w) => ({
        ...commonColumns(w),
        status: w.status,
        fee: formatDecimalUnits(w.fee),
        failureReason: w.failure_reason,
        settledWithoutProof: w.settled_without_proof,
        policyOverrideReason: w.policy_override_reason,
      }));
      printRows(io, flags, LIST_HEADER, shown);
    },
  },
  {
    words: ['withdrawals', 'pending'],
    summary: 'lists the PENDING withdrawals a person must act on, oldest first, each with what it awaits: approval, payment, funds, hand_payment or confirmation (CSV, or JSON)',
    flags: {
      blockchain: blockchainFlag("only this network's"),
      'in-flight-over': { value: 'DURATION', description: `a payout out longer than this awaits a look (default ${IN_FLIGHT_REPLACEMENTS} × PAYOUT_REPLACE_AFTER_SECONDS: 30m at its default), e.g. 90s, 30m, 24h` },
      json: { description: 'print JSON instead of CSV' },
    },
    example: 'partner-api withdrawals pending --blockchain Tron > to-act-on.csv',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const network = flags.blockchain === undefined ? undefined : networkFlag(flags, 'blockchain');
      const given = flags['in-flight-over'] === undefined ? undefined : durationFlag(flags, 'in-flight-over', 0, 7 * 86_400);
      // Ten fee replacements on Ethereum, and past a Tron payout's default expiration and rebuild: a payout out this long is stuck, not slow.
      const rows = await withPlatform(io, config, (p) => awaitingAPerson(p, network, given ?? IN_FLIGHT_REPLACEMENTS * p.config.payouts.replaceAfterSeconds));
      const shown = rows.map((w) => ({ ...commonColumns(w), awaits: w.awaits, sentAt: apiTime(w.sentAt) }));
      printRows(io, flags, PENDING_HEADER, shown);
    },
  },
  {
    words: ['withdrawals', 'claim'],
    summary: "takes a queued withdrawal off the hot wallet's hands to pay it by hand: no payer pays it (refused once a payout of it is out); the merchant still reads queued",
    flags: { uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true }, json: JSON_FLAG },
    example: 'partner-api withdrawals claim --uuid 6f1c…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const uuid = uuidFlag(flags);
      const claimedAt = await changeClaim(io, config, uuid, true);
      print(io, flags, { uuid, claimedAt: apiTime(claimedAt) }, `withdrawal ${uuid} is claimed for hand payment: no payer pays it; pay it, then partner-api withdrawals record-tx --uuid ${uuid} --tx-id HASH (or give it back: withdrawals unclaim)`);
    },
  },
  {
    words: ['withdrawals', 'unclaim'],
    summary: "gives a withdrawal claimed for hand payment back to the network's payer (refused while a recorded payment of it is out)",
    flags: { uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true }, json: JSON_FLAG },
    example: 'partner-api withdrawals unclaim --uuid 6f1c…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const uuid = uuidFlag(flags);
      await changeClaim(io, config, uuid, false);
      print(io, flags, { uuid, claimedAt: null }, `withdrawal ${uuid} is given back: the hot wallet pays it, where one pays its network`);
    },
  },
  {
    words: ['withdrawals', 'record-tx'],
    summary: "records the operator's payment of a queued withdrawal (claimed first where a hot wallet pays its network): the chain is then checked as for the platform's own payouts, and it is DONE once confirmed",
    flags: {
      uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true },
      'tx-id': { value: 'HASH', description: 'the transaction that paid it: 0x + 64 hex on Ethereum, 64 hex on Tron', required: true },
      json: JSON_FLAG,
    },
    example: 'partner-api withdrawals record-tx --uuid 6f1c… --tx-id 0x5c50…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const uuid = uuidFlag(flags);
      const txId = required(flags, 'tx-id').toLowerCase();
      const withdrawal = await withPlatform(io, config, async (p) => {
        const row = await p.withdrawals.row(uuid);
        if (!row) throw new RefusedError(`no withdrawal ${uuid}`);
        const problem = txIdProblem(row.blockchain, txId);
        if (problem) throw new UsageError(`--tx-id ${problem}`);
        // Only where a payout job reads the network's chain: nothing would ever check it otherwise.
        const checked = row.blockchain === 'Ethereum' ? p.config.networks.Ethereum.chain !== undefined : p.config.payouts.tronApiUrl !== undefined;
        if (!checked) throw new RefusedError(`nothing checks ${row.blockchain}'s chain here (${row.blockchain === 'Ethereum' ? 'ETHEREUM_RPC_URL' : 'TRON_API_URL'} is not set): set it, or use withdrawals set-status --status DONE --without-proof`);
        // In live mode a hot wallet's payer could pay this one too between the hand payment and this record:
        // claimed first. Whether one pays is the server's settings, not this command's (on PostgreSQL it runs
        // in the operator's shell, without the key files): live mode is enough to ask for the claim.
        const recorded = await recordOperatorPayment(p.db, { uuid, network: row.blockchain }, txId, { claimRequired: p.config.mode === 'live' });
        if (recorded === 'unclaimed') {
          throw new RefusedError(`withdrawal ${uuid} is not claimed for hand payment, and in live mode a hot wallet may pay ${row.blockchain}: claim it first (partner-api withdrawals claim --uuid ${uuid}), else the payer may pay it too`);
        }
        if (recorded === 'used') throw new RefusedError(`transaction ${txId} is recorded for a payout already`);
        if (recorded === 'refused') throw new RefusedError(`withdrawal ${uuid} cannot be recorded as paid: ${row.status !== 'PENDING' ? `it is ${row.status}, which is final` : `it is ${row.stage}, not queued`}`);
        return (await p.withdrawals.row(uuid))!;
      });
      print(io, flags, toWithdrawal(withdrawal), `withdrawal ${uuid} is sent: DONE once the chain confirms that ${txId} pays exactly ${formatDecimalUnits(withdrawal.amount_units)} USDT to ${withdrawal.destination_address}`);
    },
  },
  {
    words: ['withdrawals', 'approve'],
    summary: 'approves a withdrawal that awaits approval (above the merchant\'s --approve-above): it is queued to be paid',
    flags: { uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true }, json: JSON_FLAG },
    example: 'partner-api withdrawals approve --uuid 6f1c…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const uuid = uuidFlag(flags);
      const withdrawal = await withPlatform(io, config, (p) => movedWithdrawal(p, uuid, { to: 'approved' }));
      print(io, flags, withdrawal, `withdrawal ${uuid} is approved: ${withdrawal.status}, ${withdrawal.stage}`);
    },
  },
  {
    words: ['withdrawals', 'reject'],
    summary: 'rejects a PENDING withdrawal: it is FAILED and its hold is back in the merchant\'s balance',
    flags: {
      uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true },
      reason: { value: 'TEXT', description: 'why, as the merchant reads it (default "Rejected by the operator.")' },
      json: JSON_FLAG,
    },
    example: 'partner-api withdrawals reject --uuid 6f1c… --reason "Destination not verified."',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const uuid = uuidFlag(flags);
      const withdrawal = await withPlatform(io, config, (p) => movedWithdrawal(p, uuid, { to: 'FAILED', reason: reasonFlag(flags, 'Rejected by the operator.') }));
      print(io, flags, withdrawal, `withdrawal ${uuid} is rejected: FAILED, its hold is back in the balance`);
    },
  },
];
