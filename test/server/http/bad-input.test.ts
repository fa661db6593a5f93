// Bad input gets a clear problem and changes nothing; no 5xx for anything a caller can send.
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { contractViolations } from '../../support/contract.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const ORDERS = '/partner/v1/platforms/orders';
const valid = orderRequest('bad-input-1');
const JSON_TYPE = { 'Content-Type': 'application/json' };

/** A second public test wallet: live mode refuses the sandbox one. */
const liveEnv = {
  PARTNER_API_MODE: 'live',
  PUBLIC_URL: 'https://pay.partner.example',
  TRON_XPUB: hdVectors.wallets[1]!.Tron.xpub,
  ETHEREUM_XPUB: hdVectors.wallets[1]!.Ethereum.xpub,
};

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await response.json()) as { status: number; code: string; errors?: { pointer: string; detail: string }[] };
}

async function rowCounts(t: TestPlatform) {
  return [await t.count('deposit_orders'), await t.count('withdrawals'), await t.count('merchants')];
}

describe.each(DATABASES)('bad input on %s', (kind) => {
  let sandbox: TestPlatform;
  let live: TestPlatform;
  beforeAll(async () => {
    [sandbox, live] = await Promise.all([startTestPlatform(kind), startTestPlatform(kind, { env: liveEnv })]);
  });
  afterAll(async () => {
    await sandbox?.close();
    await live?.close();
  });

  it('answers malformed JSON with 400, wrong or missing content types with 415, a body over 16 KiB with 413', async () => {
    const before = await rowCounts(sandbox);
    const cases: [number, string, Parameters<TestPlatform['signed']>[2]][] = [
      [400, 'malformed_json', { body: '{"externalId":', headers: JSON_TYPE }],
      [400, 'malformed_json', { body: '', headers: JSON_TYPE }],
      [400, 'malformed_json', { body: new Uint8Array([0x7b, 0xff, 0x7d]), headers: JSON_TYPE }],
      [415, 'unsupported_media_type', { body: JSON.stringify(valid), headers: { 'Content-Type': 'text/plain' } }],
      [415, 'unsupported_media_type', { body: JSON.stringify(valid), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }],
      [415, 'unsupported_media_type', { body: JSON.stringify(valid) }],
      [413, 'payload_too_large', { body: JSON.stringify({ ...valid, customerId: 'x'.repeat(17_000) }), headers: JSON_TYPE }],
      // Issue 50: a key twice took the last one; another reader of the signed body could take the first.
      [400, 'malformed_json', { body: `{"externalId":"dup-1",${JSON.stringify(valid).slice(1)}`, headers: JSON_TYPE }],
      [400, 'malformed_json', { body: `{"externalId":"dup-2","ext\\u0065rnalId":"dup-3",${JSON.stringify({ ...valid, externalId: undefined }).slice(1)}`, headers: JSON_TYPE }],
    ];
    for (const [status, code, options] of cases) {
      const response = await sandbox.signed('POST', ORDERS, options);
      expect(response.status, code).toBe(status);
      expect((await problemOf(response)).code).toBe(code);
    }
    expect(await rowCounts(sandbox)).toEqual(before);
  });

  it.each([
    ['an unknown field', { ...valid, amount: 5 }, '/amount'],
    ['a missing field', { ...valid, customerId: undefined }, '/customerId'],
    ['a wrong type', { ...valid, externalId: 42 }, '/externalId'],
    ['an over-long string', { ...valid, customerId: 'c'.repeat(129) }, '/customerId'],
    ['an empty string', { ...valid, externalId: '' }, '/externalId'],
    ['a control character', { ...valid, customerId: 'a\u0000b' }, '/customerId'],
    ['an unpaired surrogate', { ...valid, externalId: 'x\ud800' }, '/externalId'],
    ['an unknown field with a very long name', { ...valid, ['k'.repeat(600)]: 1 }, ''],
    ['a network outside the enum', { ...valid, blockchain: 'Bitcoin' }, '/blockchain'],
    ['a currency outside the enum', { ...valid, currency: 'USDC' }, '/currency'],
    ['a callback URL with credentials', { ...valid, callbackUrl: 'https://user:pw@merchant.example/cb' }, '/callbackUrl'],
    ['a callback URL over 2048 characters', { ...valid, callbackUrl: 'https://merchant.example/' + 'a'.repeat(2048) }, '/callbackUrl'],
    ['a relative callback URL', { ...valid, callbackUrl: '/callbacks' }, '/callbackUrl'],
    ['a body that is no object', [valid], ''],
  ])('answers %s with 422 naming the field, and stores nothing', async (_, body, pointer) => {
    const before = await rowCounts(sandbox);
    const response = await sandbox.signed('POST', ORDERS, { body: JSON.stringify(body), headers: JSON_TYPE });
    expect(response.status).toBe(422);
    const problem = await problemOf(response);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors?.map((e) => e.pointer)).toContain(pointer);
    expect(await rowCounts(sandbox)).toEqual(before);
  });

  it.each([
    ['plain http', 'http://merchant.example/cb'],
    ['a loopback IP', 'https://127.0.0.1/cb'],
    ['localhost', 'https://localhost:8443/cb'],
    // Loopback forms only: private and link-local ranges are classified in callbacks/destinations.test.ts.
    ['a loopback IP elsewhere in 127.0.0.0/8', 'https://127.0.0.2/cb'],
    ['an IPv6 loopback', 'https://[::1]/cb'],
    ['an IPv4-mapped loopback IPv6', 'https://[::ffff:127.0.0.1]/cb'],
    ['a name that resolves only inside a network (mDNS)', 'https://printer.local/cb'],
    ['a single-label name', 'https://intranet/cb'],
    ['a cloud-internal name', 'https://metadata.google.internal/computeMetadata/v1/'],
    // Issue 50, item 9: names never delegated in the public DNS, or only ever answered inside a network.
    ['a home-network name', 'https://x.home/cb'],
    ['a .mail name', 'https://x.mail/cb'],
    ['a .corp name with the trailing dot', 'https://erp.corp./cb'],
    ['a .localdomain name', 'https://host.localdomain/cb'],
    ['a reverse-DNS name', 'https://1.0.0.10.in-addr.arpa/cb'],
    ['an IPv6 reverse-DNS name', 'https://1.0.0.0.ip6.arpa/cb'],
    ['a Kubernetes service name', 'https://api.default.svc/cb'],
    ['a Consul name', 'https://web.service.consul/cb'],
    ['a home-network name with the trailing dot', 'https://x.home./cb'],
    ['a Kubernetes service name with the trailing dot', 'https://api.default.svc./cb'],
  ])('refuses a callback URL with %s in live mode', async (_, callbackUrl) => {
    const before = await rowCounts(live);
    const response = await live.signed('POST', ORDERS, { body: JSON.stringify({ ...valid, callbackUrl }), headers: JSON_TYPE });
    expect(response.status).toBe(422);
    expect((await problemOf(response)).errors?.[0]?.pointer).toBe('/callbackUrl');
    expect(await rowCounts(live)).toEqual(before);
  });

  it('answers made-up payment links with 404 and logs nothing at error level', async () => {
    for (const path of ['/pay/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b/made-up', '/pay/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b/made-up/state', '/pay/x/y']) {
      // The payer's pages are HTML, not an operation of the contract: fetched as a browser would.
      expect((await fetch(sandbox.baseUrl + path)).status, path).toBe(404);
    }
    expect(sandbox.errorLogs()).toEqual([]);
  });

  it('accepts a plain http callback URL in sandbox mode only', async () => {
    const body = JSON.stringify({ ...valid, externalId: 'sandbox-http', callbackUrl: 'http://merchant.example/cb' });
    expect((await sandbox.signed('POST', ORDERS, { body, headers: JSON_TYPE })).status).toBe(201);
    const publicHttps = JSON.stringify({ ...valid, externalId: 'live-https' });
    expect((await live.signed('POST', ORDERS, { body: publicHttps, headers: JSON_TYPE })).status).toBe(201);
  });

  it('answers junk at every endpoint without a 5xx, and a refused request changes no row', async () => {
    const paths = [
      ORDERS,
      '/partner/v2/platforms/orders/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b',
      '/partner/v1/platforms/withdrawals/5d1c2b3a-4e5f-4a6b-9c7d-8e9f0a1b2c3d',
      '/partner/v1/platforms/withdrawals?status=DONE&limit=5',
      '/partner/v1/platforms/orders?limit=100&cursor=abc.def',
      '/partner/v1/platforms/events?type=order.deposit',
      '/partner/v1/platforms/events/msg_p5jXN8AQM9LWM0D4loKWxJek/deliveries',
      '/partner/v1/platforms/events/msg_p5jXN8AQM9LWM0D4loKWxJek/redeliver',
    ];
    const junkValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.object({ maxDepth: 1 }));
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json(),
      fc.record({ externalId: junkValue, blockchain: fc.oneof(junkValue, fc.constantFrom('Tron', 'Ethereum')), currency: junkValue, customerId: junkValue, callbackUrl: junkValue }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    );
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
      path: fc.oneof(fc.constantFrom(...paths), fc.constantFrom(...paths).chain((p) => fc.webSegment().map((s) => `${p.replace(/[^/]+$/, '')}${s}`)), fc.webPath()),
      body: fc.option(body, { nil: undefined }),
      contentType: fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', ''),
      signed: fc.boolean(),
      junkHeaders: fc.dictionary(fc.constantFrom('x-api-key', 'x-timestamp', 'x-signature'), fc.string({ maxLength: 80 }).filter((s) => /^[\x21-\x7e]*$/.test(s)), { maxKeys: 2 }),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path, body, contentType, signed, junkHeaders }) => {
        const target = path.startsWith('/') ? path : `/${path}`;
        const withBody = body !== undefined && method !== 'GET';
        const before = await rowCounts(sandbox);
        const headers: Record<string, string> = { ...(contentType ? { 'Content-Type': contentType } : {}), ...(signed ? {} : junkHeaders) };
        const init = { headers, ...(withBody ? { body } : {}) };
        let response: Response;
        try {
          response = signed
            ? await sandbox.signed(method, target, init)
            : await sandbox.fetch(target, { method, ...init });
        } catch (error) {
          // The harness throws on contract violations of the contract's own operations; paths outside the
          // contract only need a clean problem, checked below.
          if (!/is no operation of the contract/.test(String(error))) throw error;
          response = await fetch(sandbox.baseUrl + target, { method, ...init });
        }
        expect(response.status, `${method} ${target}`).toBeLessThan(500);
        if (response.status >= 400) {
          expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          expect(await rowCounts(sandbox)).toEqual(before);
        }
      }),
      { numRuns: 250 },
    );
  });

  it('logged no line at error level for any of it (bad input is the caller\'s, never the platform\'s error)', () => {
    expect([...sandbox.errorLogs(), ...live.errorLogs()]).toEqual([]);
  });
});

/**
 * Sends bytes on a raw socket and returns the response the server wrote: as soon as it is whole (its
 * Content-Length received), or with `untilClosed` once the server has closed the connection; `closed`
 * says whether it did within `waitMs`.
 */
function rawExchange(
  baseUrl: string,
  bytes: string,
  { waitMs = 5000, untilClosed = false } = {},
): Promise<{ status: number; contentType: string | undefined; body: string; closed: boolean }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    const parts = () => {
      const end = received.indexOf('\r\n\r\n');
      return end === -1 ? undefined : { head: received.slice(0, end), body: received.slice(end + 4) };
    };
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const { head, body } = parts() ?? { head: received, body: '' };
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), contentType: /^content-type: (.*)$/im.exec(head)?.[1], body, closed });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('data', (chunk) => {
      received += chunk.toString();
      const response = parts();
      const length = response && /^content-length: (\d+)$/im.exec(response.head)?.[1];
      if (!untilClosed && length !== undefined && Buffer.byteLength(response!.body) >= Number(length)) done(false);
    });
    socket.on('end', () => done(true));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe("the HTTP layer's refusals", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('pglite', { env: { REQUEST_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(async () => t?.close());

  const order = '/partner/v2/platforms/orders/';
  it.each([
    ['a malformed percent-escape in a path id', `GET ${order}%zz HTTP/1.1\r\nHost: x\r\n\r\n`, 400, 'bad_request'],
    ['a malformed percent-escape anywhere', 'GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad_request'],
    ['a path segment over 2048 characters', `GET ${order}${'a'.repeat(3000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414, 'uri_too_long'],
    ['a request target over 16 KiB', `GET ${order}${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'headers_too_large'],
    ['headers over 16 KiB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ['a request that is not HTTP', 'GARBAGE\r\n\r\n', 400, 'bad_request'],
  ])('answers %s with a problem', async (_, bytes, status, code) => {
    const response = await rawExchange(t.baseUrl, bytes);
    expect(response.status).toBe(status);
    expect(response.contentType).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(response.body)).toMatchObject({ status, code, type: `/docs#/section/errors/${code}` });
    if (status !== 400) expect(contractViolations('GET', `${order}00000000-0000-4000-8000-000000000000`, status, response.contentType!, response.body)).toEqual([]);
  });

  it('answers a body that never completes with 408 within the request timeout, closes the connection and stores nothing', async () => {
    const before = await rowCounts(t);
    const started = Date.now();
    const response = await rawExchange(
      t.baseUrl,
      `POST /partner/v1/platforms/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"externalId":`,
      { waitMs: 10_000, untilClosed: true },
    );
    expect(response.status).toBe(408);
    expect(JSON.parse(response.body)).toMatchObject({ status: 408, code: 'request_timeout' });
    expect(response.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000); // 1 s timeout, checked every second
    expect(contractViolations('POST', '/partner/v1/platforms/orders', 408, response.contentType!, response.body)).toEqual([]);
    expect(await rowCounts(t)).toEqual(before);
  });

  it('logged no line at error level for any of it', () => {
    expect(t.errorLogs()).toEqual([]);
  });
});
