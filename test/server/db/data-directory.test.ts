// The embedded database's data directory (issue 9, item 10): the owner's alone, and held by one
// process through an OS lock that a simultaneous start cannot race and a kill -9 does not leave behind.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPlatform } from '../../../src/server/platform.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { startPartnerApi, type RunningPartnerApi } from '../../support/partner-api.js';
import { testConfig } from '../../support/platform.js';

/** The mode of every entry under dir. The running database may remove a file between the listing and its
 * stat (a statistics temp file, a recycled WAL segment): an entry gone by then leaks nothing and is left out. */
function modes(dir: string): { path: string; mode: number }[] {
  return [dir, ...readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => join(dir, name))].flatMap((path) => {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats ? [{ path, mode: stats.mode & 0o777 }] : [];
  });
}

describe('the data directory', () => {
  it('lets one of two simultaneous starts run, frees itself when that one is killed -9, and is unreadable by others', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'partner-datadir-'));
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    let running: RunningPartnerApi | undefined;
    try {
      const starts = await Promise.allSettled([startPartnerApi(env), startPartnerApi(env)]);
      const started = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const refused = starts.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
      expect(started).toHaveLength(1);
      running = started[0]!;
      expect(refused).toHaveLength(1);
      expect(refused[0]).toContain(`is open in process ${running.process.process.pid}`);

      // Every file the platform wrote, the database's included, is the owner's alone.
      const entries = modes(dataDir);
      expect(entries.length).toBeGreaterThan(100);
      expect(entries.filter((e) => (e.mode & 0o077) !== 0), 'files or directories readable by others').toEqual([]);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);

      // A kill -9 leaves the lock file behind but not the lock: the next start runs.
      running.process.process.kill('SIGKILL');
      await new Promise((resolve) => running!.process.process.once('exit', resolve));
      running = await startPartnerApi(env);
      expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await running?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('the data directory within one process', () => {
  it('refuses a second opening of the same data directory while the first holds it, and opens after it closed', async () => {
    const dataDir = copiedDataDirectory('partner-lock-');
    const config = { ...testConfig(), dataDir };
    try {
      const first = await openPlatform(config, { logger: false });
      await expect(openPlatform(config, { logger: false })).rejects.toThrow(`is open in process ${process.pid}`);
      await first.close();
      const second = await openPlatform(config, { logger: false });
      await second.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
