// The operator's commands against a running platform on the embedded database. PGlite is one process's
// database, so `partner-api merchants create` (and every other command) cannot open it while `serve`
// runs: the server listens on a Unix socket inside its data directory, and a command that finds the
// directory held sends its arguments there and prints what the server's run of it printed, with its
// exit code. Only the data directory's owner reaches it: the directory is 0700 and the socket 0600, and
// nothing of it listens on the network.
import { rmSync } from 'node:fs';
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

/** Serves one command per connection: a JSON line `{"argv": [...]}` in, a JSON line CommandOutput out. */
export async function serveOperatorCommands(dataDir: string, run: (argv: string[]) => Promise<CommandOutput>): Promise<{ close(): Promise<void> }> {
  const path = join(dataDir, OPERATOR_SOCKET);
  // A socket file left by a server killed with -9: this process holds the directory's lock, so it is stale.
  rmSync(path, { force: true });
  const server = createServer((socket) => {
    let request = '';
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      request += chunk;
      if (request.length > MAX_REQUEST_BYTES) socket.destroy();
      if (!request.includes('\n')) return;
      socket.pause();
      void answer(request.slice(0, request.indexOf('\n'))).then((output) => socket.end(JSON.stringify(output) + '\n'));
    });
  });
  const answer = async (line: string): Promise<CommandOutput> => {
    try {
      const { argv } = JSON.parse(line) as { argv: unknown };
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) throw new Error('argv must be strings');
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
 * The command's arguments, run by the platform that holds `dataDir`; undefined when none answers there
 * (no socket: the directory is held by something else, or by a platform from before this socket).
 */
export function runInRunningPlatform(dataDir: string, argv: string[]): Promise<CommandOutput | undefined> {
  return new Promise((resolve) => {
    const socket = connect(join(dataDir, OPERATOR_SOCKET));
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
