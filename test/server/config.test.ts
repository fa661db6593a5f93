// Issue 23 (11): settings that carry a key or a password (SECRET_KEY, DATABASE_URL, the RPC URLs) come
// from the environment or from a file, never from a flag, which every user of the machine can read in
// /proc/PID/cmdline. The refusal names the setting and where to put it instead, never the value.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, readConfig, isSecretSetting, SETTING_NAMES } from '../../src/server/config.js';

const KEY = Buffer.alloc(32, 7).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'partner-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('secret settings', () => {
  it('are exactly the master key, the database URL and the RPC URLs', () => {
    expect(SETTING_NAMES.filter(isSecretSetting)).toEqual(['database-url', 'secret-key', 'tron-rpc-url', 'ethereum-rpc-url']);
  });

  it.each([
    ['secret-key', KEY, 'SECRET_KEY'],
    ['database-url', 'postgres://app:hunter2@db.invalid/partner', 'DATABASE_URL'],
    ['tron-rpc-url', 'https://rpc.invalid/key-abc123', 'TRON_RPC_URL'],
    ['ethereum-rpc-url', 'https://u:p@rpc.invalid/', 'ETHEREUM_RPC_URL'],
  ])('--%s is refused as a flag, naming %s and its _FILE, without repeating the value', (name, value, variable) => {
    let error: unknown;
    try {
      readConfig({}, { [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`--${name} is refused`);
    expect((error as Error).message).toContain(`set ${variable} or ${variable}_FILE`);
    expect((error as Error).message).not.toContain(value);
  });

  it('are read from the environment, or from the file <VARIABLE>_FILE names (trimmed)', () => {
    const keyFile = join(dir, 'secret-key');
    const urlFile = join(dir, 'database-url');
    const rpcFile = join(dir, 'rpc-url');
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    writeFileSync(urlFile, 'postgres://app:pw@db.invalid/partner\n', { mode: 0o600 });
    writeFileSync(rpcFile, 'https://rpc.invalid/key\n', { mode: 0o600 });
    const fromFiles = readConfig({ SECRET_KEY_FILE: keyFile, DATABASE_URL_FILE: urlFile, ETHEREUM_RPC_URL_FILE: rpcFile }, {});
    expect(fromFiles.secretKey).toEqual(Buffer.from(KEY, 'base64'));
    expect(fromFiles.databaseUrl).toBe('postgres://app:pw@db.invalid/partner');
    expect(fromFiles.networks.Ethereum.chain?.rpcUrl).toBe('https://rpc.invalid/key');
    // The variable itself wins over its file.
    expect(readConfig({ DATABASE_URL: 'postgres://env@db.invalid/x', DATABASE_URL_FILE: urlFile }, {}).databaseUrl).toBe('postgres://env@db.invalid/x');
  });

  it('refuses a _FILE that cannot be read, naming the variable and the path', () => {
    const missing = join(dir, 'no-such-file');
    expect(() => readConfig({ SECRET_KEY_FILE: missing }, {})).toThrow(new ConfigError(`SECRET_KEY_FILE: cannot read ${missing} (ENOENT)`));
  });

  it('leave every other setting a flag', () => {
    expect(readConfig({}, { port: '9000', 'rate-limit': '5/60' })).toMatchObject({ port: 9000, rateLimit: { limit: 5, windowSeconds: 60 } });
  });
});
