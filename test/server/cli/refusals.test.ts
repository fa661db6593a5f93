// Issue 24, item 2: each refusal of the operating system and each bad setting at start is one line on
// stderr that names the setting, its value and the cause, with its documented exit code (sysexits:
// 69 unavailable, 73 cannot create, 78 configuration), and nothing typed hangs. The refusals a root
// user never meets (a port below 1024, a directory it may not create) are run, when the suite runs as
// root, without the capabilities that let root pass them (setpriv drops them): still uid 0, so the
// command reads the project and the Node binary wherever they are, which another user may not.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerApiCommand } from '../../support/partner-api.js';

/** What lets root bind a port below 1024 and write where its permission bits say no. */
const ROOT_POWERS = '-net_bind_service,-dac_override,-dac_read_search,-fowner';
const isRoot = process.getuid?.() === 0;
const dirs: string[] = [];

function tempDir(mode = 0o700): string {
  const dir = mkdtempSync(join(tmpdir(), 'partner-refusals-'));
  chmodSync(dir, mode);
  dirs.push(dir);
  return dir;
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** partner-api, as this user or (when root) without root's powers; killed if it outlives 90 s. */
function partnerApi(args: string[], options: { unprivileged?: boolean } = {}): Promise<Outcome> {
  const command = [process.execPath, ...partnerApiCommand(), ...args];
  const [file, ...rest] = options.unprivileged && isRoot ? ['setpriv', `--bounding-set=${ROOT_POWERS}`, `--inh-caps=${ROOT_POWERS}`, ...command] : command;
  return new Promise((resolve) => {
    execFile(file!, rest, { timeout: 90_000, env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: '' } }, (error, stdout, stderr) => {
      const code = error ? ((error as { code?: unknown }).code as number | null) : 0;
      resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
    });
  });
}

/** One line, naming what was refused, and nothing unexpected. */
function expectOneLine(outcome: Outcome, code: number, line: RegExp) {
  expect(outcome.stderr.split('\n').filter(Boolean), outcome.stderr).toHaveLength(1);
  expect(outcome.stderr.trim()).toMatch(line);
  expect(outcome.stderr).not.toMatch(/unexpected error/);
  expect(outcome.code).toBe(code);
}

afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('serve refuses what the operating system refuses, in one line', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  // The port is tried before anything is made or opened: a refused start leaves no data directory behind.
  it('a port in use (EADDRINUSE): 69, before the data directory is made', { timeout: 120_000 }, async () => {
    const dataDir = join(tempDir(), 'data');
    const outcome = await partnerApi(['serve', '--port', String(port), '--data-dir', dataDir]);
    expectOneLine(outcome, 69, new RegExp(`^partner-api: PORT ${port} is in use on 127\\.0\\.0\\.1 by another process \\(EADDRINUSE\\)`));
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a port below 1024 for a user without the privilege (EACCES): 78, before the data directory is made', { timeout: 120_000 }, async () => {
    const dataDir = join(tempDir(0o777), 'data');
    const outcome = await partnerApi(['serve', '--port', '80', '--data-dir', dataDir], { unprivileged: true });
    expectOneLine(outcome, 78, /^partner-api: bad configuration: PORT 80: this user may not listen on 127\.0\.0\.1:80 \(EACCES\)/);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a data directory the user may not create (EACCES): 73', async () => {
    const readOnly = tempDir(0o500); // no write bit, which only root's powers would pass over
    const target = isRoot ? join(readOnly, 'data') : '/root/partner-data';
    const outcome = await partnerApi(['serve', '--port', '0', '--data-dir', target], { unprivileged: true });
    expectOneLine(outcome, 73, new RegExp(`^partner-api: DATA_DIR ${target} cannot be created or written by (uid \\d+|\\S+): .*: permission denied \\(EACCES\\)$`));
  });

  it('a data directory under a regular file (ENOTDIR): 73', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'not a directory');
    const outcome = await partnerApi(['serve', '--port', '0', '--data-dir', join(file, 'data')]);
    expectOneLine(outcome, 73, new RegExp(`^partner-api: DATA_DIR ${file}/data cannot be created or written by .*: a part of the path is a file, not a directory \\(ENOTDIR\\)$`));
    const itself = await partnerApi(['serve', '--port', '0', '--data-dir', file]);
    expectOneLine(itself, 73, /it exists and is not a directory \(EEXIST\)$/);
  });

  it('a data directory where the system accepts none (/proc/nope) ends at once instead of spinning: 73', async () => {
    const outcome = await partnerApi(['serve', '--port', '0', '--data-dir', '/proc/nope']);
    expectOneLine(outcome, 73, /^partner-api: DATA_DIR \/proc\/nope cannot be created or written by .*: \/proc\/nope: its parent does not accept new directories \(ENOENT\)$/);
  });

  it('a host that is no address (999.1.1.1), refused before any lookup: 78', async () => {
    const outcome = await partnerApi(['serve', '--host', '999.1.1.1', '--data-dir', join(tempDir(), 'data')]);
    expectOneLine(outcome, 78, /^partner-api: bad configuration: HOST must be an IP address of this machine .* or localhost, got "999\.1\.1\.1"$/);
    const name = await partnerApi(['serve', '--host', 'partner.example', '--data-dir', join(tempDir(), 'data')]);
    expectOneLine(name, 78, /got "partner\.example"$/);
  });

  it('a bad log level: 78, naming it', async () => {
    const outcome = await partnerApi(['serve', '--log-level', 'loud', '--data-dir', join(tempDir(), 'data')]);
    expectOneLine(outcome, 78, /^partner-api: bad configuration: LOG_LEVEL must be one of .*, got "loud"$/);
  });
});
