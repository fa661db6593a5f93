// The client package as a merchant holding only the docs gets it (issue 36, item 1): the platform's /docs
// opened in Chromium, the "Download the client" link read from the rendered page, `npm install <that
// link>` in an empty project (openapi-fetch from npm's own registry, no private registry in between), and
// the client imported and required there with plain node.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { NODE, npm, plainEnv, removeAll, ROOT, run } from '../support/packages.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

const contractVersion = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')).info.version as string;

let platform: TestPlatform;
let browser: Browser | undefined;
let project: string | undefined;

beforeAll(async () => {
  platform = await startTestPlatform('pglite');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  removeAll(project);
});

describe("the docs' client download", () => {
  it('is a link on the rendered /docs that npm installs into an empty project, and the client runs there', async () => {
    const page = await browser!.newPage();
    const link = page.getByRole('link', { name: 'Download the client (partner-api-client.tgz)' });
    await page.goto(`${platform.baseUrl}/docs`, { waitUntil: 'load' });
    await link.waitFor({ timeout: 20_000 });
    const href = new URL((await link.getAttribute('href'))!, page.url()).href;
    await page.close();
    expect(href).toBe(`${platform.baseUrl}/partner-api-client.tgz`);

    const served = await fetch(href);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('application/gzip');
    expect(served.headers.get('content-encoding')).toBeNull();
    expect(Buffer.from(await served.arrayBuffer()).equals(readFileSync(join(ROOT, 'dist/docs/partner-api-client.tgz')))).toBe(true);

    project = mkdtempSync(join(tmpdir(), 'partner-docs-download-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'merchant', version: '1.0.0', private: true }, null, 2));
    await npm(['install', href, '--prefer-offline', '--userconfig', join(project, '.no-user-npmrc')], project);
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/partner-api-client']).toMatchObject({ version: contractVersion, resolved: href });
    expect(lock.packages['node_modules/openapi-fetch'].resolved).toMatch(/^https:\/\/registry\.npmjs\.org\//);

    const check = (file: string, source: string) => {
      writeFileSync(join(project!, file), source);
      return run(NODE, [file], { cwd: project, env: plainEnv() });
    };
    const esm = await check('use.mjs', "import { createPartnerClient, verifyCallback } from 'partner-api-client';\nconsole.log(typeof createPartnerClient, typeof verifyCallback);\n");
    expect(esm, esm.stderr).toMatchObject({ code: 0, stdout: 'function function\n' });
    const cjs = await check('use.cjs', "const { createPartnerClient } = require('partner-api-client');\nconsole.log(typeof createPartnerClient, require('partner-api-client/openapi.json').info.version);\n");
    expect(cjs, cjs.stderr).toMatchObject({ code: 0, stdout: `function ${contractVersion}\n` });
  }, 180_000);
});
