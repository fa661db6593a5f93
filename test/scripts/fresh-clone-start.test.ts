// A newcomer's first `npm start` on a fresh clone, as the README says it (issue 49): the clone is the
// repository's files as git has them (tracked and new, nothing ignored: no dist/, no data/), its
// node_modules the repository's (npm install is not what is tested here). The first start says what it
// builds while it builds, then the banner; the root and the docs' menu paths open pages; an order whose
// callbackUrl is on this machine is accepted and its callback arrives, signed; and `npx partner-api`
// from the docs/ folder reaches the running platform, whose API then takes the new merchant.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerClient, verifyCallback } from '../../src/client/index.js';
import { orderRequest } from '../fixtures/orders.js';
import { plainEnv, ROOT } from '../support/packages.js';
import { freePort } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const run = promisify(execFile);
const clone = mkdtempSync(join(tmpdir(), 'partner-clone-'));
let start: ChildProcess;
let output = '';
let port: number;
let banner: Record<string, string>;
let receiver: Receiver;

/** The repository's files as a clone has them: tracked and new ones, none that git ignores. */
async function copyRepository(to: string): Promise<void> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the working tree
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(ROOT, file), join(to, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'));
}

beforeAll(async () => {
  await copyRepository(clone);
  receiver = await startReceiver();
  port = await freePort();
  // The README's other port, as it says it; the default 8080 may be taken on a shared machine.
  expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('`PORT=8081 npm start`');
  start = spawn('bash', ['-c', `PORT=${port} npm start`], { cwd: clone, env: plainEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/^Ready\. /m.test(output)) resolve();
    };
    start.stdout!.on('data', onData);
    start.stderr!.on('data', onData);
    start.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
  });
  banner = Object.fromEntries([...output.matchAll(/^\s*export (\w+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
}, 600_000);

afterAll(async () => {
  if (start?.exitCode === null) {
    const exited = new Promise((resolve) => start.once('exit', resolve));
    process.kill(-start.pid!, 'SIGTERM');
    await exited;
  }
  await receiver?.close();
  rmSync(clone, { recursive: true, force: true });
});

describe('npm start on a fresh clone', { timeout: 120_000 }, () => {
  it('says what it builds while it builds, each step with its time, before the banner', () => {
    const lines = output.split('\n');
    const bannerAt = lines.findIndex((line) => line.startsWith('Partner API (sandbox mode) listening on '));
    expect(bannerAt).toBeGreaterThan(0);
    const steps = ['the platform (dist/server)', 'the client package (dist/client)', 'the docs site (dist/docs)'];
    const times: string[] = [];
    for (const step of steps) {
      const started = lines.indexOf(`building ${step}...`);
      const ended = lines.findIndex((line) => line.startsWith(`built ${step} in `));
      expect(started, step).toBeGreaterThanOrEqual(0);
      expect(ended, step).toBeGreaterThan(started);
      expect(ended, step).toBeLessThan(bannerAt);
      times.push(lines[ended]!);
    }
    // The docs wait for the client they carry.
    expect(lines.indexOf('building the docs site (dist/docs)...')).toBeGreaterThan(lines.findIndex((l) => l.startsWith('built the client package')));
    console.log(`first npm start on a fresh clone:\n${times.join('\n')}`);
  });

  it("answers its root and the docs' menu paths with pages, not JSON 404s", async () => {
    const base = `http://127.0.0.1:${port}`;
    expect(banner.PARTNER_API_URL).toBe(base);
    const root = await fetch(`${base}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await root.text()).toContain('<a href="docs">The docs</a>');
    const docs = await fetch(`${base}/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain('href="#/section/getting-started"'); // the menu's links carry their route
    expect(html).not.toMatch(/href="\/(?!\/)/);
    const menuPath = await fetch(`${base}/section/getting-started`, { redirect: 'manual' });
    expect(menuPath.status).toBe(302);
    expect(menuPath.headers.get('location')).toBe('/docs#/section/getting-started');
  });

  it('accepts an order whose callbackUrl is on this machine, and its callback arrives, signed', async () => {
    expect(output).toContain('  callbacks: public addresses and this machine');
    const partner = createPartnerClient({ baseUrl: banner.PARTNER_API_URL!, apiKey: banner.PARTNER_API_KEY!, apiSecret: banner.PARTNER_API_SECRET! });
    const created = await partner.POST('/partner/v1/platforms/orders', { body: orderRequest('laptop-1', { callbackUrl: `${receiver.url}/callbacks/laptop-1` }) });
    expect(created.response.status).toBe(201);
    const deposit = await partner.POST('/sandbox/v1/orders/{uuid}/deposits', { params: { path: { uuid: created.data!.uuid } }, body: { amount: 2_500_000 } });
    expect(deposit.response.status).toBe(201);
    const [delivery] = await receiver.waitFor(1, (d) => d.path === '/callbacks/laptop-1');
    const event = await verifyCallback(delivery!.body, delivery!.headers as Record<string, string>, banner.PARTNER_CALLBACK_SECRET!);
    expect(event).toMatchObject({ event: 'order.deposit', uuid: created.data!.uuid, amount: 2_500_000, status: 'DONE' });
  });

  it("runs npx partner-api from the docs folder against the running platform's database", async () => {
    const { stdout, stderr } = await run('npx', ['partner-api', 'merchants', 'create', '--name', 'Docs shop', '--json'], { cwd: join(clone, 'docs'), env: plainEnv() });
    expect(stderr).toBe('');
    const merchant = JSON.parse(stdout) as { apiKey: string; apiSecret: string };
    const partner = createPartnerClient({ baseUrl: banner.PARTNER_API_URL!, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
    expect((await partner.POST('/partner/v1/platforms/orders', { body: orderRequest('docs-shop-1') })).response.status).toBe(201);
    expect(existsSync(join(clone, 'docs', 'data'))).toBe(false);
  });
});
