// The operator's withdrawal commands: create one, list what awaits a person, approve, reject, record a
// payment made by hand, settle by the operator's word.
import { formatDecimalUnits } from '../shared/money.js';
import type { Refusal } from '../withdrawals/requests.js';
import type { WithdrawalMove } from '../withdrawals/settlement.js';
import { toWithdrawal } from '../withdrawals/withdrawal-rows.js';
import { recordOperatorPayment } from '../payouts/payout-store.js';
import { payableWithdrawals } from '../withdrawals/payout-queue.js';
import type { Withdrawal } from '../../../generated/schema.js';
import { NETWORK_VALUE, networkFlag, required, textFlag, type Flags } from './flags.js';
import type { Config } from '../config.js';
import { RefusedError, UsageError } from './errors.js';
import { JSON_FLAG, blockchainFlag, print, withPlatform, merchantOf, uuidFlag, amountFlag, type Command, type Io } from './command.js';

/** --reason: what the merchant reads as failureReason, 1 to 500 characters without control characters. */
function reasonFlag(flags: Flags, fallback: string): string {
  if (flags.reason === undefined) return fallback;
  const reason = required(flags, 'reason');
  if (reason.length > 500 || /[\u0000-\u001F\u007F]/.test(reason)) throw new UsageError('--reason must be 1 to 500 characters without control characters');
  return reason;
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
      return `the network is halted since ${refusal.haltedAt.toISOString()} after a deep reorg: resume it first (partner-api chain resume)`;
  }
}

/** Moves a withdrawal for the operator; a refusal names why. */
async function movedWithdrawal(io: Io, config: Config, uuid: string, move: WithdrawalMove): Promise<Withdrawal> {
  const result = await withPlatform(io, config, (p) => p.withdrawals.move(uuid, move));
  if (result === undefined) throw new RefusedError(`no withdrawal ${uuid}`);
  if ('refused' in result) throw new RefusedError(`withdrawal ${uuid} cannot be ${move.to === 'approved' ? 'approved' : `moved to ${move.to}`}: ${result.refused}`);
  return result;
}

export const WITHDRAWAL_COMMANDS: Command[] = [
  {
    words: ['withdrawals', 'create'],
    summary: "records a merchant's withdrawal, its amount plus the network's fee held from the merchant's balance (the operator pays it out, then sets its status)",
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      'external-id': { value: 'ID', description: "the merchant's id of the withdrawal, 1 to 128 characters, unique per merchant", required: true },
      amount: { value: 'AMOUNT', description: 'whole USDT with at most 6 decimals, e.g. 12.5', required: true },
      blockchain: { value: NETWORK_VALUE, description: 'the network', required: true },
      'destination-address': { value: 'ADDR', description: 'the address paid to, on that network', required: true },
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
      const withdrawal = await withPlatform(io, config, async (p) => {
        const merchant = await merchantOf(p, apiKey);
        const result = await p.withdrawals.request({ merchantId: merchant.id, externalId, network: blockchain, currency: 'USDT', amountUnits, destinationAddress, callbackUrl: undefined, source: 'operator' });
        if (result.outcome === 'conflict' || result.outcome === 'replayed') throw new RefusedError(`merchant ${merchant.name} already has a withdrawal with external id ${externalId}`);
        if (result.outcome === 'refused') throw new RefusedError(`the withdrawal was refused: ${refusalText(result.refusal)}`);
        return toWithdrawal(result.row);
      });
      print(io, flags, withdrawal, `withdrawal ${withdrawal.uuid} created (${withdrawal.status}, ${withdrawal.stage}): ${withdrawal.amount} USDT + fee ${withdrawal.fee} USDT held`);
    },
  },
  {
    words: ['withdrawals', 'set-status'],
    summary: 'settles a queued withdrawal by the operator\'s word: DONE (its hold spent; in live mode only --without-proof, else record-tx) or FAILED (its hold back in the balance)',
    flags: {
      uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true },
      status: { value: 'DONE|FAILED', description: 'the new status', required: true },
      'tx-id': { value: 'HASH', description: 'with DONE: the chain transaction that paid it (0x + 64 hex on Ethereum, 64 hex on Tron)' },
      'without-proof': { description: 'with DONE in live mode: no chain checks it (recorded on the withdrawal, listed by ledger check)' },
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
      const txId = flags['tx-id'] === undefined ? undefined : required(flags, 'tx-id');
      if (txId !== undefined && (status !== 'DONE' || !/^(0x)?[0-9a-fA-F]{64}$/.test(txId))) throw new UsageError('--tx-id goes with --status DONE: 0x + 64 hex (Ethereum) or 64 hex (Tron)');
      if (flags.reason !== undefined && status !== 'FAILED') throw new UsageError('--reason goes with --status FAILED');
      if (flags['without-proof'] && status !== 'DONE') throw new UsageError('--without-proof goes with --status DONE');
      // In live mode DONE is the chain's to say (a payout job checks it): the operator's word alone only when said so.
      if (status === 'DONE' && config.mode === 'live' && !flags['without-proof']) {
        throw new RefusedError(`in live mode a withdrawal is DONE once the chain confirms its payment: record the payment with partner-api withdrawals record-tx --uuid ${uuid} --tx-id HASH, or say --without-proof (recorded on it)`);
      }
      const move = status === 'DONE' ? { to: 'DONE' as const, txId: txId?.toLowerCase(), withoutProof: Boolean(flags['without-proof']) } : { to: 'FAILED' as const, reason: reasonFlag(flags, 'Failed by the operator.') };
      const withdrawal = await movedWithdrawal(io, config, uuid, move);
      print(io, flags, withdrawal, `withdrawal ${uuid} is ${withdrawal.status}${status === 'DONE' ? `: its hold is spent${flags['without-proof'] ? ' (no chain checked it: recorded)' : ''}` : ': its hold is back in the balance'}`);
    },
  },
  {
    words: ['withdrawals', 'pending'],
    summary: 'lists the queued withdrawals, oldest first: what to pay by hand (CSV, or JSON)',
    flags: {
      blockchain: blockchainFlag("only this network's"),
      json: { description: 'print JSON instead of CSV' },
    },
    example: 'partner-api withdrawals pending --blockchain Tron > to-pay.csv',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const network = flags.blockchain === undefined ? undefined : networkFlag(flags, 'blockchain');
      const rows = await withPlatform(io, config, (p) => payableWithdrawals(p.db, network));
      const shown = rows.map((w) => ({
        uuid: w.uuid,
        network: w.network,
        destinationAddress: w.destination_address,
        amount: formatDecimalUnits(w.amount),
        merchantId: w.merchant_id,
        externalId: w.external_id,
        createdAt: w.created_at.toISOString(),
        waitingForFundsSince: w.funds_awaited_since?.toISOString() ?? null,
      }));
      if (flags.json) return void io.stdout.write(JSON.stringify(shown, null, 2) + '\n');
      const csv = (value: string | null) => (value === null ? '' : /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
      const lines = [Object.keys(shown[0] ?? { uuid: '', network: '', destinationAddress: '', amount: '', merchantId: '', externalId: '', createdAt: '', waitingForFundsSince: '' }).join(','), ...shown.map((w) => Object.values(w).map(csv).join(','))];
      io.stdout.write(lines.join('\r\n') + '\r\n');
    },
  },
  {
    words: ['withdrawals', 'record-tx'],
    summary: "records the operator's payment of a queued withdrawal: the chain is then checked as for the platform's own payouts, and it is DONE once confirmed",
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
        const shape = row.blockchain === 'Ethereum' ? /^0x[0-9a-f]{64}$/ : /^[0-9a-f]{64}$/;
        if (!shape.test(txId)) throw new UsageError(`--tx-id must be a ${row.blockchain} transaction id: ${row.blockchain === 'Ethereum' ? '0x + 64 hex' : '64 hex, no 0x'}`);
        // Only where a payout job reads the network's chain: nothing would ever check it otherwise.
        const checked = row.blockchain === 'Ethereum' ? p.config.networks.Ethereum.chain !== undefined : p.config.payouts.tronApiUrl !== undefined;
        if (!checked) throw new RefusedError(`nothing checks ${row.blockchain}'s chain here (${row.blockchain === 'Ethereum' ? 'ETHEREUM_RPC_URL' : 'TRON_API_URL'} is not set): set it, or use withdrawals set-status --status DONE --without-proof`);
        const recorded = await recordOperatorPayment(p.db, { uuid, network: row.blockchain }, txId);
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
      const withdrawal = await movedWithdrawal(io, config, uuid, { to: 'approved' });
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
      const withdrawal = await movedWithdrawal(io, config, uuid, { to: 'FAILED', reason: reasonFlag(flags, 'Rejected by the operator.') });
      print(io, flags, withdrawal, `withdrawal ${uuid} is rejected: FAILED, its hold is back in the balance`);
    },
  },
];
