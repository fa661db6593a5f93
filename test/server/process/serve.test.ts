// `partner-api serve --workers N` (issue 10, item 4): node:cluster workers sharing the port on
// PostgreSQL, replaced when one dies; refused on the embedded database, which is one process's.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadedModules } from '../../support/cli.js';
import { partnerApiCommand, startPartnerApi } from '../../support/partner-api.js';
import { TEST_DATABASE_URL, freshDatabase } from '../../support/platform.js';
import { until } from '../../support/processes.js';
import { orderRequest } from '../../fixtures/orders.js';
import { createPartnerClient } from '../../../src/client/index.js';

const run = promisify(execFile);

/** The pids of a process's children (Linux /proc). */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const task of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)) if (task) out.push(Number(task));
  return out;
}

describe('serve --workers', () => {
  it('refuses on the embedded database with a configuration error (78)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'partner-workers-'));
    try {
      const failed = await run('node', [...partnerApiCommand(), 'serve', '--workers', '2', '--port', '0'], { env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' } }).catch((e: { code: number; stderr: string }) => e);
      expect('code' in failed && failed.code).toBe(78);
      expect((failed as { stderr: string }).stderr).toMatch(/--workers needs DATABASE_URL/);
      const usage = await run('node', [...partnerApiCommand(), 'serve', '--workers', 'two'], { env: { ...process.env, DATA_DIR: dataDir } }).catch((e: { code: number; stderr: string }) => e);
      expect((usage as { code: number }).code).toBe(64);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('serves from two processes on PostgreSQL and replaces a worker killed with SIGKILL', async () => {
    const database = await freshDatabase('postgres');
    await database.db.close();
    const dataDir = mkdtempSync(join(tmpdir(), 'partner-workers-'));
    // The processes' modules logged: a platform on PostgreSQL loads no PGlite (docs/operating.md#help-errors-and-exit-codes).
    const modules = loadedModules(dataDir);
    const platform = await startPartnerApi({ DATA_DIR: dataDir, DATABASE_URL: database.url!, LOG_LEVEL: 'warn', RATE_LIMIT: '100000/60', ...modules.env }, ['--workers', '2']);
    try {
      expect(platform.process.output()).toMatch(/workers: +2 processes/);
      expect(modules.loaded().filter((url) => /\/server\/platform\.(js|ts)$/.test(url)).length).toBeGreaterThan(0);
      expect(modules.loaded().filter((url) => url.includes('/@electric-sql/pglite/'))).toEqual([]);
      const primary = platform.process.process.pid!;
      const workers = children(primary);
      expect(workers).toHaveLength(2);
      // Every request on a connection of its own: a keep-alive connection to the worker killed
      // below dies with it (as with any process), and a request written to it before this process
      // has read its close fails whatever the platform does. What this test checks is that the
      // platform serves new connections while a worker is gone and after it is replaced.
      const client = createPartnerClient({
        baseUrl: platform.baseUrl,
        apiKey: platform.sandbox!.apiKey,
        apiSecret: platform.sandbox!.apiSecret,
        fetch: (request) => {
          request.headers.set('connection', 'close');
          return fetch(request);
        },
      });
      const created = await Promise.all(Array.from({ length: 40 }, (_, i) => client.POST('/partner/v1/platforms/orders', { body: orderRequest(`workers-${i}`) })));
      expect(created.map((r) => r.response.status)).toEqual(Array(40).fill(201));
      expect(new Set(created.map((r) => r.data!.address)).size).toBe(40);

      process.kill(workers[0]!, 'SIGKILL');
      const replaced = await until('a replacement worker', async () => {
        const now = children(primary);
        return now.length === 2 && !now.includes(workers[0]!) ? now : undefined;
      });
      expect(replaced).toContain(workers[1]);
      const after = await Promise.all(Array.from({ length: 10 }, (_, i) => client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: created[i]!.data!.uuid } } })));
      expect(after.map((r) => r.response.status)).toEqual(Array(10).fill(200));
    } finally {
      await platform.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(platform.process.process.exitCode).toBe(0);
  }, 180_000);
});
