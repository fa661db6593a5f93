// The platform refuses to start with a payout key file others may read (docs/operating.md#paying-out):
// exit 78 and one line naming the file and the mode, never the key (one made owner-only starts: payouts-e2e.test.ts).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../support/cli.js';
import { keyLeaks } from '../../support/key-leak.js';

const dir = mkdtempSync(join(tmpdir(), 'partner-key-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('serve with a payout key file', () => {
  it('refuses one readable by others: exit 78, the file and its mode named, the key nowhere', async () => {
    const key = randomBytes(32).toString('hex');
    const file = join(dir, 'ethereum-payout.key');
    writeFileSync(file, `${key}\n`);
    chmodSync(file, 0o644);
    const started = await runProcess(['serve', '--port', '0', '--data-dir', join(dir, 'data')], { ETHEREUM_PAYOUT_KEY_FILE: file, ETHEREUM_RPC_URL: 'http://127.0.0.1:9' });
    expect(started.code).toBe(78);
    expect(started.stderr).toBe(`partner-api: bad configuration: ETHEREUM_PAYOUT_KEY_FILE: the Ethereum payout key file ${JSON.stringify(file)} is readable or writable by others (mode 0644): allow its owner only, e.g. chmod 600\n`);
    expect(keyLeaks([started.stdout, started.stderr], key)).toEqual([]);
  });
});
