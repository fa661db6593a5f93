// What a merchant or an operator sees when installing and building: no warning of install scripts nobody
// reviewed (package.json's allowScripts names the two that run: esbuild's binary check, secp256k1's
// prebuilt binding), and no boxed notice from Redocly on every command (scripts/redocly.mjs).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/packages.js';

const run = promisify(execFile);

describe('install and build output', () => {
  it('leaves no install script unreviewed', async () => {
    const { stdout } = await run('npm', ['install-scripts', 'ls', '--json'], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({ allowScripts: [] });
  });

  it("runs Redocly without its boxed notice, with its own output and exit code", async () => {
    const ok = await run(process.execPath, ['scripts/redocly.mjs', 'lint'], { cwd: ROOT });
    expect(ok.stderr).toContain('validated');
    expect(ok.stderr + ok.stdout).not.toMatch(/[╔║╚]/);
    const dir = mkdtempSync(join(tmpdir(), 'partner-redocly-'));
    try {
      writeFileSync(join(dir, 'broken.yaml'), 'openapi: 3.1.0\ninfo: {}\npaths: {}\n');
      const failed = await run(process.execPath, ['scripts/redocly.mjs', 'lint', join(dir, 'broken.yaml')], { cwd: ROOT }).catch((error: { code: number; stderr: string; stdout: string }) => error);
      expect((failed as { code: number }).code).toBe(1);
      expect((failed as { stdout: string; stderr: string }).stdout + (failed as { stderr: string }).stderr).toMatch(/info-license|title/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
