// A command run from another folder (issue 49, item 2): without DATA_DIR, `partner-api` finds the data
// directory of the folder it runs in or of the nearest folder above (as git finds its repository), so
// `cd docs && npx partner-api merchants create` reaches the running platform's database; where there is
// none it refuses in one line, naming the directory it would have created, and creates nothing. Real
// processes, each in the folder an operator would be in.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createPartnerClient } from '../../../src/client/index.js';
import { findDataDirectory } from '../../../src/server/db/data-directory.js';
import { orderRequest } from '../../fixtures/orders.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { ROOT } from '../../support/packages.js';
import { partnerApiCommand, startPartnerApi } from '../../support/partner-api.js';

const project = mkdtempSync(join(tmpdir(), 'partner-project-'));
const elsewhere = mkdtempSync(join(tmpdir(), 'partner-elsewhere-'));
afterAll(() => {
  rmSync(project, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

/** The shipped command in `cwd`, with no DATA_DIR or DATABASE_URL of the caller's. */
async function partnerApiIn(cwd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const command = partnerApiCommand().map((part) => (part.startsWith('-') ? part : join(ROOT, part)));
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...command, ...args], { cwd, env: { ...process.env, DATA_DIR: '', DATABASE_URL: '', ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('a command run without DATA_DIR', { timeout: 120_000 }, () => {
  it("finds the running platform's data directory from a subfolder, and its merchant works against that platform", async () => {
    const dataDir = join(project, 'data');
    renameSync(copiedDataDirectory('partner-project-data-'), dataDir);
    const docs = join(project, 'docs', 'deeper');
    mkdirSync(docs, { recursive: true });
    const platform = await startPartnerApi({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    try {
      expect(findDataDirectory(docs)).toBe(dataDir);
      const created = await partnerApiIn(docs, ['merchants', 'create', '--name', 'Second shop', '--json']);
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const merchant = JSON.parse(created.stdout) as { apiKey: string; apiSecret: string };
      const partner = createPartnerClient({ baseUrl: platform.baseUrl, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
      expect((await partner.POST('/partner/v1/platforms/orders', { body: orderRequest('from-a-subfolder') })).response.status).toBe(201);
      expect(existsSync(join(docs, 'data'))).toBe(false);
      expect(existsSync(join(project, 'docs', 'data'))).toBe(false);

      // With the platform stopped, the command opens that same database itself.
      await platform.stop();
      const renamed = await partnerApiIn(docs, ['merchants', 'set-display-name', '--api-key', merchant.apiKey, '--display-name', 'Second']);
      expect(renamed).toMatchObject({ code: 0, stderr: '' });
      expect(renamed.stdout).toBe('name: Second shop\ndisplayName: Second\n');
    } finally {
      await platform.stop();
    }
  });

  it('refuses in one line where no folder up to the root has a data directory, and creates nothing', async () => {
    expect(findDataDirectory(elsewhere)).toBeUndefined();
    const refused = await partnerApiIn(elsewhere, ['merchants', 'create', '--name', 'Lost shop']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `partner-api: no platform data directory in ${elsewhere} or above it (a data/ holding partner-api.lock): this command would create a new, empty database in ${resolve(elsewhere, 'data')}; ` +
        "run it in the folder where the platform runs (npm start's), or choose the directory with --data-dir DIR (or DATA_DIR)\n",
    );
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
  });

  // A DATA_DIR that holds no database yet is created with a line that says so: the installed package's
  // first command shows it (test/package/platform-package.test.ts), without a second database made here.
});
