// The platform as an operator gets it: `npm pack` of the repository (what `npm run build` wrote),
// installed with --omit=dev into an empty directory, and run there with plain node: no TypeScript
// loader, no dev dependency, nothing of this repository on the module path.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerClient } from '../../src/client/index.js';
import { installedPackages, installInEmptyProject, NODE, pack, plainEnv, removeAll, ROOT, run, tarballFiles } from '../support/packages.js';
import { startProcess, type Started } from '../support/processes.js';

const DEV_ONLY = ['tsx', 'vitest', 'typescript', 'solc', '@foundry-rs/anvil-linux-amd64', 'tronweb', 'autocannon', 'playwright-core', '@redocly/cli', '@stoplight/prism-cli', 'tsup', 'openapi-fetch'];

let tarball: string;
let project: string;
let bin: string;
let server: Started | undefined;
const env = plainEnv({ DATA_DIR: mkdtempSync(join(tmpdir(), 'partner-installed-')), LOG_LEVEL: 'warn' });

beforeAll(async () => {
  tarball = await pack(ROOT);
  project = await installInEmptyProject(tarball, { type: 'module', omitDev: true });
  bin = join(project, 'node_modules/partner-api/bin/partner-api.js');
}, 300_000);

afterAll(async () => {
  await server?.stop();
  removeAll(project, dirname(tarball), env.DATA_DIR);
});

describe('the platform package (partner-api)', () => {
  it('holds the compiled platform, the bundled contract, the docs and the migrations; no sources, tests or benches', async () => {
    const files = await tarballFiles(tarball);
    for (const file of ['bin/partner-api.js', 'dist/server/cli.js', 'dist/signing/index.js', 'dist/docs/index.html', 'dist/docs/partner-api-client.tgz', 'generated/openapi.json', 'dist/server/db/migrations/001_orders.sql', 'dist/server/payment-page/page.js', 'dist/server/payment-page/page.css', 'LICENSE', 'README.md']) {
      expect(files).toContain(file);
    }
    const strays = files.filter((f) => /^(src|test|bench|scripts|openapi|\.ci)\//.test(f) || /\.ts$/.test(f) && !f.endsWith('.d.ts'));
    expect(strays).toEqual([]);
    const migrations = files.filter((f) => f.startsWith('dist/server/db/migrations/'));
    const sources = readdirSync(join(ROOT, 'src/server/db/migrations')).filter((f) => f.endsWith('.sql'));
    expect(migrations.map((f) => f.replace('dist/server/db/migrations/', '')).sort()).toEqual(sources.sort());
  });

  it('installs with --omit=dev without any dev-only package', () => {
    const installed = installedPackages(join(project, 'node_modules'));
    expect(installed).toContain('fastify');
    expect(installed.filter((name) => DEV_ONLY.includes(name))).toEqual([]);
  });

  it('creates a merchant and serves signed creates and reads with plain node', async () => {
    const created = await run(NODE, [bin, 'merchants', 'create', '--name', 'installed shop', '--json'], { cwd: project, env });
    // The first command on an empty DATA_DIR says that it creates the database (issue 49).
    expect(created.stderr).toBe(`partner-api: DATA_DIR ${env.DATA_DIR} holds no database yet: creating a new, empty one in ${env.DATA_DIR}\n`);
    expect(created.code).toBe(0);
    const merchant = JSON.parse(created.stdout) as { apiKey: string; apiSecret: string };

    server = await startProcess(NODE, [bin, 'serve', '--port', '0'], /^Ready\. /m, env);
    const baseUrl = /listening on (http:\/\/\S+)/.exec(server.output())![1]!;
    const partner = createPartnerClient({ baseUrl, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
    const order = await partner.POST('/partner/v1/platforms/orders', {
      body: { externalId: 'installed-1', blockchain: 'Ethereum', currency: 'USDT', customerId: 'c-1', callbackUrl: 'https://merchant.example/cb' },
    });
    expect(order.error).toBeUndefined();
    expect(order.response.status).toBe(201);
    const read = await partner.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.data!.uuid } } });
    expect(read.response.status).toBe(200);
    expect(read.data!.address).toBe(order.data!.address);
    // The payment page, with the stylesheet and script the build copies beside the compiled platform.
    const page = await fetch(read.data!.paymentUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(order.data!.address);
    for (const asset of ['page.css', 'page.js']) expect((await fetch(`${baseUrl}/pay/${asset}`)).status, asset).toBe(200);

    const docs = await fetch(`${baseUrl}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('Partner API');
    const contract = await fetch(`${baseUrl}/openapi.json`);
    expect((await contract.json()).info.version).toBe(JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')).info.version);
    // The client package beside the docs, as the docs' link and the guide's install line reach it.
    const client = await fetch(`${baseUrl}/partner-api-client.tgz`);
    expect(client.headers.get('content-type')).toBe('application/gzip');
    expect(Buffer.from(await client.arrayBuffer()).equals(readFileSync(join(ROOT, 'dist/docs/partner-api-client.tgz')))).toBe(true);

    await server.stop();
    expect(server.process.exitCode).toBe(0);
  });
});
