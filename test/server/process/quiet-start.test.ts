// A quiet start (issue 24, item 1): the banner is the first thing serve prints, on stderr (the
// terminal's stream), with the sandbox credentials as `export` lines; the JSON logs go to stdout, so a
// log collector never receives the secrets; the sandbox logs no request unless LOG_LEVEL asks.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { partnerApiCommand } from '../../support/partner-api.js';

// A first start's directory (the cluster made and migrated ahead, no key, no merchant): it prints the
// sandbox credentials it makes, as on an empty directory.
const dataDir = copiedDataDirectory('partner-quiet-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** serve until its banner's last line; then one request, and its streams apart. */
async function startAndRequest(env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...partnerApiCommand(), 'serve', '--port', '0'], { env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/^Ready\. /m.test(stderr)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${stderr}`)));
  });
  const url = /listening on (\S+)/.exec(stderr)![1]!;
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  await new Promise((r) => setTimeout(r, 300)); // a log line would be written by now
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return { stdout, stderr };
}

// Real processes: slow on a busy machine.
describe('serve starts quietly', { timeout: 120_000 }, () => {
  it('prints the banner first, on stderr, with export lines, and no request log in the sandbox by default', async () => {
    const { stdout, stderr } = await startAndRequest({ RATE_LIMIT: '' });
    const lines = stderr.split('\n');
    expect(lines[0]).toMatch(/^Partner API \(sandbox mode\) listening on http:\/\/127\.0\.0\.1:\d+$/);
    const url = /listening on (\S+)/.exec(lines[0]!)![1];
    const exports = lines.filter((line) => line.startsWith('  export '));
    expect(exports.map((line) => line.trim().split('=')[0])).toEqual(['export PARTNER_API_URL', 'export PARTNER_API_KEY', 'export PARTNER_API_SECRET', 'export PARTNER_CALLBACK_SECRET']);
    expect(exports[0]).toBe(`  export PARTNER_API_URL='${url}'`);
    expect(exports[1]).toMatch(/='pk_test_[^']+'$/);
    expect(stdout).toBe(''); // no request log, no "listening" log
    // Issue 49: whom payers see, and where callbacks may go (npm start's loopback-only sandbox: this machine too).
    expect(lines).toContain('  shown to payers:  "Sandbox shop" on its payment pages (merchants set-display-name --api-key … changes it)');
    expect(lines).toContain(
      '  callbacks: public addresses and this machine (http://127.0.0.1:PORT/…, http://localhost:PORT/…): the sandbox listens on loopback only; other private addresses refused',
    );
    // Issue 57: the limit a merchant's test loop meets first, as set (the default here).
    expect(lines).toContain('  rate limit: 100 requests per 60 s per API key (then 429 rate_limited; RATE_LIMIT=requests/seconds changes it)');
  });

  it('logs each request as JSON on stdout when LOG_LEVEL=info, and never the banner or a secret there', async () => {
    // Behind a proxy (TRUSTED_PROXIES), others reach the sandbox: the banner says callbacks stay off this machine.
    const { stdout, stderr } = await startAndRequest({ LOG_LEVEL: 'info', TRUSTED_PROXIES: '127.0.0.1' });
    expect(stderr.split('\n')[0]).toMatch(/^Partner API \(sandbox mode\) listening on /);
    expect(stderr.split('\n')).toContain('  callbacks: public addresses only; ALLOW_PRIVATE_CALLBACKS=true lets them reach this machine and private networks (tests only)');
    const logs = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string; req?: { url: string } });
    expect(logs.some((log) => log.req?.url === '/healthz')).toBe(true);
    const secret = /API secret:\s+(\S+)/.exec(stderr)![1]!;
    expect(stdout).not.toContain(secret);
    expect(stdout).not.toContain('PARTNER_API_KEY');
  });
});
