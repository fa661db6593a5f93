// The reference built by `npm run docs` (docs/toolchain.md, docs/design.md#the-docs-site), opened offline in headless Chromium: it must
// render from the one file, send nothing anywhere, and show the operations and the signing guide.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureVectors } from '../fixtures/vectors.js';
import { launchChromium } from '../support/chromium.js';
import { sampledOperations, SAMPLE_LANGUAGES, SAMPLE_ORDER } from '../support/code-samples.js';

const output = fileURLToPath(new URL('../../dist/docs/index.html', import.meta.url));
const pageUrl = pathToFileURL(output).href;

/**
 * Requests that Redoc 3 starts and the page's Content-Security-Policy (openapi/docs-template.hbs)
 * refuses inside the browser, before any network: the footer logo, which has no option to turn it off.
 */
const KNOWN_CSP_BLOCKED = /^https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg$/;

let browser: Browser | undefined;
let context: BrowserContext;
let html: string;
/** Requests that reached the network layer: every one is aborted and must not exist. */
const external: string[] = [];
/** Requests to anything but file: and data: that the browser refused before sending, and why. */
const refused: { url: string; reason: string }[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  // Built by `npm run build` (npm test runs it first), never here: other tests serve and pack it meanwhile.
  if (!existsSync(output)) throw new Error(`${output} is missing: run npm run build (or npm run docs) first`);
  html = readFileSync(output, 'utf8');
  browser = await launchChromium();
  context = await browser.newContext({ serviceWorkers: 'block' });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    external.push(url);
    return route.abort();
  });
  context.on('requestfailed', (request) => {
    const url = request.url();
    if (!url.startsWith('file:') && !url.startsWith('data:') && !external.includes(url)) {
      refused.push({ url, reason: request.failure()?.errorText ?? '' });
    }
  });
});

afterAll(async () => {
  await browser?.close();
});

/** The tab the route and download tests read the page in: loaded once, then moved from route to route as a
 * reader's clicks move it (a load of the 2.6 MB page costs its renderer about 5 CPU-s). */
let tab: Page | undefined;

/**
 * Shows one Redoc route (`#/<tag>`, or the overview for '') in the tab, waits until the client-side
 * render shows `ready`, and returns the text a reader sees (scripts excluded: the raw contract sits in one).
 */
async function renderedText(route: string, ready: string): Promise<string> {
  if (!tab) {
    tab = await context.newPage();
    tab.on('pageerror', (error) => pageErrors.push(`${tab!.url()}: ${error.message}`));
  }
  await tab.goto(route ? `${pageUrl}#/${route}` : pageUrl, { waitUntil: 'load' });
  await tab.locator('#redoc').getByText(ready, { exact: true }).first().waitFor({ timeout: 15_000 });
  return tab.innerText('body');
}

describe('npm run docs: the offline reference', () => {
  // Plain includes with messages: a failing match on the 2.6 MB page would print all of it.
  it('inlines Redoc, turns telemetry off and restricts the page to itself', () => {
    expect(/<script[^>]+\bsrc=/i.test(html), 'a <script src> in the page').toBe(false);
    expect(/<link[^>]+\bhref=["']?https?:/i.test(html), 'a <link> to the web in the page').toBe(false);
    expect(html.includes('cdn.redocly.com/redoc/'), 'Redoc loaded from the CDN (missing --inlineBundle)').toBe(false);
    expect(html.includes('fonts.googleapis.com'), 'Google Fonts in the page').toBe(false);
    expect(html.includes('"disableTelemetry":true'), 'Redoc options without disableTelemetry: true').toBe(true);
    const csp = /<meta http-equiv="Content-Security-Policy"\s+content="([^"]*)"/.exec(html);
    expect(csp?.[1]).toBe("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'");
    // A policy in a <meta> only governs what comes after it.
    expect(csp!.index).toBeLessThan(html.search(/<script|<style|<link/i));
  });

  it('renders the overview with the Authentication guide and its worked example', async () => {
    const text = await renderedText('', 'Worked example');
    expect(text).toContain('Partner API');
    expect(text).toMatch(/^Authentication$/m);
    expect(text).toContain('X-Signature = lowercase hex( HMAC-SHA256( key = API secret as UTF-8, message ) )');
    expect(text).toContain('message     = X-Timestamp + METHOD + requestTarget + rawBody');
    const create = signatureVectors.cases.find((c) => c.name === 'create order')!;
    expect(text).toContain(signatureVectors.secret);
    expect(signatureVectors.secret).toBe('sk_test_4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a99');
    expect(text).toContain(`TIMESTAMP=${create.timestamp}`);
    expect(create.timestamp).toBe(1763700000);
    expect(text).toContain(create.signature);
    expect(create.signature).toBe('4d8076e1fe84bf029a60109a354706ea4e1688d7169269fd2fd3eb1a69fd3daa');
  });

  it('renders the deposit order operations on #/deposit-orders', async () => {
    const text = await renderedText('deposit-orders', '/partner/v2/platforms/orders/{uuid}');
    expect(text).toContain('Create a deposit order');
    expect(text).toContain('Read a deposit order');
    expect(text).toMatch(/^\/partner\/v1\/platforms\/orders$/m);
    expect(text).toMatch(/^\/partner\/v2\/platforms\/orders\/\{uuid\}$/m);
  });

  it('renders the withdrawal operation on #/withdrawals', async () => {
    const text = await renderedText('withdrawals', '/partner/v1/platforms/withdrawals/{uuid}');
    expect(text).toContain('Read a withdrawal');
    expect(text).toMatch(/^\/partner\/v1\/platforms\/withdrawals\/\{uuid\}$/m);
  });

  /**
   * Picks a language in the operation's right panel: a menu whose button names the language shown and
   * whose items name them all (the choice holds for every operation of the page).
   */
  async function chooseLanguage(page: Page, route: string, path: string, label: string) {
    const labels = new RegExp(`^(${SAMPLE_LANGUAGES.map((l) => l.label.replace(/[()+]/g, '\\$&')).join('|')}|Payload)$`);
    const menu = page.getByRole('button', { name: labels });
    // The operation's own panel (a tag's page also has a panel listing its operations' paths), within
    // the operation's section: two operations share a path (GET and POST /partner/v1/platforms/orders).
    const panel = page.locator(`[id="${route}"]`).getByTestId('right-panel').filter({ has: page.getByText(path, { exact: true }) }).filter({ has: menu });
    await panel.getByRole('button', { name: labels }).click();
    // A click event, not a pointer's click: Redoc sometimes opens the menu past the viewport's edge at
    // 1920 px, where a pointer cannot reach it (a CI run on Node 24); the choice is what is tested, below.
    await page.getByRole('menuitem', { name: label, exact: true }).dispatchEvent('click');
    await panel.getByRole('button', { name: label, exact: true }).waitFor();
    return panel;
  }

  // The route Redoc gives an operation: its tag's slug, then its operationId in lower case.
  const routeOf = (tag: string, operationId: string) => `${tag.toLowerCase().replaceAll(' ', '-')}/${operationId.toLowerCase()}`;

  for (const width of [1280, 1920]) {
    it(`shows every operation's curl, TypeScript and Python samples on its route, at ${width} px`, async () => {
      // A tab of its own, opened at its width: the route tests' tab, resized with the page open, once
      // missed a sample at 1920 px in CI (cause not found).
      const page = await context.newPage();
      await page.setViewportSize({ width, height: 1000 });
      page.on('pageerror', (error) => pageErrors.push(`samples at ${width} px: ${error.message}`));
      try {
        const operations = sampledOperations();
        expect(operations.map((o) => o.operationId).sort()).toEqual([...SAMPLE_ORDER].sort()); // all 14 of contract 1.4.0
        for (const operation of operations) {
          await page.goto(`${pageUrl}#/${routeOf(operation.tag, operation.operationId)}`, { waitUntil: 'load' });
          await page.getByText(operation.summary, { exact: true }).first().waitFor({ timeout: 15_000 });
          expect(operation.samples.map((s) => s.label)).toEqual(SAMPLE_LANGUAGES.map((l) => l.label));
          for (const sample of operation.samples) {
            const panel = await chooseLanguage(page, routeOf(operation.tag, operation.operationId), operation.path, sample.label);
            const longest = sample.source.split('\n').reduce((a, b) => (b.length > a.length ? b : a));
            // The menu's button names the language before its sample is drawn (a CI run on Node 20 read
            // the page in between): the text is awaited. innerText leaves scripts out: the raw contract sits in one.
            const shown = async () => (await page.innerText('body')).includes(longest);
            await expect.poll(shown, { message: `${operation.operationId} ${sample.label} at ${width} px lacks: ${longest}`, timeout: 10_000 }).toBe(true);
            // Readable whole: the sample's block wraps its lines within the panel, nothing scrolled out of sight.
            const block = panel.locator('pre').filter({ hasText: sample.source.split('\n')[0]! }).first();
            const fits = await block.evaluate((pre) => ({ scroll: pre.scrollWidth, client: pre.clientWidth, right: pre.getBoundingClientRect().right, panel: pre.closest('[data-testid="right-panel"]')!.getBoundingClientRect().right }));
            expect(fits.scroll, `${operation.operationId} ${sample.label} at ${width} px: lines cut off (${JSON.stringify(fits)})`).toBeLessThanOrEqual(fits.client);
            expect(fits.right).toBeLessThanOrEqual(fits.panel + 0.5);
          }
        }
      } finally {
        await page.close();
      }
    }, 180_000);
  }

  it('links a download of the contract, the file beside the page, which is generated/openapi.json', async () => {
    await renderedText('', 'Worked example');
    const link = tab!.getByRole('link', { name: 'Download the contract (openapi.json)' });
    await link.waitFor({ timeout: 15_000 });
    expect(await link.getAttribute('download')).not.toBeNull();
    const href = new URL((await link.getAttribute('href'))!, pageUrl);
    expect(href.href).toBe(new URL('openapi.json', pageUrl).href);
    const besidePage = readFileSync(fileURLToPath(href), 'utf8');
    expect(besidePage).toBe(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
  });

  it('lists only https servers (OWASP api8:2023-no-server-http) and shows their descriptions as written, no literal backticks', async () => {
    const contract = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
    // The OWASP ruleset's rule (Spectral, given $.servers..url): every server URL of the document is https.
    const urls: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'servers' && Array.isArray(value)) urls.push(...value.map((server: { url: string }) => server.url));
        walk(value);
      }
    };
    walk(contract);
    expect(urls).toEqual(['https://api.partner-platform.test', 'https://sandbox.partner-platform.test']);
    // Redoc shows a server's description as plain text: markdown's backticks would show as they are.
    await renderedText('deposit-orders/createdepositorder', 'Create a deposit order');
    await tab!.locator('[data-testid="dropdown-menu"]').filter({ hasText: contract.servers[0].description }).first().waitFor({ state: 'attached', timeout: 15_000 });
    const menus = (await tab!.locator('[data-testid="dropdown-menu"]').allTextContents()).join('\n');
    for (const server of contract.servers as { description: string }[]) {
      expect(menus).toContain(server.description);
      expect(server.description).not.toContain('`');
    }
    expect(menus).not.toContain('`');
  });

  it('links a download of the client package, the file beside the page', async () => {
    await renderedText('', 'Worked example');
    const link = tab!.getByRole('link', { name: 'Download the client (partner-api-client.tgz)' });
    await link.waitFor({ timeout: 15_000 });
    expect(await link.getAttribute('download')).not.toBeNull();
    expect(new URL((await link.getAttribute('href'))!, pageUrl).href).toBe(new URL('partner-api-client.tgz', pageUrl).href);
    expect(existsSync(new URL('partner-api-client.tgz', pageUrl))).toBe(true);
  });

  // Last, so that it covers every page the tests above opened.
  it('makes no network request and throws no error while rendering', () => {
    expect(external).toEqual([]);
    for (const { url, reason } of refused) {
      expect({ url, reason }).toEqual({ url: expect.stringMatching(KNOWN_CSP_BLOCKED), reason: 'csp' });
    }
    expect(pageErrors).toEqual([]);
  });
});
