// The operator's commands against a running platform on the embedded database. PGlite is one process's
// database, so `partner-api merchants create` (and every other command) cannot open it while `serve`
// runs: the server listens on a Unix socket inside its data directory, and a command that finds the
// directory held sends its arguments there and prints what the server's run of it printed, with its
// exit code. Only the data directory's owner reaches it: the directory is 0700 and the socket 0600, and
// nothing of it listens on the network; the directory is refused when another user owns it or may write
// in it (db/data-directory.ts), and a command sends nothing to a socket that is not this user's. The
// platform runs only the commands that make sense beside it (cli/commands.ts, never `serve`).
import { lstatSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

export const OPERATOR_SOCKET = 'operator.sock';

/** What a command printed and its exit code. */
export interface CommandOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** A request at most: the arguments of one command. */
const MAX_REQUEST_BYTES = 64 * 1024;
/** A command sends its line at once: a connection silent this long is closed. */
export const OPERATOR_IDLE_TIMEOUT_MS = 5000;
/** Connections at once: an operator runs a command or two; more only hold descriptors of the HTTP server's. */
export const OPERATOR_MAX_CONNECTIONS = 8;

/** The exit code of a request that is no command line (sysexits.h EX_USAGE, as a usage error's). */
const USAGE = 64;

/** Serves one command per connection: a JSON line `{"argv": [...]}` in, a JSON line CommandOutput out. */
export async function serveOperatorCommands(dataDir: string, run: (argv: string[]) => Promise<CommandOutput>): Promise<{ close(): Promise<void> }> {
  const path = join(dataDir, OPERATOR_SOCKET);
  // A socket file left by a server killed with -9: this process holds the directory's lock, so it is stale.
  rmSync(path, { force: true });
  const server = createServer((socket) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let answered = false;
    socket.setTimeout(OPERATOR_IDLE_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      const end = chunk.indexOf(0x0a);
      chunks.push(end === -1 ? chunk : chunk.subarray(0, end));
      length += chunk.length;
      if (length > MAX_REQUEST_BYTES) return void socket.destroy();
      if (end === -1) return;
      answered = true;
      socket.pause();
      socket.setTimeout(0); // the command may take its time (an export of many addresses)
      void answer(Buffer.concat(chunks)).then((output) => socket.end(JSON.stringify(output) + '\n'));
    });
  });
  server.maxConnections = OPERATOR_MAX_CONNECTIONS;
  const answer = async (line: Buffer): Promise<CommandOutput> => {
    const argv = commandLine(line);
    if (argv === undefined) return { code: USAGE, stdout: '', stderr: 'partner-api: the running platform takes a command line as {"argv": [strings]} in UTF-8, one line\n' };
    try {
      return await run(argv);
    } catch (error) {
      return { code: 70, stdout: '', stderr: `partner-api: the running platform could not run the command: ${(error as Error).message}\n` };
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Made 0600, not chmod'ed after: listen binds the path at once, under the umask set around it (one
    // thread: nothing else creates a file meanwhile). A socket made with the usual umask was readable by
    // others until the chmod (data-directory.test saw it).
    const umask = process.umask(0o177);
    try {
      server.listen(path, () => resolve());
    } finally {
      process.umask(umask);
    }
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        rmSync(path, { force: true });
      }),
  };
}

/**
 * The arguments of a request line, or undefined when it is not `{"argv": [strings]}` in valid UTF-8 (a
 * byte that is not UTF-8 was made U+FFFD and stored so in a merchant's name: now it is refused).
 */
function commandLine(line: Buffer): string[] | undefined {
  try {
    const { argv } = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line)) as { argv?: unknown };
    return Array.isArray(argv) && argv.every((a) => typeof a === 'string') ? argv : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The command's arguments, run by the platform that holds `dataDir`; undefined when none answers there
 * (no socket: the directory is held by something else, or by a platform from before this socket), or
 * when the socket is not this user's own.
 */
export function runInRunningPlatform(dataDir: string, argv: string[]): Promise<CommandOutput | undefined> {
  const path = join(dataDir, OPERATOR_SOCKET);
  const found = lstatSync(path, { throwIfNoEntry: false });
  const me = process.geteuid?.();
  if (!found?.isSocket() || (me !== undefined && found.uid !== me)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = connect(path);
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(JSON.stringify({ argv }) + '\n'));
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => {
      try {
        resolve(JSON.parse(reply) as CommandOutput);
      } catch {
        resolve(undefined);
      }
    });
  });
}
