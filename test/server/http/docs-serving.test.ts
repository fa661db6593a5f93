// The docs and the contract as the platform serves them: from memory, with an ETag and compression, and
// deep links under /docs that open the right section in a real browser. Needs `npm run build` first.
import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemError, TYPE_BASE } from '../../../src/server/http/problems.js';
import type { ProblemCode } from '../../../generated/schema.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform.js';

const docsFile = readFileSync(new URL('../../../dist/docs/index.html', import.meta.url));
const contract = JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8'));
/** Every code a problem carries: the contract's ProblemCode, and the withdrawals' refusals (WithdrawalProblemCode) not among them. */
const PROBLEM_CODES = [...new Set([...contract.components.schemas.ProblemCode.enum, ...contract.components.schemas.WithdrawalProblemCode.enum])] as ProblemCode[];
let platform: TestPlatform;
let browser: Browser;

beforeAll(async () => {
  platform = await startTestPlatform('pglite');
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(platform.baseUrl + path, { headers, redirect: 'manual' });

describe('the docs as the platform serves them', () => {
  it("states the page's own Content-Security-Policy as a header too, with no framing and no sniffing", async () => {
    const response = await get('/docs');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(docsFile.toString('utf8'))![1]!;
    expect(response.headers.get('content-security-policy')).toBe(`${meta}; frame-ancestors 'none'`);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await get('/openapi.json')).headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers with an ETag, and 304 when the client has it', async () => {
    const first = await get('/docs', { 'accept-encoding': 'identity' });
    expect(first.status).toBe(200);
    expect(Buffer.from(await first.arrayBuffer()).equals(docsFile)).toBe(true);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const again = await get('/docs', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const stale = await get('/docs', { 'if-none-match': '"something-else"', 'accept-encoding': 'identity' });
    expect(stale.status).toBe(200);
  });

  it('compresses with brotli or gzip as the client accepts, the same bytes inside', async () => {
    const raw = (path: string, encoding: string) =>
      new Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }>((resolve, reject) => {
        // node:http, because fetch decodes the body itself.
        import('node:http').then(({ get: httpGet }) =>
          httpGet(platform.baseUrl + path, { headers: { 'accept-encoding': encoding } }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (c: Buffer) => chunks.push(c));
            response.on('end', () => resolve({ encoding: response.headers['content-encoding'], vary: response.headers.vary, body: Buffer.concat(chunks) }));
          }).on('error', reject),
        );
      });
    const br = await raw('/docs', 'gzip, deflate, br');
    expect(br.encoding).toBe('br');
    expect(br.vary).toBe('Accept-Encoding');
    expect(br.body.length).toBeLessThan(docsFile.length / 3);
    expect(brotliDecompressSync(br.body).equals(docsFile)).toBe(true);
    const gzip = await raw('/docs', 'gzip');
    expect(gzip.encoding).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(docsFile)).toBe(true);
    const refusedBr = await raw('/docs', 'br;q=0, gzip');
    expect(refusedBr.encoding).toBe('gzip');
    const contract = await raw('/openapi.json', 'gzip');
    expect(gunzipSync(contract.body).toString()).toBe(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8'));
  });

  it('sends a path under /docs to its route, and anything odd to the page itself', async () => {
    for (const [path, location] of [
      ['/docs/section/errors', '/docs#/section/errors'],
      ['/docs/tag/deposit-orders/', '/docs#/tag/deposit-orders'],
      ['/docs/%0d%0aSet-Cookie:x', '/docs'],
      ['/docs/', '/docs'],
    ]) {
      const response = await get(path!);
      expect(response.status, path).toBe(302);
      expect(response.headers.get('location'), path).toBe(location);
    }
  });

  // Issue 49 (5): the platform's address leads a person somewhere.
  it('answers its root with a page of links: the docs, the contract, the client package, health and readiness', async () => {
    const response = await get('/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none';/);
    const html = await response.text();
    expect([...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1])).toEqual(['data:,', 'docs', 'openapi.json', 'partner-api-client.tgz', 'healthz', 'readyz']);
    expect(html).toContain('(sandbox mode)');
    expect(html).not.toMatch(/pk_test_|sk_test_|whsec_/); // credentials stay in the banner
    const page = await browser.newPage();
    try {
      await page.goto(`${platform.baseUrl}/`);
      expect(await page.locator('h1').innerText()).toBe('Partner API');
      for (const link of ['openapi.json', 'healthz', 'readyz', 'partner-api-client.tgz']) {
        const href = new URL((await page.locator(`a[href="${link}"]`).getAttribute('href'))!, page.url()).href;
        expect((await fetch(href)).status, link).toBe(200);
      }
      await page.getByRole('link', { name: 'The docs' }).click();
      await page.locator('[id="section/getting-started"]').waitFor({ timeout: 15_000 });
      expect(page.url()).toBe(`${platform.baseUrl}/docs`);
    } finally {
      await page.close();
    }
  });

  // Issue 49 (6): a link of the docs' menu opened in a new tab (or copied) opens its place in the docs.
  it("writes every link of the docs' menu with its fragment route, and each opens its place in a new tab", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${platform.baseUrl}/docs`);
      const menu = page.locator('[data-component-name="Menu/MenuItem"] > a');
      await menu.first().waitFor();
      const hrefs = await menu.evaluateAll((links) => links.map((link) => link.getAttribute('href')!));
      expect(hrefs.length).toBeGreaterThanOrEqual(13); // the title, 7 sections of the guide, 5 tags
      expect(hrefs.filter((href) => !href.startsWith('#/'))).toEqual([]);
      expect(hrefs).toEqual(expect.arrayContaining(['#/section/getting-started', '#/section/errors', '#/deposit-orders', '#/withdrawals', '#/sandbox']));
      for (const href of ['#/section/getting-started', '#/withdrawals']) {
        const url = new URL(href, page.url()).href;
        expect(url).toBe(`${platform.baseUrl}/docs${href}`);
        const tab = await browser.newPage(); // a new tab: nothing of the first page's state
        try {
          await tab.goto(url);
          const place = tab.locator(`[id="${href.slice(2)}"]`).first();
          await place.waitFor({ timeout: 15_000 });
          await expect.poll(async () => (await place.boundingBox())?.y ?? Infinity, { timeout: 10_000, message: url }).toBeLessThan(200);
        } finally {
          await tab.close();
        }
      }
      // The same routes from the root, as the menu wrote them before and such links were copied.
      for (const href of hrefs.filter((h) => h !== '#/')) {
        const response = await get(href.slice(1));
        expect(response.status, href).toBe(302);
        expect(response.headers.get('location'), href).toBe(`/docs${href}`);
      }
    } finally {
      await page.close();
    }
  });

  it('opens /docs/section/errors at the Errors section in Chromium', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${platform.baseUrl}/docs/section/errors`);
      const heading = page.locator('h1, h2', { hasText: /^Errors$/ }).first();
      await heading.waitFor();
      await expect.poll(async () => (await heading.boundingBox())?.y ?? Infinity, { timeout: 10_000 }).toBeLessThan(200);
      expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(500);
      expect(page.url()).toBe(`${platform.baseUrl}/docs#/section/errors`);
    } finally {
      await page.close();
    }
  });

  it("resolves every problem type, the platform's and the contract's examples', to its code's section of the docs", async () => {
    // A real problem, as a merchant gets it: its type, resolved against the URL called (RFC 9457).
    const called = `${platform.baseUrl}/partner/v1/platforms/orders`;
    const refused = await (await fetch(called, { method: 'POST' })).json();
    expect(refused.code).toBe('missing_credentials');
    expect(new URL(refused.type, called).href).toBe(`${platform.baseUrl}/docs#/section/errors/missing_credentials`);
    // Every code the platform writes, and every example of the contract, the same way.
    expect(PROBLEM_CODES).toHaveLength(27);
    const types = new Map(PROBLEM_CODES.map((code) => [code, new ProblemError(400, code, '').toProblem().type]));
    for (const [code, type] of types) expect(type).toBe(`${TYPE_BASE}${code}`);
    const examples = Object.values(contract.components.responses as Record<string, { content: Record<string, { examples?: Record<string, { value: { type: string; code: string } }> }> }>)
      .flatMap((response) => Object.values(response.content['application/problem+json']?.examples ?? {}));
    expect(examples.length).toBeGreaterThan(15);
    for (const { value } of examples) expect(value.type, value.code).toBe(types.get(value.code as ProblemCode));
    expect(contract.components.schemas.Problem.properties.type.example).toBe(types.get(contract.components.schemas.Problem.properties.type.example.split('/').pop()));

    const page = await browser.newPage();
    try {
      await page.setViewportSize({ width: 1280, height: 1000 });
      for (const [code, type] of types) {
        const url = new URL(type, called).href;
        await page.goto(url);
        const section = page.locator(`[id="section/errors/${code}"]`);
        await section.waitFor({ timeout: 15_000 });
        await expect.poll(async () => (await section.boundingBox())?.y ?? Infinity, { timeout: 10_000, message: url }).toBeLessThan(200);
        expect((await section.boundingBox())!.y, url).toBeGreaterThanOrEqual(-1);
        // The code's own heading (## <code> under the guide's Errors), in view.
        expect(await section.evaluate((heading) => [heading.tagName, heading.textContent?.trim()]), url).toEqual(['H2', code]);
        expect(page.url()).toBe(url);
      }
    } finally {
      await page.close();
    }
  }, 180_000);
});
