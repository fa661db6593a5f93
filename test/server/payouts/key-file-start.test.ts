// `partner-api serve` judges each payout key file's kind, owner and mode before anything starts
// (docs/operating.md#paying-out, issue 53): one others may read, or another user's, is refused with exit
// 78 and one line naming the file, never the key, before the database opens or the port listens. One
// owner-only file of the user running it starts the platform. And a sandbox refuses a key file at all.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runProcess } from '../../support/cli.js';
import { keyLeaks } from '../../support/key-leak.js';
import { liveEnv } from '../../support/live-env.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';

const dir = mkdtempSync(join(tmpdir(), 'partner-key-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let made = 0;

/** A live platform's settings without a chain: no scanner, no payer, yet the jobs load the hot wallets. */
function liveSettings(): Record<string, string> {
  return {
    ...liveEnv(),
    DATABASE_URL: '',
    DATA_DIR: join(dir, `data-${++made}`),
    // Every line the platform writes, the most detailed: none may show the key.
    LOG_LEVEL: 'debug',
  };
}

function keyFile(name: string, key: string, mode: number): string {
  const file = join(dir, name);
  writeFileSync(file, `${key}\n`);
  chmodSync(file, mode);
  return file;
}

/** A port of 127.0.0.1 held by the test: a serve that tried to listen there would be refused with 69, not 78. */
async function heldPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return { port: (server.address() as { port: number }).port, server };
}

describe('serve with a payout key file', () => {
  let held: Server | undefined;
  let running: RunningPartnerApi | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    await new Promise((resolve) => (held ? held.close(resolve) : resolve(undefined)));
    held = undefined;
  });

  /** serve on a port the test holds: exit 78 and only `line` on stderr, no data directory made, the key in no output. */
  async function refusedBeforeStart(env: Record<string, string>, key: string, line: string) {
    const { port, server } = await heldPort();
    held = server;
    const started = await runProcess(['serve', '--port', String(port)], env);
    expect(started.stderr).toBe(`partner-api: bad configuration: ${line}\n`);
    expect(started.code).toBe(78);
    expect(started.stdout).toBe('');
    // Never listened (the held port would have answered 69) and never opened a database.
    expect(existsSync(env.DATA_DIR!)).toBe(false);
    expect(keyLeaks([started.stdout, started.stderr], key)).toEqual([]);
  }

  it('refuses one readable by others before the database opens or the port listens: exit 78, the file and its mode named, the key nowhere', async () => {
    const key = randomBytes(32).toString('hex');
    const file = keyFile('shared.key', key, 0o644);
    const line = `ETHEREUM_PAYOUT_KEY_FILE: the Ethereum payout key file ${JSON.stringify(file)} is readable or writable by others (mode 0644): allow its owner only, e.g. chmod 600`;
    await refusedBeforeStart({ ...liveSettings(), ETHEREUM_PAYOUT_KEY_FILE: file }, key, line);
  });

  // Tests run as root, which may read any file: the owner alone decides.
  it.skipIf(process.getuid?.() !== 0)('refuses an owner-only file of another user (nobody), though this one may read it', async () => {
    const key = randomBytes(32).toString('hex');
    const file = keyFile('nobodys.key', key, 0o600);
    chownSync(file, 65534, 65534);
    const line = `TRON_PAYOUT_KEY_FILE: the Tron payout key file ${JSON.stringify(file)} belongs to another user (uid 65534, the platform runs as uid 0): chown it to the user that runs the platform`;
    await refusedBeforeStart({ ...liveSettings(), TRON_PAYOUT_KEY_FILE: file }, key, line);
  });

  it('starts with owner-only files of its own user (0600, 0400), and shows neither key in any line', async () => {
    const keys = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const env = { ...liveSettings(), ETHEREUM_PAYOUT_KEY_FILE: keyFile('own-ethereum.key', keys[0]!, 0o600), TRON_PAYOUT_KEY_FILE: keyFile('own-tron.key', keys[1]!, 0o400) };
    running = await startPartnerApi(env);
    expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
    const output = running.process.output();
    for (const key of keys) expect(keyLeaks(output, key)).toEqual([]);
  });

  it('refuses a key file in a sandbox: its balances are made up, and real tokens would pay them', async () => {
    const key = randomBytes(32).toString('hex');
    const env = { DATABASE_URL: '', DATA_DIR: join(dir, `data-${++made}`), ETHEREUM_PAYOUT_KEY_FILE: keyFile('sandbox.key', key, 0o600) };
    const line =
      "ETHEREUM_PAYOUT_KEY_FILE is refused in sandbox mode: the sandbox's balances are made up (its deposit helper), and a hot wallet would pay them out in real tokens; payouts on chain need --mode live";
    await refusedBeforeStart(env, key, line);
    // The same for --mode sandbox given on the command line over a live environment.
    const { port, server } = await heldPort();
    held?.close();
    held = server;
    const flagged = await runProcess(['serve', '--mode', 'sandbox', '--port', String(port)], { ...liveSettings(), TRON_PAYOUT_KEY_FILE: keyFile('sandbox-tron.key', key, 0o600) });
    expect(flagged).toMatchObject({ code: 78, stdout: '' });
    expect(flagged.stderr).toMatch(/^partner-api: bad configuration: TRON_PAYOUT_KEY_FILE is refused in sandbox mode: .*--mode live\n$/);
  });
});
