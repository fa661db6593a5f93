// The payment page over HTTP on a real sandbox platform: the link in the contract's responses, returnUrl
// checked like callbackUrl, the page's headers, size and languages, a plain 404 for any other link,
// the per-caller quota, and nothing on the page that names the merchant, the customer or another order.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { PAYMENT_PAGE_CSP } from '../../../src/server/http/payment-page-routes.js';
import { readConfig } from '../../../src/server/config.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const ORDERS = '/partner/v1/platforms/orders';

describe("the page's settings", () => {
  const live = { PARTNER_API_MODE: 'live', SECRET_KEY: Buffer.alloc(32, 1).toString('base64'), TRON_XPUB: hdVectors.wallets[1]!.Tron.xpub, ETHEREUM_XPUB: hdVectors.wallets[1]!.Ethereum.xpub };

  it('takes PUBLIC_URL without its trailing slash, and refuses one payers should not be sent to', () => {
    expect(readConfig(live, { 'public-url': 'https://pay.example/shop/' }).publicUrl).toBe('https://pay.example/shop');
    expect(readConfig({}).publicUrl).toBeUndefined();
    expect(() => readConfig(live)).toThrow('PUBLIC_URL is required in live mode');
    expect(() => readConfig(live, { 'public-url': 'http://pay.example' })).toThrow('PUBLIC_URL must be https in live mode');
    for (const bad of ['pay.example', 'ftp://pay.example', 'https://u:p@pay.example', 'https://pay.example/?a=1', 'https://pay.example/#x']) {
      expect(() => readConfig({}, { 'public-url': bad }), bad).toThrow(/^PUBLIC_URL must be an absolute http\(s\) URL/);
    }
  });

  it('takes PAYMENT_PAGE_RATE_LIMIT as requests/seconds', () => {
    expect(readConfig({}).paymentPageRateLimit).toEqual({ limit: 300, windowSeconds: 60 });
    expect(() => readConfig({ PAYMENT_PAGE_RATE_LIMIT: 'lots' })).toThrow(/^PAYMENT_PAGE_RATE_LIMIT must be "requests\/seconds"/);
  });
});

describe('the request log', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('pglite', { logLevel: 'info' });
  });
  afterAll(() => t?.close());

  it("never holds a link's token, whatever spelling of the path reached the platform (issue 50, item 8)", async () => {
    const { data } = await t.client().POST(ORDERS, { body: orderRequest('logged-link') });
    const path = new URL(data!.paymentUrl).pathname;
    const token = path.split('/').at(-1)!;
    const spellings = [path, `${path}/state?lang=ru`, path.replace('/pay/', '/%70ay/'), path.replace('/pay/', '/p%61y/'), `/${path}`, path.replace('/pay/', '/pay//'), path.replace('/pay/', '/PAY/'), path.replace('/pay/', '/Pay/'), `${path.replace('/pay/', '/%2570ay/')}`, `/pay/${data!.uuid}/${token}/%2E%2E/x`, path.replace('/pay/', '/pay/./'), path.replace('/pay/', '/x/../pay/'), path.replace('/pay/', '/pay/%2e/'), path.replace('/pay/', '/./pay/'), path.replace('/pay/', '\\pay\\')];
    for (const spelling of spellings) {
      // Sent as written, as the path of the request line: fetch() and a URL string would tidy some of them up.
      const response = await new Promise<number>((resolve, reject) => {
        const { hostname, port } = new URL(t.baseUrl);
        const request = httpRequest({ hostname, port, path: spelling }, (res) => (res.resume(), resolve(res.statusCode!)));
        request.on('error', reject);
        request.end();
      });
      expect(response, spelling).toBeLessThan(500);
    }
    const lines = t.logs().filter((line) => line.includes('"url"'));
    expect(lines.length).toBeGreaterThanOrEqual(spellings.length);
    for (const line of lines) expect(line).not.toContain(token);
    expect(lines.join('\n')).toContain(`/pay/${data!.uuid}/…`);
  });
});

describe.each(DATABASES)('the payment page over HTTP on %s', (kind) => {
  let t: TestPlatform;
  let live: TestPlatform;
  beforeAll(async () => {
    [t, live] = await Promise.all([
      startTestPlatform(kind),
      startTestPlatform(kind, {
        env: { PARTNER_API_MODE: 'live', TRON_XPUB: hdVectors.wallets[1]!.Tron.xpub, ETHEREUM_XPUB: hdVectors.wallets[1]!.Ethereum.xpub, PAYMENT_PAGE_RATE_LIMIT: '3/60', PUBLIC_URL: 'https://pay.partner.example/checkout/', TRUSTED_PROXIES: '127.0.0.1' },
      }),
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await live?.close();
  });

  async function create(externalId: string, extra: Partial<ReturnType<typeof orderRequest>> = {}, platform = t) {
    const { data, error, response } = await platform.client().POST(ORDERS, { body: orderRequest(externalId, extra) });
    if (error) throw new Error(`${response.status} ${JSON.stringify(error)}`);
    return data!;
  }

  it('gives the link on create, on read and in the sandbox deposit answer; the same link each time', async () => {
    const order = await create('link-1', { returnUrl: 'https://merchant.example/orders/link-1' });
    expect(order.paymentUrl).toMatch(new RegExp(`^${t.baseUrl}/pay/${order.uuid}/[A-Za-z0-9_-]{22}$`));
    const read = await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } });
    expect(read.data!.paymentUrl).toBe(order.paymentUrl);
    const deposit = await t.signed('POST', `/sandbox/v1/orders/${order.uuid}/deposits`, { body: JSON.stringify({ amount: 1 }), headers: { 'Content-Type': 'application/json' } });
    expect(((await deposit.json()) as { paymentUrl: string }).paymentUrl).toBe(order.paymentUrl);
    // The replay answers the same order; another returnUrl under the same externalId is a conflict.
    expect((await create('link-1', { returnUrl: 'https://merchant.example/orders/link-1' })).paymentUrl).toBe(order.paymentUrl);
    const conflict = await t.client().POST(ORDERS, { body: orderRequest('link-1', { returnUrl: 'https://merchant.example/other' }) });
    expect(conflict.response.status).toBe(409);
    const without = await t.client().POST(ORDERS, { body: orderRequest('link-1') });
    expect(without.response.status).toBe(409);
  });

  it('takes a description on create: returned on create, read and callback, part of the idempotency check, shown escaped on the page', async () => {
    const description = 'Order <1001> & "tickets"';
    const order = await create('desc-1', { description });
    expect(order.description).toBe(description);
    const read = await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } });
    expect(read.data!.description).toBe(description);
    expect((await create('desc-1', { description })).uuid).toBe(order.uuid);
    for (const other of [{ description: 'Order 1002' }, {}]) {
      expect((await t.client().POST(ORDERS, { body: orderRequest('desc-1', other) })).response.status, JSON.stringify(other)).toBe(409);
    }
    const deposited = await t.signed('POST', `/sandbox/v1/orders/${order.uuid}/deposits`, { body: JSON.stringify({ amount: 1 }), headers: { 'Content-Type': 'application/json' } });
    expect(deposited.status).toBe(201);
    const [callback] = await t.db.query<{ body: string }>('SELECT body FROM callback_outbox WHERE order_uuid = $1', [order.uuid]);
    expect(JSON.parse(callback!.body).description).toBe(description);
    const html = await (await fetch(order.paymentUrl)).text();
    expect(html).toContain('<dd id="description">Order &lt;1001&gt; &amp; &quot;tickets&quot;</dd>');
    expect(html).not.toContain(description);
    // Without one, the order carries none.
    expect(await create('desc-none')).not.toHaveProperty('description');
    for (const bad of ['', 'x'.repeat(141), 'line\nbreak', 'tab\there', '\u0000']) {
      const { response, error } = await t.client().POST(ORDERS, { body: orderRequest(`desc-bad-${bad.length}`, { description: bad }) });
      expect(response.status, JSON.stringify(bad)).toBe(422);
      expect(error!.errors!.map((e) => e.pointer), JSON.stringify(bad)).toContain('/description');
    }
    expect((await create('desc-max', { description: 'я'.repeat(140) })).description).toHaveLength(140);
  });

  it('names the merchant by the display name the operator set, and no one without it', async () => {
    const credentials = await t.createMerchant('internal name 77');
    const { data } = await t.client(credentials).POST(ORDERS, { body: orderRequest('named-1') });
    expect(await (await fetch(data!.paymentUrl)).text()).not.toContain('id="merchant"');
    await t.platform.merchants.setDisplayName(credentials.apiKey, 'Acme & <Sons>');
    const html = await (await fetch(data!.paymentUrl)).text();
    expect(html).toContain('<dd id="merchant">Acme &amp; &lt;Sons&gt;</dd>');
    expect(html).not.toContain('internal name 77');
    await t.platform.merchants.setDisplayName(credentials.apiKey, null);
    expect(await (await fetch(data!.paymentUrl)).text()).not.toContain('id="merchant"');
    // The contract says so, and that the description shows (issue 49: it said "nothing that identifies you").
    const said = (JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, { description: string }> } }).components.schemas.PaymentUrl!.description.replace(/\s+/g, ' ');
    expect(said).toContain("Of you it shows the display name your platform's operator set for payers (no name without one) and the order's `description` if you sent one");
    expect(said).toContain("nothing else that identifies you or your customer (not `externalId`, `customerId` or `callbackUrl`, nor the operator's own name for you)");
  });

  it('builds links on PUBLIC_URL when it is set', async () => {
    const order = await create('public-1', {}, live);
    expect(order.paymentUrl).toMatch(new RegExp(`^https://pay\\.partner\\.example/checkout/pay/${order.uuid}/[A-Za-z0-9_-]{22}$`));
  });

  // A callback there is the platform's request, allowed only in a loopback-only sandbox
  // (test/server/http/sandbox.test.ts); a return URL is the payer's browser's, allowed in any sandbox.
  it('takes a return URL on the merchant\'s own machine in the sandbox', async () => {
    const order = await create('ret-local', { returnUrl: 'http://localhost:3000/thanks' });
    expect(order.paymentUrl).toContain(order.uuid);
  });

  it('checks returnUrl for live payers: refused with a problem naming it, and nothing is created', async () => {
    const before = await live.count('deposit_orders');
    for (const [returnUrl, detail] of [
      ['http://merchant.example/back', 'must be an https URL in live mode'],
      ['https://127.0.0.2/back', 'must not name a private, loopback, link-local or reserved address'],
      ['https://shop.internal/back', 'must not name a private, loopback, link-local or reserved address'],
      ['https://shop.home./back', 'must not name a private, loopback, link-local or reserved address'],
      ['https://web.service.consul/back', 'must not name a private, loopback, link-local or reserved address'],
      ['https://localhost/back', 'must not name a private, loopback, link-local or reserved address'],
      ['https://user:pw@merchant.example/back', 'must not carry a user name or password'],
    ] as const) {
      const { error, response } = await live.client().POST(ORDERS, { body: orderRequest(`ret-${returnUrl.length}`, { returnUrl }) });
      expect(response.status, returnUrl).toBe(422);
      expect(error!.errors?.map((e) => e.pointer), returnUrl).toContain('/returnUrl');
      if (!returnUrl.includes('@')) expect(error!.errors!.find((e) => e.pointer === '/returnUrl')!.detail, returnUrl).toBe(detail);
    }
    const javascript = await live.client().POST(ORDERS, { body: orderRequest('ret-js', { returnUrl: 'javascript:alert(1)' }) });
    expect(javascript.response.status).toBe(422);
    expect(await live.count('deposit_orders')).toBe(before);
  });

  it('serves the page with a CSP that allows nothing from elsewhere, no-store, no referrer, under 50 kB', async () => {
    const order = await create('page-1', { customerId: 'customer-secret-77', callbackUrl: 'https://merchant.example/hook-secret-88' });
    const response = await fetch(order.paymentUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(PAYMENT_PAGE_CSP);
    expect(PAYMENT_PAGE_CSP).toContain("default-src 'none'");
    expect(PAYMENT_PAGE_CSP).not.toMatch(/https?:|\*|unsafe/);
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(Buffer.byteLength(html)).toBeLessThan(50_000);
    expect(html).toContain(order.address);
    expect(html).not.toContain('customer-secret-77');
    expect(html).not.toContain('hook-secret-88');
    expect(html).not.toContain('page-1'); // the externalId
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script (the CSP would refuse it)
    expect(html).not.toMatch(/\sstyle=|<style/); // no inline style either
    // The state read carries the same, and nothing more.
    const state = await fetch(`${order.paymentUrl}/state`);
    expect(state.headers.get('content-security-policy')).toBe(PAYMENT_PAGE_CSP);
    const body = (await state.json()) as { state: string; version: string; html: string };
    expect(body.state).toBe('waiting');
    expect(body.html).toContain(order.address);
    expect(body.html).not.toContain('customer-secret-77');
  });

  it('answers a plain 404 page for an unknown, malformed or foreign link, the same for each', async () => {
    const [a, b] = [await create('404-a'), await create('404-b')];
    const tokenOf = (url: string) => url.split('/').at(-1)!;
    const base = t.baseUrl;
    const bad = [
      `${base}/pay/${a.uuid}/${tokenOf(b.paymentUrl)}`, // b's token on a's uuid
      `${base}/pay/${a.uuid}`,
      `${base}/pay/${a.uuid}/`,
      `${base}/pay/${a.uuid}/${tokenOf(a.paymentUrl)}x`,
      `${base}/pay/not-a-uuid/${tokenOf(a.paymentUrl)}`,
      `${base}/pay/00000000-0000-4000-8000-000000000000/${tokenOf(a.paymentUrl)}`,
      `${base}/pay/${a.uuid}/${tokenOf(a.paymentUrl)}/state/more`,
      `${base}/pay/${a.uuid}/${tokenOf(b.paymentUrl)}/state`,
      `${base}/pay`,
      `${base}/pay/`,
    ];
    for (const url of bad) {
      const response = await fetch(url);
      expect(response.status, url).toBe(404);
      expect(response.headers.get('content-type'), url).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy'), url).toBe(PAYMENT_PAGE_CSP);
      const html = await response.text();
      expect(html, url).toContain('<h1>Page not found</h1>');
      expect(html, url).not.toContain(a.address);
      expect(html, url).not.toContain(b.address);
    }
    // A known page of another merchant opens for whoever has its link, and the link is all it takes.
    expect((await fetch(a.paymentUrl)).status).toBe(200);
  });

  it('speaks the lang parameter, else the browser language, else English', async () => {
    const order = await create('lang-1');
    const page = async (query: string, acceptLanguage?: string) =>
      (await fetch(order.paymentUrl + query, { headers: acceptLanguage ? { 'Accept-Language': acceptLanguage } : {} })).text();
    expect(await page('')).toContain('<html lang="en"');
    expect(await page('', 'ru-RU,ru;q=0.9,en;q=0.8')).toContain('<html lang="ru"');
    expect(await page('', 'de-DE,ru;q=0.5,en;q=0.4')).toContain('Ожидаем оплату');
    expect(await page('', 'de-DE,fr;q=0.5')).toContain('Waiting for your payment');
    expect(await page('?lang=en', 'ru')).toContain('<html lang="en"');
    expect(await page('?lang=ru', 'en')).toContain('<html lang="ru"');
    expect(await page('?lang=xx', 'ru')).toContain('<html lang="ru"');
    const response = await fetch(order.paymentUrl);
    expect(response.headers.get('vary')).toContain('Accept-Language');
  });

  it("limits each caller's page reads, good links and bad alike (429 with Retry-After)", async () => {
    const order = await create('quota-1', {}, live);
    // The live platform's page is reached on its listen address; PUBLIC_URL is where payers would reach it.
    const local = order.paymentUrl.replace('https://pay.partner.example/checkout', live.baseUrl);
    const statuses = [];
    for (const url of [local, `${local}/state`, `${live.baseUrl}/pay/${order.uuid}/AAAAAAAAAAAAAAAAAAAAAA`, local]) {
      const response = await fetch(url);
      statuses.push(response.status);
      if (response.status === 429) {
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(response.headers.get('content-security-policy')).toBe(PAYMENT_PAGE_CSP);
        expect(await response.text()).toContain('Too many requests');
      }
    }
    expect(statuses).toEqual([200, 200, 404, 429]);
    // Behind the trusted proxy (TRUSTED_PROXIES), each payer it forwards has a quota of their own.
    expect((await fetch(local, { headers: { 'X-Forwarded-For': '198.51.100.7' } })).status).toBe(200);
    expect((await fetch(local, { headers: { 'X-Forwarded-For': '198.51.100.8' } })).status).toBe(200);
    // The merchants' API has its own quota, untouched.
    expect((await live.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: order.uuid } } })).response.status).toBe(200);
  });

  it('serves its stylesheet and script from memory with an ETag, compressed when asked', async () => {
    for (const [path, type] of [['/pay/page.css', 'text/css'], ['/pay/page.js', 'text/javascript']] as const) {
      const response = await fetch(t.baseUrl + path, { headers: { 'Accept-Encoding': 'br' } });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toContain(type);
      expect(response.headers.get('content-encoding')).toBe('br');
      const again = await fetch(t.baseUrl + path, { headers: { 'If-None-Match': response.headers.get('etag')! } });
      expect(again.status).toBe(304);
    }
  });
});
