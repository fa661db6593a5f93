// The payment page in Chromium (playwright-core, Debian's /usr/bin/chromium) on a real sandbox platform:
// what a payer sees in each state, live updates from a sandbox deposit without a reload (also when the
// deposit is recorded by another process), the same facts with JavaScript off, axe-core, a 360 px
// phone, the CSP in force, and the bytes a first visit costs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedDepositOrder } from '../../../src/client/index.js';
import type { MerchantCredentials } from '../../../src/server/merchants/secrets.js';
import { paymentPageRoutes } from '../../../src/server/http/payment-page-routes.js';
import { createRateLimiter } from '../../../src/server/http/rate-limit.js';
import { creditTransfers } from '../../../src/server/orders/deposits.js';
import { expireOrders } from '../../../src/server/orders/expiry.js';
import { PaymentLinks } from '../../../src/server/payment-page/links.js';
import { pageOrderReader, type PageUnconfirmed } from '../../../src/server/payment-page/order.js';
import { pageContext } from '../../../src/server/payment-page/render.js';
import { orderRequest } from '../../fixtures/orders.js';
import { axeViolations, launchChromium, loadAxe } from '../../support/chromium.js';
import { startPartnerApi } from '../../support/partner-api.js';
import { startTestPlatform, testConfig, TEST_DATABASE_URL, TEST_SECRET_KEY, type TestPlatform } from '../../support/platform.js';
import { decodeQr } from '../../support/qr.js';

const HOUR = 3600_000;
let t: TestPlatform;
let browser: Browser;
let context: BrowserContext;
/** Added to the platform's clock: an order created while it is −2 h expired an hour ago. */
let clockOffset = 0;
/** Every request the pages made to anything but the platform (none may exist), and CSP refusals. */
const foreign: string[] = [];
const cspReports: string[] = [];
let sequence = 0;
/** A merchant whose display name the operator set: its pages name it. */
let shop: MerchantCredentials;
/**
 * The same pages served by a second app over the same database, whose reader adds transfers seen on
 * the chain and not yet confirmed (the chain watch of issue 33 fills them on the platform; until then
 * the page's part is tested with this reader).
 */
let watched: FastifyInstance;
let watchedBase = '';
const seenOnChain = new Map<string, PageUnconfirmed[]>();
const watchedLinks = new PaymentLinks(Buffer.alloc(32, 9), () => watchedBase);

async function newContext(options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const created = await browser.newContext({ serviceWorkers: 'block', ...options });
  await created.route('**/*', (route) => {
    const url = route.request().url();
    // A page left open polls once a second: a poll routed while its browser closes has nothing left to
    // continue or abort (Playwright then rejects with "Target page, context or browser has been closed").
    if (url.startsWith('data:') || [t.baseUrl, watchedBase].map((base) => new URL(base).origin).includes(new URL(url).origin)) return route.continue().catch(() => {});
    foreign.push(url);
    return route.abort().catch(() => {});
  });
  return created;
}

/** One tab a context, navigated from page to page: a new tab is a new renderer process, which made
 * the audits below cost five times the CPU of navigating one tab. */
const tabs = new Map<BrowserContext, Page>();

async function open(url: string, on: BrowserContext = context): Promise<Page> {
  let page = tabs.get(on);
  if (!page || page.isClosed()) {
    tabs.set(on, (page = await on.newPage()));
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) cspReports.push(message.text());
    });
  }
  const response = await page.goto(url, { waitUntil: 'load' });
  expect(response?.status(), url).toBeLessThan(500);
  return page;
}

async function createOrder(overrides: Parameters<typeof orderRequest>[1] = {}, merchant = t.merchant): Promise<CreatedDepositOrder> {
  const { data, error } = await t.client(merchant).POST('/partner/v1/platforms/orders', { body: orderRequest(`page-${++sequence}`, overrides) });
  if (error) throw new Error(JSON.stringify(error));
  return data!;
}

async function deposit(uuid: string, amount: number, platform = t, credentials = platform.merchant): Promise<void> {
  const response = await platform.signed('POST', `/sandbox/v1/orders/${uuid}/deposits`, {
    credentials,
    body: JSON.stringify({ amount }),
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `deposit-${++sequence}` },
  });
  expect(response.status).toBe(201);
}

/** A transfer credited as the chain scanner credits one (a real transaction id, not the sandbox's). */
async function chainDeposit(order: CreatedDepositOrder, amount: bigint, txHash: string): Promise<void> {
  const now = new Date();
  await t.db.transaction((tx) =>
    creditTransfers(tx, [{ network: order.blockchain, txHash, logIndex: 0, blockNumber: 1000n, blockTime: now, to: order.address, amount, source: 'chain' }], { now, at: now, watchWindowSeconds: 7 * 86_400 }),
  );
}

/** The facts list as "term: value" lines, the countdown's changing digits masked. */
async function facts(page: Page): Promise<string[]> {
  const rows = await page.locator('dl.facts > div').allInnerTexts();
  return rows.map((row) => row.replace(/\s*\n\s*/, ': ').replace(/\d+:\d\d(:\d\d)?$/, 'm:ss'));
}

const text = (page: Page) => page.locator('main').innerText();

beforeAll(async () => {
  t = await startTestPlatform('pglite', { now: () => Date.now() + clockOffset });
  shop = await t.createMerchant('shop, internal name');
  await t.platform.merchants.setDisplayName(shop.apiKey, 'Acme Tickets');
  const read = pageOrderReader(t.db);
  watched = Fastify();
  paymentPageRoutes(watched, {
    links: watchedLinks,
    readOrder: async (uuid) => {
      const order = await read(uuid);
      return order && { ...order, unconfirmed: seenOnChain.get(uuid) ?? [] };
    },
    context: pageContext(testConfig()),
    rateLimiter: createRateLimiter(10_000, 60, Date.now),
    now: () => Date.now() + clockOffset,
  });
  watchedBase = await watched.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
  context = await newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(t.baseUrl).origin });
});

afterAll(async () => {
  for (const tab of tabs.values()) await tab.close(); // their polling ends before the browser does
  await browser?.close();
  await watched?.close();
  await t?.close();
});

describe('the payment page in Chromium', () => {
  it('shows the network and token, a warning, the address with a copy button, its QR, the minimum and the time left', async () => {
    const order = await createOrder();
    const page = await open(order.paymentUrl);
    const shown = await text(page);
    expect(await page.locator('h1').innerText()).toBe('Pay with USDT on Tron');
    expect(await facts(page)).toEqual([
      'Network: Tron (TRC-20)',
      'Token: USDT',
      'Token contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      'Minimum to pay: 1 USDT',
      'Received so far: 0 USDT',
      'Still due: 1 USDT',
      `Deadline: ${order.expiredAt} UTC`,
    ]);
    // What to send and by when, side by side in the state's box (issue 49): the time left, the amount and its copy button.
    expect((await page.locator('.state').innerText()).replace(/\s+/g, ' ')).toMatch(/^Waiting for your payment Time left: (59|60):\d\d Send at least 1 USDT to the address below\. Copy amount$/);
    expect(await page.locator('#countdown').getAttribute('role')).toBe('timer'); // not announced every second
    expect(shown).toContain('Waiting for your payment');
    expect(shown).toContain('Send only USDT on Tron (TRC-20). Other tokens, and USDT on any other network');
    expect(shown).toContain('Sandbox: a test page. Do not send real funds');
    expect(await page.locator('#address').innerText()).toBe(order.address);
    // The QR as the payer's screen shows it, read back by a scanner: the bare address, no URI.
    const qr = await page.locator('img.qr').screenshot();
    expect(decodeQr(`data:image/png;base64,${qr.toString('base64')}`)).toBe(order.address);
    expect(decodeQr((await page.locator('img.qr').getAttribute('src'))!)).toBe(order.address);
    // The countdown runs: about an hour left, and a second later less.
    const first = await page.locator('#countdown').innerText();
    expect(first).toMatch(/^(59|60):\d\d$/);
    await page.waitForFunction((before) => document.getElementById('countdown')!.textContent !== before, first, { timeout: 3000 });
    // The copy button puts the address on the clipboard.
    await page.getByRole('button', { name: 'Copy address' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(order.address);
    await expect.poll(() => page.locator('button.copy').innerText()).toBe('Copied');
    // The amount's button puts the amount as wallets take it on the clipboard.
    await page.getByRole('button', { name: 'Copy amount' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('1');
    await expect.poll(() => page.locator('button.copy-amount').innerText()).toBe('Copied');
  });

  it('names the Ethereum network and its USDT contract on an Ethereum order', async () => {
    const order = await createOrder({ blockchain: 'Ethereum' });
    const page = await open(order.paymentUrl);
    expect(await facts(page)).toContain('Network: Ethereum (ERC-20)');
    expect(await facts(page)).toContain('Token contract: 0xdAC17F958D2ee523a2206206994597C13D831ec7');
    expect(await facts(page)).toContain('Minimum to pay: 10 USDT');
    expect(await text(page)).toContain('Send only USDT on Ethereum (ERC-20).');
  });

  it('shows a sandbox deposit without a reload (the page is told, not polled on a timer): partly paid with what is still due, then paid', async () => {
    const order = await createOrder({ returnUrl: 'https://merchant.example/orders/42' });
    const page = await open(order.paymentUrl);
    let loads = 0;
    const counted = () => loads++;
    page.on('load', counted);
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));

    await deposit(order.uuid, 400_000);
    await page.waitForFunction(() => document.getElementById('received')?.textContent === '0.4 USDT', undefined, { timeout: 10_000 });
    expect(await page.locator('.state h2').innerText()).toBe('Partly paid');
    expect(await text(page)).toContain('Send at least 0.6 USDT more to the same address');
    expect(await facts(page)).toContain('Still due: 0.6 USDT');
    // Partly paid, the amount to copy is what is still due.
    expect(await page.locator('#amount').innerText()).toBe('0.6');
    await expect.poll(() => page.getByRole('button', { name: 'Copy amount' }).isVisible()).toBe(true);
    expect(await page.locator('#address').innerText()).toBe(order.address);
    await expect.poll(() => page.getByRole('button', { name: 'Copy address' }).isVisible()).toBe(true);

    await deposit(order.uuid, 750_000);
    await page.waitForFunction(() => document.getElementById('received')?.textContent === '1.15 USDT', undefined, { timeout: 10_000 });
    expect(await page.locator('.state h2').innerText()).toBe('Paid');
    expect(await text(page)).toContain('Your payment is complete. Thank you!');
    expect(await text(page)).not.toContain('You can close this page'); // the way back is the button
    expect(await page.locator('#address').count()).toBe(0); // nothing more to pay
    const back = page.getByRole('link', { name: 'Back to the shop' });
    expect(await back.getAttribute('href')).toBe('https://merchant.example/orders/42');
    expect(await back.getAttribute('rel')).toBe('noreferrer');
    expect(await back.getAttribute('class')).toBe('back primary');
    // Each payment with its amount, time and transaction; the sandbox's are simulated, never linked.
    const payments = page.locator('.payments li');
    expect(await payments.count()).toBe(2);
    expect(await payments.nth(0).innerText()).toMatch(/^Amount\s+0\.4 USDT\s+Credited\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+Transaction\s+[0-9a-f]{64} \(simulated in the sandbox, not on a chain: no explorer link\)$/);
    expect(await payments.nth(1).innerText()).toContain('0.75 USDT');
    expect(await page.locator('.payments a').count()).toBe(0);
    // The same document all along.
    expect(loads).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(1);
    page.off('load', counted);
  });

  it('shows an expired order, says what happens to a late payment, and a late payment completing it', async () => {
    clockOffset = -2 * HOUR;
    const order = await createOrder();
    clockOffset = 0;
    const page = await open(order.paymentUrl);
    // Past expiredAt the payer is told so at once, before the expiry job has run.
    expect(await page.locator('.state h2').innerText()).toBe('This order has expired');
    expect(await text(page)).not.toContain('do not send');
    const until = new Date(Date.parse(`${order.expiredAt.replace(' ', 'T')}Z`) + 7 * 24 * HOUR).toISOString().replace('T', ' ').slice(0, 19);
    expect(await text(page)).toContain(`A payment that reaches this order's address on the chain by ${until} UTC (7 days after the deadline) is still credited to the order`);
    expect(await page.locator('#address').count()).toBe(0);
    expect(await page.locator('img.qr').count()).toBe(0);
    expect(await page.locator('#countdown').count()).toBe(0);
    expect(await expireOrders(t.db, new Date())).toBeGreaterThanOrEqual(1);
    await page.reload();
    expect(await page.locator('.state h2').innerText()).toBe('This order has expired');
    // As the platform handles it: a late deposit within the watch window is credited and completes the order.
    await deposit(order.uuid, 1_000_000);
    await page.waitForFunction(() => document.querySelector('.state h2')?.textContent === 'Paid', undefined, { timeout: 6000 });
    expect(await facts(page)).toContain('Received so far: 1 USDT');
  });

  it('shows the same facts with JavaScript off, as plain HTML', async () => {
    const order = await createOrder();
    await deposit(order.uuid, 250_000);
    const withScript = await open(order.paymentUrl);
    const noScript = await newContext({ javaScriptEnabled: false });
    const plain = await open(order.paymentUrl, noScript);
    expect(await facts(plain)).toEqual(await facts(withScript));
    expect(await facts(plain)).toContain('Received so far: 0.25 USDT');
    expect(await facts(plain)).toContain('Still due: 0.75 USDT');
    expect(await plain.locator('.state h2').innerText()).toBe('Partly paid');
    expect(await plain.locator('#address').innerText()).toBe(order.address);
    expect(decodeQr((await plain.locator('img.qr').getAttribute('src'))!)).toBe(order.address);
    expect(await plain.locator('#countdown').innerText()).toMatch(/^(59|60):\d\d$/);
    expect(await plain.locator('main').innerText()).toContain('Reload to see payments received since it opened');
    // The copy buttons need a script: hidden without one.
    expect(await plain.getByRole('button', { name: 'Copy address' }).isVisible()).toBe(false);
    expect(await plain.getByRole('button', { name: 'Copy amount' }).isVisible()).toBe(false);
    expect(await plain.locator('#amount').innerText()).toBe('0.75');
    await noScript.close();
  });

  it('speaks Russian to a Russian browser, and the lang parameter wins', async () => {
    const order = await createOrder();
    const russian = await newContext({ locale: 'ru-RU' });
    const page = await open(order.paymentUrl, russian);
    expect(await page.getAttribute('html', 'lang')).toBe('ru');
    expect(await page.locator('.state h2').innerText()).toBe('Ожидаем оплату');
    expect(await facts(page)).toContain('Минимальная сумма: 1 USDT');
    await deposit(order.uuid, 100_000);
    await page.waitForFunction(() => document.querySelector('.state h2')?.textContent === 'Оплачено частично', undefined, { timeout: 2000 });
    await page.getByRole('link', { name: 'English' }).click();
    await page.waitForURL(/\?lang=en$/);
    expect(await page.locator('.state h2').innerText()).toBe('Partly paid');
    await russian.close();
  });

  it("names the merchant and the order's description, escaped, and links each chain payment to the explorer", async () => {
    const description = '<b>Order</b> 1001 & "2 tickets"';
    const order = await createOrder({ description, customerId: 'customer-secret-5' }, shop);
    const txHash = 'ab'.repeat(32);
    await chainDeposit(order, 400_000n, txHash);
    await deposit(order.uuid, 100_000, t, shop);
    const page = await open(order.paymentUrl);
    expect(await page.locator('#merchant').innerText()).toBe('Acme Tickets');
    expect(await page.locator('#description').innerText()).toBe(description);
    expect(await page.locator('#description b').count()).toBe(0); // text, not markup
    expect(await text(page)).not.toContain('customer-secret-5');
    expect(await text(page)).not.toContain('shop, internal name');
    const link = page.locator('.payments a');
    expect(await link.count()).toBe(1);
    expect(await link.getAttribute('href')).toBe(`https://tronscan.org/#/transaction/${txHash}`);
    expect(await link.getAttribute('rel')).toBe('noreferrer');
    expect(await link.locator('code').innerText()).toBe(txHash);
    expect(await page.getByRole('link', { name: `${txHash} on the Tron block explorer` }).count()).toBe(1);
    expect(await page.locator('.payments li').nth(1).innerText()).toContain('simulated in the sandbox');
    // An order of a merchant without a display name names no one.
    const plain = await open((await createOrder()).paymentUrl);
    expect(await plain.locator('.payee').count()).toBe(0);
  });

  it('shows an expired, partly paid order with JavaScript off: what was received, what was due, and one sentence on late payments', async () => {
    clockOffset = -2 * HOUR;
    const order = await createOrder();
    await deposit(order.uuid, 400_000);
    clockOffset = 0;
    for (const [lang, received, due, late] of [
      ['en', 'Received so far: 0.4 USDT', 'Still due: 0.6 USDT', '0.4 USDT of the 1 USDT minimum was received: 0.6 USDT was still due at the deadline.'],
      ['ru', 'Получено: 0.4 USDT', 'Осталось оплатить: 0.6 USDT', 'Получено 0.4 USDT из минимальных 1 USDT: к сроку оставалось оплатить 0.6 USDT.'],
    ] as const) {
      const noScript = await newContext({ javaScriptEnabled: false });
      const page = await open(`${order.paymentUrl}?lang=${lang}`, noScript);
      expect(await facts(page)).toContain(received);
      expect(await facts(page)).toContain(due);
      const state = await page.locator('.state').innerText();
      expect(state).toContain(late);
      expect(state.match(lang === 'en' ? /credited/g : /зачисля/g)).toHaveLength(2); // one sentence: credited by …, not credited later
      expect(state).not.toMatch(/do not send|не отправляйте/);
      expect(await page.locator('.payments li').count()).toBe(1);
      expect(await page.locator('#address').count()).toBe(0);
      await noScript.close();
    }
  });

  it('says "payment seen, confirming n of m" while a transfer awaits its confirmations, and updates it live', async () => {
    const order = await createOrder();
    const url = watchedBase + watchedLinks.path(order.uuid);
    seenOnChain.set(order.uuid, [{ txId: 'cd'.repeat(32), amount: 500_000n, confirmations: 3, requiredConfirmations: 20 }]);
    const page = await open(url);
    expect(await page.locator('.seen').innerText()).toBe('Payment seen, confirming 3 of 20: 0.5 USDT');
    expect(await page.locator('.state h2').innerText()).toBe('Waiting for your payment');
    seenOnChain.set(order.uuid, [{ txId: 'cd'.repeat(32), amount: 500_000n, confirmations: 4, requiredConfirmations: 20 }]);
    await page.waitForFunction(() => document.querySelector('.seen')?.textContent === 'Payment seen, confirming 4 of 20: 0.5 USDT', undefined, { timeout: 2000 });
    const russian = await open(`${url}?lang=ru`);
    expect(await russian.locator('.seen').innerText()).toBe('Платёж замечен, подтверждений 4 из 20: 0.5 USDT');
    seenOnChain.delete(order.uuid);
  });

  it('says a paid order without a return link is complete and can be closed', async () => {
    const order = await createOrder();
    await deposit(order.uuid, 1_000_000);
    const page = await open(order.paymentUrl);
    expect(await page.locator('.state p').first().innerText()).toBe('Your payment is complete. Thank you! You can close this page.');
    expect(await page.locator('a.back').count()).toBe(0);
  });

  /** A page audited below, and what must be in the first screen on it. */
  interface Audited {
    url: string;
    /** The QR code, the address, its copy button and the heading naming network and token; the time left, the amount and its copy button. */
    address: boolean;
    /** The prominent way back to the shop. */
    back?: boolean;
  }
  let audited: Promise<Audited[]> | undefined;
  /** The pages audited below, made once: each state of an order (with a long return link), and the page for a wrong link. */
  function auditedPages() {
    audited ??= (async () => {
      const returnUrl = 'https://merchant.example/orders/a-rather-long-path/that/goes/on/and/on/and/on';
      const waiting = await createOrder({ returnUrl });
      // The most above the address: a merchant's name, a description of the longest kind, payments.
      const partial = await createOrder({ blockchain: 'Ethereum', returnUrl, description: 'Order 1001: two tickets for the evening show, row 12, seats 7 and 8, collected at the box office ' + 'x'.repeat(43) }, shop);
      await chainDeposit(partial, 2_000_000n, `0x${'ef'.repeat(32)}`);
      await deposit(partial.uuid, 500_000, t, shop);
      const done = await createOrder({ returnUrl: 'https://merchant.example/orders/8' });
      await deposit(done.uuid, 1_000_000);
      const doneNoReturn = await createOrder();
      await deposit(doneNoReturn.uuid, 1_000_000);
      clockOffset = -2 * HOUR;
      const expired = await createOrder();
      const expiredPartial = await createOrder({ description: 'Order 1002' }, shop);
      await deposit(expiredPartial.uuid, 300_000, t, shop);
      clockOffset = 0;
      // The most of all above the address: all of the above, and two transfers seen on the chain.
      const seen = await createOrder({ description: 'Заказ 1001: два билета на вечерний сеанс, ряд 12, места 7 и 8, получение в кассе кинотеатра ' + 'ж'.repeat(45) }, shop);
      await deposit(seen.uuid, 200_000, t, shop);
      seenOnChain.set(seen.uuid, [
        { txId: 'aa'.repeat(32), amount: 700_000n, confirmations: 1, requiredConfirmations: 20 },
        { txId: 'bb'.repeat(32), amount: 100_000n, confirmations: 19, requiredConfirmations: 20 },
      ]);
      return [
        { url: waiting.paymentUrl, address: true }, // Tron, nothing paid
        { url: partial.paymentUrl, address: true }, // Ethereum, partly paid, merchant, description, a linked and a simulated payment
        { url: watchedBase + watchedLinks.path(seen.uuid), address: true }, // partly paid, two transfers seen, confirming
        { url: done.paymentUrl, address: false, back: true },
        { url: doneNoReturn.paymentUrl, address: false },
        { url: expired.paymentUrl, address: false },
        { url: expiredPartial.paymentUrl, address: false },
        { url: `${t.baseUrl}/pay/${waiting.uuid}/nope`, address: false },
      ];
    })();
    return audited;
  }

  // One context a screen, axe-core loaded into it once (32 audits of about a second each, on a shared machine).
  for (const viewport of [{ width: 360, height: 740 }, { width: 1280, height: 800 }]) {
    const phone = viewport.width === 360;
    it(`fits a ${phone ? '360 px phone' : '1280 px desktop'} without horizontal scroll, the QR code, the address, the time left and the amount in the first screen, and axe-core finds no violations, in every state and both languages`, async () => {
      const sized = await newContext({ viewport, isMobile: phone, hasTouch: phone });
      await loadAxe(sized);
      const boxes: string[] = [];
      try {
        for (const { url, address, back } of await auditedPages()) {
          for (const lang of ['en', 'ru']) {
            const where = `${url} ${lang} at ${viewport.width} px`;
            const page = await open(`${url}?lang=${lang}`, sized);
            const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
            expect(scroll, where).toBeLessThanOrEqual(client);
            expect(client, where).toBe(viewport.width);
            const shown = page.locator('#address');
            if (address) expect(await shown.count(), where).toBe(1);
            // The first screen, as the page opens (not scrolled): what a payer scans or copies is on it, whole.
            const firstScreen = [...(address ? ['img.qr', '#address', 'button.copy', '#address-heading', '#countdown', '#amount', 'button.copy-amount'] : []), ...(back ? ['a.back.primary'] : [])];
            if (address) await expect.poll(() => page.locator('button.copy').isVisible()).toBe(true);
            if (address) await expect.poll(() => page.locator('button.copy-amount').isVisible()).toBe(true);
            for (const selector of firstScreen) {
              const box = (await page.locator(selector).boundingBox())!;
              expect(box, `${where}: ${selector}`).not.toBeNull();
              expect(box.y, `${where}: ${selector} top`).toBeGreaterThanOrEqual(0);
              expect(box.x, `${where}: ${selector} left`).toBeGreaterThanOrEqual(0);
              expect(box.y + box.height, `${where}: ${selector} bottom`).toBeLessThanOrEqual(viewport.height);
              expect(box.x + box.width, `${where}: ${selector} right`).toBeLessThanOrEqual(viewport.width);
              if (!address) continue;
              boxes.push(`${lang} ${selector} ${Math.round(box.x)},${Math.round(box.y)} ${Math.round(box.width)}×${Math.round(box.height)}`);
            }
            if (address) {
              const heading = await page.locator('#address-heading').innerText();
              expect(heading, where).toMatch(/USDT/);
              expect(heading, where).toMatch(/(Tron \(TRC-20\)|Ethereum \(ERC-20\))/);
            }
            expect(await axeViolations(page), where).toEqual([]);
          }
        }
      } finally {
        console.log(`payment page first screen at ${viewport.width}×${viewport.height} (Tron waiting; Ethereum partly paid with merchant, description and payments; Tron partly paid with all that and two transfers seen):\n${boxes.join('\n')}`);
        await sized.close();
      }
    }, 360_000);
  }

  it('costs at most 50 kB on a first visit, all of it from the platform, within its CSP', async () => {
    const order = await createOrder({ blockchain: 'Ethereum', returnUrl: 'https://merchant.example/orders/9' });
    const fresh = await newContext();
    const page = await fresh.newPage();
    const sizes: Promise<number>[] = [];
    const countSize = (request: { sizes(): Promise<{ responseHeadersSize: number; responseBodySize: number }> }) => {
      const size = request.sizes().then((s) => s.responseHeadersSize + s.responseBodySize);
      // The page's live updates go on: one that finishes as the context closes is not counted, and its
      // rejected size ('page closed') must not end the run as an unhandled rejection.
      size.catch(() => {});
      sizes.push(size);
    };
    page.on('requestfinished', countSize);
    const response = (await page.goto(order.paymentUrl, { waitUntil: 'load' }))!;
    expect(response.headers()['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;/);
    // The page's script ran under the policy (it shows the copy button), and its stylesheet applied.
    await expect.poll(() => page.getByRole('button', { name: 'Copy address' }).isVisible()).toBe(true);
    expect(await page.locator('body').evaluate((body) => getComputedStyle(body).backgroundColor)).toBe('rgb(244, 245, 247)');
    const total = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
    expect(sizes.length).toBeGreaterThanOrEqual(3); // the page, its stylesheet, its script
    expect(total).toBeLessThanOrEqual(50_000);
    console.log(`payment page first visit: ${sizes.length} responses, ${total} bytes transferred`);
    page.off('requestfinished', countSize);
    await fresh.close();
  });

  it('loaded nothing from elsewhere and broke no CSP rule on any page above', () => {
    expect(foreign).toEqual([]);
    expect(cspReports).toEqual([]);
  });
});

describe.runIf(TEST_DATABASE_URL)('live updates across processes (PostgreSQL)', () => {
  it('shows a deposit that another process recorded within 2 s', async () => {
    const shared = await startTestPlatform('postgres');
    const dataDir = mkdtempSync(join(tmpdir(), 'partner-page-'));
    // A second platform process on the same database and master key: the page is served by it, the
    // deposit recorded by the in-process platform.
    const other = await startPartnerApi({ DATABASE_URL: shared.databaseUrl!, SECRET_KEY: TEST_SECRET_KEY, DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    const tab = await browser.newContext();
    try {
      const { data: order } = await shared.client().POST('/partner/v1/platforms/orders', { body: orderRequest('across-1') });
      const onOther = order!.paymentUrl.replace(shared.baseUrl, other.baseUrl);
      expect(onOther.startsWith(other.baseUrl)).toBe(true);
      const page = await tab.newPage();
      await page.goto(onOther, { waitUntil: 'load' });
      expect(await page.locator('#received').innerText()).toBe('0 USDT');
      await deposit(order!.uuid, 300_000, shared);
      await page.waitForFunction(() => document.getElementById('received')?.textContent === '0.3 USDT', undefined, { timeout: 2000 });
    } finally {
      await tab.close();
      await other.stop();
      await shared.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
