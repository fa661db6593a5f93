// The operator's commands of `partner-api`, one entry each: its words, its own flags, an example and
// what it runs. Adding a command or a flag is an edit here; parsing, help and errors are in ../cli.ts.
import { isAddress } from '../addresses/derivation.js';
import { CALLBACK_STATES, listCallbacks, type CallbackState } from '../callbacks/history.js';
import { CallbackInFlightError, redeliverCallback } from '../callbacks/redelivery.js';
import { formatCallback } from './callback-format.js';
import { addressesExport, exportFilters } from './address-export.js';
import { chainResumeCommand, depositsRescanCommand } from './chain-commands.js';
import type { Config } from '../config.js';
import { isUuid } from '../shared/uuid.js';
import { parseDecimalUnits } from '../shared/money.js';
import type { Platform } from '../platform.js';
import { MAX_GRACE_SECONDS } from '../merchants/merchants.js';
import { DuplicateWithdrawalError, WITHDRAWAL_STATUSES, type WithdrawalStatus } from '../withdrawals/withdrawals.js';
import { RefusedError, UsageError } from './errors.js';
import { durationFlag, NETWORK_VALUE, networkFlag, required, textFlag, type Flags } from './flags.js';

export interface FlagSpec {
  /** The value's placeholder (`NAME`); absent for a switch such as --json. */
  value?: string;
  description: string;
  required?: boolean;
}

/** What a command reads its settings from and writes to: the process's own (../cli.ts main), or a test's. */
export interface Io {
  env: Record<string, string | undefined>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
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

/** --display-name: what payers read on the page, so 1 to 100 characters without control characters. */
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
  const { openPlatform } = await import('../platform.js');
  const platform = await openPlatform(config, { logger: false });
  try {
    return await work(platform);
  } finally {
    await platform.close();
  }
}

/** A command that opens the platform, asks `handler` for a result, and prints it (as JSON with --json). */
function printedResult(handler: (platform: Platform, flags: Flags) => Promise<{ value: unknown; text: string }>) {
  return async (flags: Flags, config: Config, io: Io) => {
    const { value, text } = await withPlatform(io, config, (platform) => handler(platform, flags));
    print(io, flags, value, text);
  };
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
      printCredentials(io, flags, await withPlatform(io, config, (p) => p.merchants.create(name, displayName)));
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
      printCredentials(io, flags, credentials);
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
      const text = result.ended
        ? `the old secrets of merchant ${result.name} are refused from now on (by every instance within ${CACHE_BOUND_SECONDS} s)`
        : `merchant ${result.name} had no grace period running: only its current secrets work`;
      print(io, flags, { name: result.name, apiKey, graceEnded: result.ended }, text);
    },
  },
  {
    words: ['withdrawals', 'create'],
    summary: 'records a PENDING withdrawal of a merchant (the operator pays it out, then sets its status)',
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
      const amountUnits = parseDecimalUnits(required(flags, 'amount'));
      if (amountUnits === undefined || amountUnits === 0n || amountUnits > 1_000_000_000n * 1_000_000n) {
        throw new UsageError('--amount must be a positive decimal of whole USDT up to 1000000000 with at most 6 decimals, e.g. 12.5');
      }
      const blockchain = networkFlag(flags, 'blockchain');
      const toAddress = required(flags, 'destination-address');
      if (!isAddress(blockchain, toAddress)) throw new UsageError(`--destination-address is not a ${blockchain} address`);
      const externalId = textFlag(flags, 'external-id', 128);
      const apiKey = required(flags, 'api-key');
      const withdrawal = await withPlatform(io, config, async (p) => {
        const merchant = await p.merchants.byApiKey(apiKey);
        if (!merchant) throw new RefusedError(`no merchant has the API key ${apiKey}`);
        try {
          return await p.withdrawals.create({ merchantId: merchant.id, externalId, amountUnits, blockchain, toAddress });
        } catch (error) {
          if (error instanceof DuplicateWithdrawalError) throw new RefusedError(`merchant ${merchant.name} already has a withdrawal with external id ${externalId}`);
          throw error;
        }
      });
      print(io, flags, withdrawal, `withdrawal ${withdrawal.uuid} created (${withdrawal.status})`);
    },
  },
  {
    words: ['withdrawals', 'set-status'],
    summary: 'moves a withdrawal from PENDING to DONE or FAILED (final states never change)',
    flags: {
      uuid: { value: 'UUID', description: "the withdrawal's uuid", required: true },
      status: { value: WITHDRAWAL_STATUSES.join('|'), description: 'the new status', required: true },
      json: JSON_FLAG,
    },
    example: 'partner-api withdrawals set-status --uuid 6f1c… --status DONE',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const uuid = required(flags, 'uuid');
      const status = required(flags, 'status') as WithdrawalStatus;
      if (!WITHDRAWAL_STATUSES.includes(status)) throw new UsageError(`--status must be one of ${WITHDRAWAL_STATUSES.join(', ')}`);
      if (!isUuid(uuid)) throw new UsageError('--uuid must be a withdrawal uuid');
      const result = await withPlatform(io, config, (p) => p.withdrawals.setStatus(uuid, status));
      if (result === undefined) throw new RefusedError(`no withdrawal ${uuid}`);
      if (result === 'refused') throw new RefusedError(`withdrawal ${uuid} is final and cannot move to ${status}`);
      print(io, flags, result, `withdrawal ${uuid} is ${result.status}`);
    },
  },
  {
    words: ['callbacks', 'list'],
    summary: 'lists callback events, newest first, with their delivery attempts',
    flags: {
      order: { value: 'UUID', description: "only this order's events" },
      state: { value: CALLBACK_STATES.join('|'), description: 'only events in this state' },
      limit: { value: 'N', description: 'at most N events, 1 to 10000 (default 50)' },
      json: JSON_FLAG,
    },
    example: 'partner-api callbacks list --state failed --limit 20',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const state = flags.state as string | undefined;
      if (state !== undefined && !CALLBACK_STATES.includes(state as CallbackState)) throw new UsageError(`--state must be one of ${CALLBACK_STATES.join(', ')}`);
      const order = flags.order as string | undefined;
      if (order !== undefined && !isUuid(order)) throw new UsageError('--order must be an order uuid');
      const limit = Number(flags.limit ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
      const events = await withPlatform(io, config, (p) => listCallbacks(p.db, { state: state as CallbackState | undefined, order, limit }));
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
        throw error instanceof CallbackInFlightError ? new RefusedError(error.message) : error;
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
      network: { value: NETWORK_VALUE, description: "only this network's addresses" },
      from: { value: 'DATE', description: 'only addresses issued at or after this date (2026-11-01, or 2026-11-01T12:00:00Z)' },
      to: { value: 'DATE', description: 'only addresses issued before this date' },
      json: { description: 'print JSON (the addresses and each network\'s indexes) instead of CSV' },
    },
    example: 'partner-api addresses export --network Tron --from 2026-11-01 > tron-addresses.csv',
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
    summary: 'resumes crediting on a network halted by a reorg deeper than its confirmations, after review',
    flags: {
      network: { value: NETWORK_VALUE, description: 'the halted network', required: true },
      'from-block': { value: 'N', description: 'rescan from this block (the first block the reorg replaced)' },
      json: JSON_FLAG,
    },
    example: 'partner-api chain resume --network Ethereum --from-block 21000000',
    runByRunningPlatform: true,
    run: printedResult(chainResumeCommand),
  },
];
