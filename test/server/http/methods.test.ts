// HTTP semantics at the edge (RFC 9110): a method a path does not have is 405 with Allow, before any
// authentication, whatever the method (QUERY included, with or without a body); an unknown path is 404.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_PAGE_CSP } from '../../../src/server/http/payment-page-routes.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform('pglite');
});
afterAll(() => t?.close());

/** A raw request (fetch refuses some methods, and always sends what it likes). */
function send(method: string, path: string, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const r = request({ host: url.hostname, port: url.port, method, path, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

const ORDER = '/partner/v2/platforms/orders/0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';

describe('a method the path does not have', () => {
  it.each([
    ['PUT', '/partner/v1/platforms/orders', 'GET, HEAD, POST'],
    ['PATCH', ORDER, 'GET, HEAD'],
    ['DELETE', ORDER, 'GET, HEAD'],
    ['OPTIONS', '/partner/v1/platforms/withdrawals', 'GET, HEAD, POST'],
    ['GET', '/sandbox/v1/withdrawals', 'POST'],
    ['GET', '/partner/v1/platforms/events/msg_p5jXN8AQM9LWM0D4loKWxJek/redeliver', 'POST'],
    ['QUERY', '/partner/v1/platforms/orders', 'GET, HEAD, POST'],
    ['POST', '/healthz', 'GET, HEAD'],
  ])('%s %s is 405 with Allow: %s, before authentication', async (method, path, allow) => {
    const response = await send(method, path);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe(allow);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(response.body)).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });

  it('is 404 on a path that does not exist, whatever the method, a QUERY without a body too', async () => {
    for (const method of ['GET', 'PUT', 'QUERY']) {
      const response = await send(method, '/partner/v3/nothing');
      expect(response.status, method).toBe(404);
      expect(JSON.parse(response.body)).toMatchObject({ code: 'not_found' });
    }
    expect((await send('QUERY', '/partner/v1/platforms/orders', '{}')).status).toBe(405);
    expect(t.errorLogs()).toEqual([]);
  });
});

describe("the payer's page's files", () => {
  it.each(['/pay/page.js', '/pay/page.css'])('%s carries the page\'s policy, no framing and no sniffing', async (path) => {
    const response = await send('GET', path);
    expect(response.status).toBe(200);
    expect(response.headers['content-security-policy']).toBe(PAYMENT_PAGE_CSP);
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });
});
