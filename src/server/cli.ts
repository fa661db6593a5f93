// The `partner-api` command: finds the command in the table (./cli/commands.ts), parses its flags and
// the settings, prints help and the version, and turns every failure into one line and an exit code
// (sysexits.h where one fits): 0 done, 1 nothing found or refused, 64 usage, 69 unavailable (the
// database unreachable, the port taken), 70 unexpected (details with LOG_LEVEL=debug), 73 the data
// directory cannot be created, 78 configuration (a bad setting, a port or host the OS refuses).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { COMMANDS, type Command, type Io } from './cli/commands.js';
import { RefusedError, UsageError } from './cli/errors.js';
import { isCleanText, type Flags } from './cli/flags.js';
import { ConfigError, isSecretSetting, readConfig, SETTING_NAMES, settingEnv, type Config } from './config.js';
import { contract } from './http/openapi-document.js';
import { DataDirectoryBusyError, DataDirectoryError, findDataDirectory, WrongDatabaseError } from './db/data-directory.js';
import { MasterKeyMismatchError } from './merchants/master-key.js';

const EXIT = { ok: 0, refused: 1, usage: 64, unavailable: 69, software: 70, cannotCreate: 73, config: 78 } as const;

/**
 * The errors of the platform's own modules that the operator is told about in one line. Those modules
 * load the platform (the HTTP layer, the databases' drivers, the chain), which help, the version and a
 * usage or configuration error never need: they are imported once a command failed with something else,
 * and by then the command has loaded them.
 */
async function platformErrors() {
  const [{ RescanError }, { ScannerStartError }, { InvalidExtendedKeyError }, { PortInUseError }, { WorkerStartError }, { RpcError }] = await Promise.all([
    import('./chain/rescan.js'),
    import('./chain/scanner.js'),
    import('./addresses/derivation.js'),
    import('./process/serve.js'),
    import('./process/cluster.js'),
    import('./chain/rpc.js'),
  ]);
  /** Errors whose message is written for the operator: printed as they are. */
  const operatorErrors = [RefusedError, DataDirectoryBusyError, WrongDatabaseError, MasterKeyMismatchError, RescanError, ScannerStartError, InvalidExtendedKeyError];
  return { PortInUseError, WorkerStartError, RpcError, operatorErrors };
}

const HELP_FLAGS = { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } } as const;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return `partner-api ${pkg.version} (contract ${(contract as unknown as { info: { version: string } }).info.version})`;
}

const name = (command: Command) => command.words.join(' ');

function usageLine(command: Command): string {
  const flags = Object.entries(command.flags).map(([flag, spec]) => {
    const text = spec.value ? `--${flag} ${spec.value}` : `--${flag}`;
    return spec.required ? text : `[${text}]`;
  });
  return ['partner-api', name(command), ...flags, '[settings]'].join(' ');
}

function flagLines(flags: [string, string][]): string {
  const width = Math.max(...flags.map(([flag]) => flag.length));
  return flags.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`).join('\n');
}

function commandHelp(command: Command): string {
  const own = Object.entries(command.flags).map(([flag, spec]): [string, string] => [
    spec.value ? `--${flag} ${spec.value}` : `--${flag}`,
    spec.description + (spec.required ? ' (required)' : ''),
  ]);
  const settings =
    command.words[0] === 'serve'
      ? `settings (flag, or environment variable; the flag wins):\n${flagLines(SETTING_NAMES.map((s) => (isSecretSetting(s) ? [`${settingEnv(s)}_FILE`, `${settingEnv(s)} (no flag: a secret)`] : [`--${s}`, settingEnv(s)])))}`
      : 'settings: the same flags and environment variables as serve (DATA_DIR or DATABASE_URL, SECRET_KEY, …): partner-api serve --help';
  return [
    `partner-api ${name(command)}: ${command.summary}`,
    '',
    `usage: ${usageLine(command)}`,
    '',
    'flags:',
    flagLines([...own, ['-h, --help', 'this help'], ['--version', 'the version of partner-api and of its contract']]),
    '',
    'example:',
    `  ${command.example}`,
    '',
    settings,
  ].join('\n');
}

function overview(commands = COMMANDS, title = 'partner-api: the reference platform of the Partner API, and its operator commands'): string {
  return [
    title,
    '',
    'commands:',
    flagLines(commands.map((c) => [name(c), c.summary])),
    '',
    'example:',
    `  ${commands[0]!.example}`,
    '',
    `help on a command: partner-api ${name(commands[0]!)} --help, and so on`,
    'exit codes: 0 done, 1 nothing found or refused, 64 usage error, 69 unavailable (database or chain node unreachable, port in use), 70 unexpected error,',
    '  73 data directory cannot be created, 78 bad configuration (a setting, or a port or host the system refuses)',
    `version: partner-api --version`,
  ].join('\n');
}

/** The command named by the leading words; `rest` is what follows them. */
function findCommand(words: string[]): { command?: Command; group: Command[]; rest: string[] } {
  for (const command of COMMANDS) {
    if (command.words.every((word, i) => words[i] === word)) return { command, group: [command], rest: words.slice(command.words.length) };
  }
  const group = COMMANDS.filter((c) => c.words[0] === words[0]);
  return { group, rest: words.slice(group.length > 0 ? 1 : 0) };
}

/**
 * A flag given in its old spelling (`--network`) is read as the new one (`--blockchain`), with a note on
 * stderr so that scripts move over; both at once is a usage error, since they name one thing.
 */
function readOldSpellings(command: Command, flags: Flags, io: Io): Flags {
  for (const [flag, spec] of Object.entries(command.flags)) {
    const old = spec.oldSpelling;
    if (old === undefined || flags[old] === undefined) continue;
    if (flags[flag] !== undefined) throw new UsageError(`--${old} is the old spelling of --${flag}: give --${flag} only`);
    io.stderr.write(`partner-api: --${old} is the old spelling of --${flag}; it still works, say --${flag}\n`);
    flags = { ...flags, [flag]: flags[old], [old]: undefined };
  }
  return flags;
}

/** parseArgs' messages are long and name our internals: one line, naming the flag as it was typed. */
function usageFromParseError(error: unknown): UsageError {
  const { code, message } = error as { code?: string; message: string };
  const typed = /'(-[^' <]*)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown flag ${typed}`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return new UsageError(`${typed} needs a value`);
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return new UsageError(`unexpected argument ${/'([^']*)'/.exec(message)?.[1]}`);
  return new UsageError(message.split('\n')[0]!);
}

function parseCommandFlags(command: Command, args: string[]): Flags {
  const options = {
    ...Object.fromEntries(SETTING_NAMES.map((s) => [s, { type: 'string' as const }])),
    ...Object.fromEntries(
      Object.entries(command.flags).flatMap(([flag, spec]) => {
        const option = { type: spec.value ? ('string' as const) : ('boolean' as const), multiple: spec.multiple ?? false };
        return spec.oldSpelling ? [[flag, option], [spec.oldSpelling, option]] : [[flag, option]];
      }),
    ),
    ...HELP_FLAGS,
  };
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Flags;
  } catch (error) {
    throw usageFromParseError(error);
  }
}

async function run(argv: string[], io: Io): Promise<number> {
  if (argv.length === 0) throw new UsageError('a command is required');
  if (argv.includes('--version')) {
    io.stdout.write(version() + '\n');
    return EXIT.ok;
  }
  const asksHelp = argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
  const line = argv[0] === 'help' ? argv.slice(1) : argv;
  const words = line.filter((a) => !a.startsWith('-'));
  const { command, group } = findCommand(words);
  // `withdrawals bogus --help` named no command of the group: a usage error, not the group's help and 0.
  const unknownInGroup = !command && group.length > 0 && line[1] !== undefined && !line[1].startsWith('-');
  if (unknownInGroup) throw new UsageError(`${group[0]!.words[0]} has no command ${line[1]}: it has ${group.map((c) => c.words.at(-1)).join(', ')}`);
  if (asksHelp) {
    if (command) io.stdout.write(commandHelp(command) + '\n');
    else if (group.length > 0) io.stdout.write(overview(group, `partner-api ${group[0]!.words[0]}: its commands`) + '\n');
    else if (words.length === 0) io.stdout.write(overview() + '\n');
    else throw new UsageError(`unknown command ${words.join(' ')}`);
    return EXIT.ok;
  }
  if (!command) {
    if (group.length > 0) throw new UsageError(`${argv[0]} needs one of: ${group.map((c) => c.words.at(-1)).join(', ')}`);
    throw new UsageError(`unknown command ${argv[0]}`);
  }
  if (io.platform && !command.runByRunningPlatform) {
    throw new UsageError(`${name(command)} is not a command a running platform runs for an operator`, { cause: command });
  }
  // A NUL ended as "the database refused the operation", exit 70 (issue 50): any flag's value, refused first.
  const unclean = argv.findIndex((arg) => !isCleanText(arg));
  if (unclean !== -1) {
    const flag = argv.slice(0, unclean).findLast((arg) => arg.startsWith('--'))?.split('=')[0];
    throw new UsageError(`${flag ? `the value of ${flag}` : 'an argument'} is not UTF-8 text (it holds a NUL, or bytes that are not UTF-8)`, { cause: command });
  }
  let config: Config | undefined;
  try {
    const flags = readOldSpellings(command, parseCommandFlags(command, argv.slice(command.words.length)), io);
    config = locateDataDirectory(readConfig(io.env, flags));
    await command.run(flags, config, { ...io, runCommand: runCli });
  } catch (error) {
    if (error instanceof UsageError) error.cause ??= command; // its help is the one to point at
    // The embedded database is a running platform's: it runs the command itself (process/operator-socket.ts).
    if (error instanceof DataDirectoryBusyError && config && command.words[0] !== 'serve' && !io.platform) {
      const { runInRunningPlatform } = await import('./process/operator-socket.js');
      const output = await runInRunningPlatform(config.dataDir, argv);
      if (output) {
        io.stdout.write(output.stdout);
        io.stderr.write(output.stderr);
        return output.code;
      }
    }
    throw error;
  }
  return EXIT.ok;
}

/**
 * Without DATA_DIR (and DATABASE_URL), the data directory of the folder the command runs in or of the
 * nearest folder above that has one, as git finds its repository (issue 49): `cd docs && partner-api
 * merchants create` reaches the platform's database, not a new one in docs/data.
 */
function locateDataDirectory(config: Config): Config {
  if (config.dataDirGiven || config.databaseUrl) return config;
  const found = findDataDirectory(process.cwd());
  return found ? { ...config, dataDir: found } : config;
}

/** One line for the operator, and the exit code; the stack only with LOG_LEVEL=debug or trace. */
async function report(error: unknown, argv: string[], io: Io): Promise<number> {
  const write = (line: string) => io.stderr.write(`partner-api: ${line}\n`);
  if (error instanceof UsageError) {
    const command = error.cause as Command | undefined;
    const help = command ? `partner-api ${name(command)} --help` : `partner-api ${argv[0] && COMMANDS.some((c) => c.words[0] === argv[0]) ? `${argv[0]} ` : ''}--help`;
    write(`${error.message} (see ${help})`);
    return EXIT.usage;
  }
  if (error instanceof ConfigError) {
    write(`bad configuration: ${error.message.split('\n')[0]}`);
    return EXIT.config;
  }
  if (error instanceof DataDirectoryError) {
    write(error.message);
    return EXIT.cannotCreate;
  }
  const { PortInUseError, WorkerStartError, RpcError, operatorErrors } = await platformErrors();
  if (error instanceof PortInUseError) {
    write(error.message);
    return EXIT.unavailable;
  }
  // A node that did not answer, or refused: not the platform's fault, and a command it stopped can run
  // again (a rescan credits each transfer once, a resume starts over).
  if (error instanceof RpcError) {
    write(`the chain's node failed: ${error.message.split('\n')[0]}; run the command again once it answers`);
    return EXIT.unavailable;
  }
  if (error instanceof WorkerStartError) {
    write(error.message);
    return error.exitCode || EXIT.software;
  }
  if (operatorErrors.some((kind) => error instanceof kind)) {
    write((error as Error).message.split('\n')[0]!);
    return EXIT.refused;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code) && (error as { syscall?: string }).syscall === 'connect') {
    write(`cannot reach the database (${code}): check DATABASE_URL and that the server is up`);
    return EXIT.unavailable;
  }
  const debug = /^(debug|trace)$/.test(io.env.LOG_LEVEL ?? '') || /--log-level[= ](debug|trace)\b/.test(argv.join(' '));
  const details = debug ? 'its stack follows' : 'run with LOG_LEVEL=debug for details';
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) write(`the database refused the operation (SQLSTATE class ${code.slice(0, 2)}); ${details}`);
  else write(`unexpected error (${(error as Error)?.name ?? typeof error}); ${details}`);
  if (debug) io.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.software;
}

/** Runs a command line and returns its exit code; what it prints goes to `io` (a test's, or the process's through main). */
export async function runCli(argv: string[], io: Io): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    return report(error, argv, io);
  }
}

/** The process's entry (bin/partner-api.js): its command line, environment and output, and its exit code. */
export async function main(): Promise<void> {
  const code = await runCli(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr });
  // serve keeps running; every other command ends here, with its exit code.
  if (code !== EXIT.ok) process.exit(code);
}
