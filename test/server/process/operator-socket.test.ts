// The operator socket of a running platform on the embedded database (issue 50, item 4): it runs only
// the commands that make sense beside the running platform (never `serve`), closes idle connections and
// holds a few at once, refuses arguments that are not UTF-8 text with a usage error, and no command
// uses a data directory that another user owns or may write, nor a socket that is not the user's own.
import { chmodSync, chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tryLock } from 'fs-native-extensions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/server/cli/commands.js';
import { OPERATOR_IDLE_TIMEOUT_MS, OPERATOR_MAX_CONNECTIONS, OPERATOR_SOCKET, runInRunningPlatform, type CommandOutput } from '../../../src/server/process/operator-socket.js';
import { runCommand as cli } from '../../support/cli.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function dataDirectory(): string {
  const dir = copiedDataDirectory('partner-socket-');
  dirs.push(dir);
  return dir;
}

/** One request line on the socket, as the command sends it (or any bytes), and the platform's answer. */
function send(dataDir: string, line: string | Buffer): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    const socket = connect(join(dataDir, OPERATOR_SOCKET));
    const reply: Buffer[] = [];
    socket.on('connect', () => socket.write(line));
    socket.on('data', (chunk) => reply.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(JSON.parse(Buffer.concat(reply).toString('utf8')) as CommandOutput);
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

const argvLine = (argv: string[]) => JSON.stringify({ argv }) + '\n';

describe('which commands the running platform runs', () => {
  it('runs every command but serve, so that no command on PGlite needs the server stopped (docs/operating.md says so)', () => {
    expect(COMMANDS.filter((command) => !command.runByRunningPlatform).map((command) => command.words.join(' '))).toEqual(['serve']);
    const docs = ['docs/operating.md', 'docs/design.md', 'README.md'].map((file) => readFileSync(file, 'utf8').replace(/\s+/g, ' '));
    for (const text of docs) expect(text).not.toMatch(/server is stopped|stop the server first|while the server runs on it, an operator command refuses/i);
  });
});

describe('the operator socket of a running platform', () => {
  let running: RunningPartnerApi;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = dataDirectory();
    running = await startPartnerApi({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
  });
  afterAll(() => running?.stop());

  it('refuses serve: no second platform starts inside the running one', async () => {
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'partner-second-')), 'data');
    dirs.push(elsewhere);
    const output = await send(dataDir, argvLine(['serve', '--port', '0', '--data-dir', elsewhere]));
    expect(output).toMatchObject({ code: 64, stdout: '' });
    expect(output.stderr).toMatch(/^partner-api: serve is not a command a running platform runs for an operator \(see partner-api serve --help\)\n$/);
    expect(existsSync(elsewhere)).toBe(false);
    expect(running.process.output().match(/listening on/g)).toHaveLength(1);
    // The commands it is for still run.
    const created = await send(dataDir, argvLine(['merchants', 'create', '--name', 'beside serve', '--json']));
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'beside serve' });
  });

  it('refuses a NUL, a lone surrogate and bytes that are not UTF-8 with a usage error, never as a database error', async () => {
    const nul = await send(dataDir, argvLine(['merchants', 'create', '--name', 'a\u0000b']));
    expect(nul.code).toBe(64);
    expect(nul.stderr).toMatch(/^partner-api: the value of --name is not UTF-8 text/);
    const surrogate = await send(dataDir, argvLine(['merchants', 'create', '--name', 'x\ud800']));
    expect(surrogate.code).toBe(64);
    const apiKey = await send(dataDir, argvLine(['merchants', 'rotate-secrets', '--api-key', 'pk_test_\u0000']));
    expect(apiKey.code).toBe(64);
    expect(apiKey.stderr).toMatch(/the value of --api-key is not UTF-8 text/);
    // "caf\xff": the byte 0xff is no UTF-8; it was stored as U+FFFD.
    const bytes = Buffer.concat([Buffer.from('{"argv":["merchants","create","--name","caf'), Buffer.from([0xff]), Buffer.from('"]}\n')]);
    const latin1 = await send(dataDir, bytes);
    expect(latin1.code).toBe(64);
    expect(latin1.stderr).toMatch(/UTF-8/);
    const control = await send(dataDir, argvLine(['merchants', 'create', '--name', 'line\nbreak']));
    expect(control.code).toBe(64);
    expect(control.stderr).toMatch(/--name must be 1 to 200 characters of UTF-8 text without control characters/);
  });

  it(`holds at most ${OPERATOR_MAX_CONNECTIONS} connections at once and closes one that sends nothing within ${OPERATOR_IDLE_TIMEOUT_MS / 1000} s`, async () => {
    const opened = Array.from({ length: 40 }, () => {
      const socket = connect(join(dataDir, OPERATOR_SOCKET));
      socket.on('error', () => {});
      const closedAt = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
      return { socket, closedAt };
    });
    const started = Date.now();
    const closed = await Promise.race([Promise.all(opened.map((o) => o.closedAt)), new Promise<undefined>((resolve) => setTimeout(resolve, OPERATOR_IDLE_TIMEOUT_MS + 5000))]);
    opened.forEach((o) => o.socket.destroy());
    expect(closed, 'every idle connection was closed').toBeDefined();
    const atOnce = closed!.filter((at) => at - started < 1000).length;
    expect(atOnce, 'connections over the cap closed at once').toBeGreaterThanOrEqual(40 - OPERATOR_MAX_CONNECTIONS);
    expect(Math.max(...closed!) - started).toBeGreaterThanOrEqual(OPERATOR_IDLE_TIMEOUT_MS - 1000);
    // The socket serves commands again.
    expect((await send(dataDir, argvLine(['callbacks', 'list', '--limit', '1']))).code).toBe(0);
  });
});

describe("a data directory that is not the user's own", () => {
  it('is refused when others may write in it (exit 73), before anything in it is used', async () => {
    const dataDir = dataDirectory();
    chmodSync(dataDir, 0o777);
    const outcome = await cli(['merchants', 'create', '--name', 'in a shared directory'], { DATA_DIR: dataDir });
    expect(outcome.code).toBe(73);
    expect(outcome.stderr).toBe(`partner-api: DATA_DIR ${dataDir} is writable by every user (mode 0777): refused, since another user may have put files in it; check what it holds, then chmod 700 ${dataDir}\n`);
  });

  describe.runIf(isRoot)("another user's, with its own socket and lock (the suite runs as root, which may chown)", () => {
    let fake: Server;
    let dataDir: string;
    let lockFd: number;
    const connections: number[] = [];
    beforeAll(async () => {
      // Another local user made the directory first, holds its lock and listens on its socket.
      dataDir = dataDirectory();
      lockFd = openSync(join(dataDir, 'partner-api.lock'), 'a+');
      expect(tryLock(lockFd)).toBe(true);
      fake = createServer((socket) => {
        connections.push(Date.now());
        socket.end(JSON.stringify({ code: 0, stdout: 'apiSecret: sk_fake_from_another_user\n', stderr: '' }) + '\n');
      });
      await new Promise<void>((resolve) => fake.listen(join(dataDir, OPERATOR_SOCKET), resolve));
      for (const entry of ['', ...readdirSync(dataDir, { recursive: true, encoding: 'utf8' })]) chownSync(join(dataDir, entry), NOBODY, NOBODY);
      chmodSync(dataDir, 0o700);
    });
    afterAll(async () => {
      closeSync(lockFd);
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    });

    it('refuses it (exit 73) and hands the command to nobody', async () => {
      const outcome = await cli(['merchants', 'rotate-secrets', '--api-key', 'pk_test_operator'], { DATA_DIR: dataDir });
      expect(outcome.code).toBe(73);
      expect(outcome.stderr).toMatch(new RegExp(`^partner-api: DATA_DIR ${dataDir} is owned by uid ${NOBODY}, not by this user \\(uid 0\\)`));
      expect(outcome.stdout).not.toContain('sk_fake');
      expect(connections).toEqual([]);
    });

    it("sends nothing to a socket that is not the user's own, even in a directory that is", async () => {
      chownSync(dataDir, 0, 0);
      try {
        expect(await runInRunningPlatform(dataDir, ['merchants', 'rotate-secrets', '--api-key', 'pk_test_operator'])).toBeUndefined();
        expect(connections).toEqual([]);
      } finally {
        chownSync(dataDir, NOBODY, NOBODY);
      }
    });
  });
});
