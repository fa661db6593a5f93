// The operator's commands of `partner-api`, one entry each: its words, its own flags, an example and
// what it runs. Adding a command or a flag is an edit here; parsing, help and errors are in ../cli.ts.
import { canonicalAddress, payableAddressProblem } from '../addresses/derivation.js';
import { DELIVERY_STATES, listCallbacks, type DeliveryState } from '../callbacks/history.js';
import { CallbackInFlightError, NoCallbackError, redeliverCallback } from '../callbacks/redelivery.js';
import { formatCallback } from './callback-format.js';
import { addressesExport, exportFilters } from './address-export.js';
import { chainResumeCommand, depositsRescanCommand } from './chain-commands.js';
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { isDataDirectory } from '../db/data-directory.js';
import { isUuid } from '../shared/uuid.js';
import { formatDecimalUnits, parseDecimalUnits } from '../shared/money.js';
import type { Platform } from '../platform.js';
import type { CommandIo } from '../process/serve.js';
import { DuplicateMerchantNameError, MAX_GRACE_SECONDS } from '../merchants/merchants.js';
import { platformDateTime } from '../shared/time.js';
import { checkLedger } from '../ledger/ledger.js';
import { changePolicy, type PolicyChange } from '../withdrawals/policy.js';
import { MAX_WITHDRAWAL_UNITS, type Refusal } from '../withdrawals/requests.js';
import type { WithdrawalMove } from '../withdrawals/settlement.js';
import { toWithdrawal } from '../withdrawals/withdrawal-rows.js';
import { inFlightWithoutLiveTransaction, recordOperatorPayment } from '../payouts/payout-store.js';
import { payableWithdrawals, settledWithoutProof } from '../withdrawals/payout-queue.js';
import type { Withdrawal } from '../../../generated/schema.js';
import { RefusedError, UsageError } from './errors.js';
import { durationFlag, NETWORK_VALUE, networkFlag, required, textFlag, type Flags } from './flags.js';

export interface FlagSpec {
  /** The value's placeholder (`NAME`); absent for a switch such as --json. */
  value?: string;
  description: string;
  required?: boolean;
  /** The flag may be given several times (its value is then a list). */
  multiple?: boolean;
  /**
   * An older spelling still accepted, with a note on stderr, so that scripts written before keep working
   * (`--network` for `--blockchain`, issue 48: the contract's word). Help shows the new spelling only.
   */
  oldSpelling?: string;
}

/** What a command reads its settings from and writes to: the process's own (../cli.ts main), or a test's. */
export interface Io extends Omit<CommandIo, 'platform'> {
  /** The running platform that runs the command for an operator (serve's operator socket). */
  platform?: Platform;
  /** Runs another command line with its own output: serve runs the operators' commands with it. */
  runCommand?: (argv: string[], io: Io) => Promise<number>;
}

export interface Command {
  /** The words that name it, e.g. ['merchants', 'create']. */
  words: string[];
  summary: string;
  flags: Record<string, FlagSpec>;
  example: string;
  /**
   * Whether a running platform on the embedded database runs it for an operator (its operator socket,
   * process/operator-socket.ts): every command that changes or reads the platform's data does; `serve`
   * never (sent there, it started a second platform inside the running one).
   */
  runByRunningPlatform: boolean;
  run(flags: Flags, config: Config, io: Io): Promise<void>;
}

const JSON_FLAG: FlagSpec = { description: 'print the result as JSON' };

/** A command's network, `--blockchain` as the contract names it; `--network`, its spelling before issue 48, still works. */
const blockchainFlag = (description: string): FlagSpec => ({ value: NETWORK_VALUE, description, oldSpelling: 'network' });

/** How long a rotation's old secrets keep working unless told (as Stripe's webhook secrets). */
const DEFAULT_GRACE_SECONDS = 24 * 3600;
/** The merchant cache of every instance (http/authentication.ts): an ended grace period is over everywhere within it. */
const CACHE_BOUND_SECONDS = 30;

function workerCount(flags: Flags): number {
  if (flags.workers === undefined) return 1;
  const count = Number(flags.workers);
  if (typeof flags.workers !== 'string' || !/^\d+$/.test(flags.workers) || count < 1 || count > 64) throw new UsageError('--workers must be a whole number from 1 to 64');
  return count;
}

/** --display-name: what payers read on the payment page, so 1 to 100 characters without control characters. */
const displayNameFlag = (flags: Flags) => textFlag(flags, 'display-name', 100);

function print(io: Io, flags: Flags, value: unknown, text: string) {
  io.stdout.write(flags.json ? JSON.stringify(value, null, 2) + '\n' : text + '\n');
}

function printCredentials(io: Io, flags: Flags, credentials: object) {
  print(io, flags, credentials, Object.entries(credentials).map(([k, v]) => `${k}: ${v}`).join('\n'));
}

// The platform and the server are imported when a command runs, not with this table: help, the version
// and usage errors then take under half the CPU (0.28 CPU-s instead of 0.65; ../cli.ts).
async function withPlatform<T>(io: Io, config: Config, work: (platform: Platform) => Promise<T>): Promise<T> {
  // Run by the platform itself for an operator (process/operator-socket.ts): its own, already open.
  if (io.platform) return work(io.platform);
  refuseSilentNewDatabase(io, config);
  const { openPlatform } = await import('../platform.js');
  const platform = await openPlatform(config, { logger: false });
  try {
    return await work(platform);
  } finally {
    await platform.close();
  }
}

/**
 * A command never makes a database without saying so (issue 49): without DATA_DIR, and with no data
 * directory here or above (cli.ts, locateDataDirectory), it is refused, since the database it would
 * create is not the one any platform uses; with DATA_DIR naming a directory without one, it says that it
 * creates one. `serve` creates its database as it always did (`./data` by default).
 */
function refuseSilentNewDatabase(io: Io, config: Config): void {
  if (config.databaseUrl || isDataDirectory(config.dataDir)) return;
  const where = resolve(config.dataDir);
  if (!config.dataDirGiven) {
    throw new RefusedError(
      `no platform data directory in ${process.cwd()} or above it (a data/ holding partner-api.lock): this command would create a new, empty database in ${where}; ` +
        'run it in the folder where the platform runs (npm start\'s), or choose the directory with --data-dir DIR (or DATA_DIR)',
    );
  }
  io.stderr.write(`partner-api: DATA_DIR ${config.dataDir} holds no database yet: creating a new, empty one in ${where}\n`);
}

/** A command that opens the platform, asks `handler` for a result, and prints it (as JSON with --json). */
function printedResult(handler: (platform: Platform, flags: Flags) => Promise<{ value: unknown; text: string }>) {
  return async (flags: Flags, config: Config, io: Io) => {
    const { value, text } = await withPlatform(io, config, (platform) => handler(platform, flags));
    print(io, flags, value, text);
  };
}

/** The merchant of an API key, or a refusal naming the key. */
async function merchantOf(platform: Platform, apiKey: string) {
  const merchant = await platform.merchants.byApiKey(apiKey);
  if (!merchant) throw new RefusedError(`no merchant has the API key ${apiKey}`);
  return merchant;
}

function uuidFlag(flags: Flags): string {
  const uuid = required(flags, 'uuid');
  if (!isUuid(uuid)) throw new UsageError('--uuid must be a withdrawal uuid');
  return uuid;
}

/** An amount of whole USDT (`12.5`): positive, at most 6 decimals, at most the contract's largest withdrawal. */
function amountFlag(flags: Flags, name: string): bigint {
  const units = parseDecimalUnits(required(flags, name));
  if (units === undefined || units === 0n || units > MAX_WITHDRAWAL_UNITS) {
    throw new UsageError(`--${name} must be a positive decimal of whole USDT up to ${formatDecimalUnits(MAX_WITHDRAWAL_UNITS)} with at most 6 decimals, e.g. 12.5`);
  }
  return units;
}

/** A limit's flag: an amount, `none` to remove the limit, or undefined when not given. */
function limitFlag(flags: Flags, name: string): bigint | null | undefined {
  if (flags[name] === undefined) return undefined;
  return flags[name] === 'none' ? null : amountFlag(flags, name);
}

/** --reason: what the merchant reads as failureReason, 1 to 500 characters without control characters. */
function reasonFlag(flags: Flags, fallback: string): string {
  if (flags.reason === undefined) return fallback;
  const reason = required(flags, 'reason');
  if (reason.length > 500 || /[\u0000-\u001F\u007F]/.test(reason)) throw new UsageError('--reason must be 1 to 500 characters without control characters');
  return reason;
}

/** merchants set-withdrawals' flags as a change of the policy; at least one must be given. */
function policyChange(flags: Flags): PolicyChange {
  if (flags.enabled && flags.disabled) throw new UsageError('give --enabled or --disabled, not both');
  const change: PolicyChange = {};
  if (flags.enabled || flags.disabled) change.enabled = Boolean(flags.enabled);
  const maxAmount = limitFlag(flags, 'max-amount');
  const dailyLimit = limitFlag(flags, 'daily-limit');
  const approveAbove = limitFlag(flags, 'approve-above');
  if (maxAmount !== undefined) change.maxAmount = maxAmount;
  if (dailyLimit !== undefined) change.dailyLimit = dailyLimit;
  if (approveAbove !== undefined) change.approveAbove = approveAbove;
  const addresses = flags['allow-address'];
  if (Array.isArray(addresses)) {
    change.allowedAddresses = addresses.includes('any') ? [] : addresses.map(allowedAddress);
    if (addresses.includes('any') && addresses.length > 1) throw new UsageError('--allow-address any allows every destination: give it alone');
  }
  if (Object.keys(change).length === 0) throw new UsageError('give at least one of --enabled, --disabled, --max-amount, --daily-limit, --allow-address, --approve-above');
  return change;
}

/** An allowed destination, on either network, in the form the platform compares (EIP-55 on Ethereum). */
function allowedAddress(address: string): string {
  const network = address.startsWith('0x') ? 'Ethereum' : 'Tron';
  const problem = payableAddressProblem(network, address);
  if (problem) throw new UsageError(`--allow-address ${address} ${problem}`);
  return canonicalAddress(network, address);
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

export const COMMANDS: Command[] = [
  {
    words: ['serve'],
    summary: 'runs the platform: the HTTP API, the docs, and the deposit scanners, callback dispatcher and expiry job',
    flags: { workers: { value: 'N', description: 'processes serving the port, 1 to 64 (default 1); more than 1 needs DATABASE_URL' } },
    example: 'partner-api serve --mode sandbox --port 8080',
    runByRunningPlatform: false,
    async run(flags, config, io) {
      const workers = workerCount(flags);
      const { serve } = await import('../process/serve.js');
      await serve(config, workers, io.runCommand);
    },
  },
  {
    words: ['merchants', 'create'],
    summary: "creates a merchant and prints its API key, API secret and callback secret (shown once)",
    flags: {
      name: { value: 'NAME', description: "the merchant's name, 1 to 200 characters", required: true },
      'display-name': { value: 'TEXT', description: 'the name payers see on the payment page, 1 to 100 characters (none shown without it)' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants create --name "Acme Shop" --display-name "Acme" --json',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const name = textFlag(flags, 'name', 200);
      const displayName = flags['display-name'] === undefined ? undefined : displayNameFlag(flags);
      const created = await withPlatform(io, config, (p) => p.merchants.create(name, displayName, { uniqueName: true })).catch((error: unknown) => {
        if (!(error instanceof DuplicateMerchantNameError)) throw error;
        throw new RefusedError(`a merchant named ${JSON.stringify(name)} exists (API key ${error.apiKey}): names tell merchants apart in reports and logs; choose another --name`);
      });
      printCredentials(io, flags, created);
    },
  },
  {
    words: ['merchants', 'set-display-name'],
    summary: 'sets the name payers see on the payment page of a merchant\'s orders (or removes it with --clear)',
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      'display-name': { value: 'TEXT', description: 'the name payers see, 1 to 100 characters' },
      clear: { description: 'show no name' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants set-display-name --api-key pk_test_… --display-name "Acme"',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      if ((flags['display-name'] === undefined) === !flags.clear) throw new UsageError('give either --display-name or --clear');
      const displayName = flags.clear ? null : displayNameFlag(flags);
      const merchant = await withPlatform(io, config, (p) => p.merchants.setDisplayName(apiKey, displayName));
      if (!merchant) throw new RefusedError(`no merchant has the API key ${apiKey}`);
      print(io, flags, merchant, `name: ${merchant.name}\ndisplayName: ${merchant.displayName ?? '(none)'}`);
    },
  },
  {
    words: ['merchants', 'rotate-secrets'],
    summary: 'gives a merchant a new API secret and callback secret (printed once), working at once; the old ones keep working for the grace period',
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      grace: { value: 'DURATION', description: 'how long the old secrets keep working: 0 (not at all: a leak) to 7d, e.g. 90s, 30m, 24h (default 24h); callbacks carry both signatures meanwhile' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants rotate-secrets --api-key pk_test_… --grace 24h --json',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      const grace = durationFlag(flags, 'grace', DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS);
      const credentials = await withPlatform(io, config, (p) => p.merchants.rotateSecrets(apiKey, grace));
      if (!credentials) throw new RefusedError(`no merchant has the API key ${apiKey}`);
      const until = credentials.previousSecretsValidUntil;
      printCredentials(io, flags, { ...credentials, previousSecretsValidUntil: until && platformDateTime(new Date(until)) });
    },
  },
  {
    words: ['merchants', 'end-grace'],
    summary: "ends a rotation's grace period now (an old secret leaked): only the current secrets work from here on",
    flags: { 'api-key': { value: 'KEY', description: "the merchant's API key", required: true }, json: JSON_FLAG },
    example: 'partner-api merchants end-grace --api-key pk_test_…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      const result = await withPlatform(io, config, (p) => p.merchants.endGrace(apiKey));
      if (!result) throw new RefusedError(`no merchant has the API key ${apiKey}`);
      // The embedded database is one process's: the platform that ran this (or none) is the only
      // instance, and it forgot the merchant as the grace ended. On PostgreSQL, other instances keep a
      // merchant they read for up to 30 s.
      const everywhereBy = config.databaseUrl ? platformDateTime(new Date(Date.now() + CACHE_BOUND_SECONDS * 1000)) : undefined;
      const text = !result.ended
        ? `merchant ${result.name} had no grace period running: only its current secrets work`
        : everywhereBy
          ? `the old secrets of merchant ${result.name} are refused from now on by this database; instances that read the merchant before keep accepting them until ${everywhereBy} UTC at the latest (their ${CACHE_BOUND_SECONDS} s cache)`
          : `the old secrets of merchant ${result.name} are refused from now on`;
      print(io, flags, { name: result.name, apiKey, graceEnded: result.ended, ...(result.ended ? { refusedEverywhereBy: everywhereBy ?? platformDateTime(new Date()) } : {}) }, text);
    },
  },
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
  {
    words: ['merchants', 'set-withdrawals'],
    summary: "sets what a merchant may withdraw through the API: on or off (live mode: off until turned on), limits, allowed destinations, approval above an amount",
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      enabled: { description: 'allow withdrawals through the API' },
      disabled: { description: 'refuse withdrawals through the API (422 withdrawals_disabled)' },
      'max-amount': { value: 'AMOUNT', description: 'the largest withdrawal, whole USDT (e.g. 500), or none' },
      'daily-limit': { value: 'AMOUNT', description: 'the most its withdrawals may add up to in any 24 hours, whole USDT, or none' },
      'allow-address': { value: 'ADDR', description: 'allow only these destinations (repeat it for each; replaces the list); any: every destination', multiple: true },
      'approve-above': { value: 'AMOUNT', description: 'a withdrawal of more than this waits for withdrawals approve (whole USDT), or none' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants set-withdrawals --api-key pk_live_… --enabled --max-amount 5000 --daily-limit 20000 --approve-above 1000',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      const change = policyChange(flags);
      const policy = await withPlatform(io, config, async (p) => changePolicy(p.db, (await merchantOf(p, apiKey)).id, change));
      const shown = {
        enabled: policy.enabled,
        maxAmount: policy.maxAmount === undefined ? null : formatDecimalUnits(policy.maxAmount),
        dailyLimit: policy.dailyLimit === undefined ? null : formatDecimalUnits(policy.dailyLimit),
        approveAbove: policy.approveAbove === undefined ? null : formatDecimalUnits(policy.approveAbove),
        allowedAddresses: policy.allowedAddresses,
      };
      const text = [
        `withdrawals through the API: ${policy.enabled ? 'enabled' : config.mode === 'sandbox' ? 'disabled (the sandbox allows them all the same)' : 'disabled'}`,
        `largest withdrawal: ${shown.maxAmount ?? 'no limit'}`,
        `daily limit: ${shown.dailyLimit ?? 'no limit'}`,
        `approval above: ${shown.approveAbove ?? 'none needed'}`,
        `destinations: ${policy.allowedAddresses.length ? policy.allowedAddresses.join(', ') : 'any'}`,
      ].join('\n');
      print(io, flags, shown, text);
    },
  },
  {
    words: ['ledger', 'check'],
    summary: "recomputes every merchant's balance from the ledger's entries and checks every deposit and withdrawal against them (exit 1 on a difference)",
    flags: { json: JSON_FLAG },
    example: 'partner-api ledger check --json',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const result = await withPlatform(io, config, async (p) => ({
        ...(await checkLedger(p.db)),
        withoutProof: await settledWithoutProof(p.db),
        outWithoutTransaction: await inFlightWithoutLiveTransaction(p.db),
      }));
      const text = [
        `${result.entries} entries, ${result.balances} balances: ${result.problems.length === 0 ? 'the books agree' : `${result.problems.length} difference(s)`}`,
        ...result.problems,
        // A payout out that no round follows: its hold would never end. Never made by the payers (a move and its marks are one transaction).
        ...(result.outWithoutTransaction.length ? [`${result.outWithoutTransaction.length} withdrawal(s) sent with no transaction that may still be mined, for the operator: ${result.outWithoutTransaction.join(', ')}`] : []),
        ...(result.unbooked.length ? [`${result.unbooked.length} withdrawal(s) from before the books, outside them: ${result.unbooked.join(', ')}`] : []),
        ...(result.withoutProof.length ? [`${result.withoutProof.length} withdrawal(s) DONE on the operator's word, no chain's proof: ${result.withoutProof.join(', ')}`] : []),
      ].join('\n');
      print(io, flags, result, text);
      if (result.problems.length > 0) throw new RefusedError(`the books disagree in ${result.problems.length} place(s)`);
      if (result.outWithoutTransaction.length > 0) throw new RefusedError(`${result.outWithoutTransaction.length} withdrawal(s) out with no live transaction`);
    },
  },
  {
    words: ['callbacks', 'list'],
    summary: 'lists callback events, newest first, with their delivery attempts',
    flags: {
      order: { value: 'UUID', description: "only this order's events" },
      withdrawal: { value: 'UUID', description: "only this withdrawal's events" },
      state: { value: DELIVERY_STATES.join('|'), description: 'only events in this state' },
      limit: { value: 'N', description: 'at most N events, 1 to 10000 (default 50)' },
      json: JSON_FLAG,
    },
    example: 'partner-api callbacks list --state failed --limit 20',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const state = flags.state as string | undefined;
      if (state !== undefined && !DELIVERY_STATES.includes(state as DeliveryState)) throw new UsageError(`--state must be one of ${DELIVERY_STATES.join(', ')}`);
      const order = flags.order as string | undefined;
      if (order !== undefined && !isUuid(order)) throw new UsageError('--order must be an order uuid');
      const withdrawal = flags.withdrawal as string | undefined;
      if (withdrawal !== undefined && !isUuid(withdrawal)) throw new UsageError('--withdrawal must be a withdrawal uuid');
      if (order !== undefined && withdrawal !== undefined) throw new UsageError('give --order or --withdrawal, not both');
      const limit = Number(flags.limit ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
      const events = await withPlatform(io, config, (p) => listCallbacks(p.db, { state: state as DeliveryState | undefined, subject: order ?? withdrawal, limit }));
      print(io, flags, events, events.map(formatCallback).join('\n') || 'no callbacks');
    },
  },
  {
    words: ['callbacks', 'redeliver'],
    summary: 'sends a callback event again, under the same webhook-id',
    flags: { 'webhook-id': { value: 'ID', description: "the event's webhook-id (see callbacks list)", required: true }, json: JSON_FLAG },
    example: 'partner-api callbacks redeliver --webhook-id msg_…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const webhookId = required(flags, 'webhook-id');
      const event = await withPlatform(io, config, (p) => redeliverCallback(p.db, webhookId)).catch((error: unknown) => {
        throw error instanceof CallbackInFlightError || error instanceof NoCallbackError ? new RefusedError(error.message) : error;
      });
      if (!event) throw new RefusedError(`no callback ${webhookId}`);
      print(io, flags, event, `callback ${webhookId} will be delivered again (same webhook-id)`);
    },
  },
  {
    words: ['deposits', 'rescan'],
    summary: "scans the chain for an order's address and credits what was missed, e.g. a payment after the watch window",
    flags: {
      order: { value: 'UUID', description: "the order's uuid", required: true },
      'from-block': { value: 'N', description: "the first block to scan (default: about the order's creation)" },
      json: JSON_FLAG,
    },
    example: 'partner-api deposits rescan --order 0b9a… --from-block 71000000',
    runByRunningPlatform: true,
    run: printedResult(depositsRescanCommand),
  },
  {
    words: ['addresses', 'export'],
    summary: 'lists every issued deposit address with its derivation path, merchant, order and credited total (CSV, or JSON), and each network\'s highest used index and largest gap',
    flags: {
      blockchain: blockchainFlag("only this network's addresses"),
      from: { value: 'DATE', description: 'only addresses issued at or after this date (2026-11-01, or 2026-11-01T12:00:00Z)' },
      to: { value: 'DATE', description: 'only addresses issued before this date' },
      json: { description: 'print JSON (the addresses and each network\'s indexes) instead of CSV' },
    },
    example: 'partner-api addresses export --blockchain Tron --from 2026-11-01 > tron-addresses.csv',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const filters = exportFilters(flags);
      const exported = await withPlatform(io, config, (p) => addressesExport(p, filters));
      if (flags.json) io.stdout.write(exported.json + '\n');
      else {
        io.stdout.write(exported.csv);
        io.stderr.write(exported.summary + '\n'); // beside the CSV, not in it
      }
    },
  },
  {
    words: ['chain', 'resume'],
    summary: 'resumes crediting and payouts on a network halted by a reorg deeper than its confirmations, after review; reverses the deposits the reorg removed',
    flags: {
      blockchain: { ...blockchainFlag('the halted network'), required: true },
      'from-block': { value: 'N', description: 'rescan from this block (the first block the reorg replaced)' },
      json: JSON_FLAG,
    },
    example: 'partner-api chain resume --blockchain Ethereum --from-block 21000000',
    runByRunningPlatform: true,
    run: printedResult(chainResumeCommand),
  },
];
