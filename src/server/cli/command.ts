// What every operator command is made of (its flags, its output, the platform it runs on) and the flags
// several nouns share. The commands themselves live with their noun: merchant-commands.ts,
// withdrawal-commands.ts, and so on; commands.ts puts them in one table.
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { isDataDirectory } from '../db/data-directory.js';
import { isUuid } from '../shared/uuid.js';
import { formatDecimalUnits, parseDecimalUnits } from '../shared/money.js';
import type { Platform } from '../platform.js';
import type { CommandIo } from '../process/serve.js';
import { MAX_WITHDRAWAL_UNITS } from '../withdrawals/requests.js';
import { RefusedError, UsageError } from './errors.js';
import { NETWORK_VALUE, required, type Flags } from './flags.js';

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


export const JSON_FLAG: FlagSpec = { description: 'print the result as JSON' };

/** A command's network, `--blockchain` as the contract names it; `--network`, its spelling before issue 48, still works. */
export const blockchainFlag = (description: string): FlagSpec => ({ value: NETWORK_VALUE, description, oldSpelling: 'network' });
export function print(io: Io, flags: Flags, value: unknown, text: string) {
  io.stdout.write(flags.json ? JSON.stringify(value, null, 2) + '\n' : text + '\n');
}

/** The environment variables the guide's samples read, as the banner prints them (issue 57: merchants create printed none). */
const EXPORTED = { apiKey: 'PARTNER_API_KEY', apiSecret: 'PARTNER_API_SECRET', callbackSecret: 'PARTNER_CALLBACK_SECRET' } as const;

/** Credentials, a line each, then as `export` lines for a shell; as JSON with --json. */
export function printCredentials(io: Io, flags: Flags, credentials: object) {
  const lines = Object.entries(credentials).map(([k, v]) => `${k}: ${v}`);
  const exports = Object.entries(EXPORTED).flatMap(([field, variable]) => {
    const value = (credentials as Record<string, unknown>)[field];
    return typeof value === 'string' ? [`  export ${variable}='${value}'`] : [];
  });
  if (exports.length > 0) lines.push("For a shell (the guide's examples read these, with PARTNER_API_URL the platform's address):", ...exports);
  print(io, flags, credentials, lines.join('\n'));
}

// The platform and the server are imported when a command runs, not with this table: help, the version
// and usage errors then take under half the CPU (0.28 CPU-s instead of 0.65; ../cli.ts).
export async function withPlatform<T>(io: Io, config: Config, work: (platform: Platform) => Promise<T>): Promise<T> {
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
export function refuseSilentNewDatabase(io: Io, config: Config): void {
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
export function printedResult(handler: (platform: Platform, flags: Flags) => Promise<{ value: unknown; text: string }>) {
  return async (flags: Flags, config: Config, io: Io) => {
    const { value, text } = await withPlatform(io, config, (platform) => handler(platform, flags));
    print(io, flags, value, text);
  };
}

/** The merchant of an API key, or a refusal naming the key. */
export async function merchantOf(platform: Platform, apiKey: string) {
  const merchant = await platform.merchants.byApiKey(apiKey);
  if (!merchant) throw new RefusedError(`no merchant has the API key ${apiKey}`);
  return merchant;
}

export function uuidFlag(flags: Flags): string {
  const uuid = required(flags, 'uuid');
  if (!isUuid(uuid)) throw new UsageError('--uuid must be a withdrawal uuid');
  return uuid;
}

/** An amount of whole USDT (`12.5`): positive, at most 6 decimals, at most the contract's largest withdrawal. */
export function amountFlag(flags: Flags, name: string): bigint {
  const units = parseDecimalUnits(required(flags, name));
  if (units === undefined || units === 0n || units > MAX_WITHDRAWAL_UNITS) {
    throw new UsageError(`--${name} must be a positive decimal of whole USDT up to ${formatDecimalUnits(MAX_WITHDRAWAL_UNITS)} with at most 6 decimals, e.g. 12.5`);
  }
  return units;
}

