// The typed client against the contract served by the real Prism mock (npm run mock).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerClient, type PartnerClient } from '../../src/client/index.js';
import { orderRequest } from '../fixtures/orders.js';
import { freePort, startProcess, type Started } from '../support/processes.js';

const ORDER_UUID = '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';
const WITHDRAWAL_UUID = '5d1c2b3a-4e5f-4a6b-9c7d-8e9f0a1b2c3d';
const createBody = orderRequest('ord-1001');
const contract = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));

/** The value of a named example of an operation's response, as the contract declares it. */
function exampleValue(path: string, method: string, status: string, name: string): unknown {
  const example = contract.paths[path][method].responses[status].content['application/json'].examples[name];
  expect(example, `${method} ${path} ${status} has no example ${name}`).toBeDefined();
  return example.$ref ? contract.components.examples[example.$ref.split('/').pop()].value : example.value;
}

/** The value of a named example of an operation's request body. */
function exampleRequest(path: string, method: string, name: string): never {
  const example = contract.paths[path][method].requestBody.content['application/json'].examples[name];
  return (example.$ref ? contract.components.examples[example.$ref.split('/').pop()].value : example.value) as never;
}

let prism: Started;
let baseUrl: string;
let client: PartnerClient;

beforeAll(async () => {
  const port = await freePort();
  prism = await startProcess('node_modules/.bin/prism', ['mock', 'generated/openapi.json', '--host', '127.0.0.1', '--port', String(port)], /Prism is listening/);
  baseUrl = `http://127.0.0.1:${port}`;
  client = createPartnerClient({ baseUrl, apiKey: 'pk_test_mock', apiSecret: 'sk_test_mock' });
});

afterAll(() => prism?.stop());

function expectNoViolations(response: Response) {
  expect(response.headers.get('sl-violations'), response.headers.get('sl-violations') ?? '').toBeNull();
}

describe('the typed client against Prism', () => {
  it('creates a deposit order (201) with a signed request', async () => {
    const { data, error, response } = await client.POST('/partner/v1/platforms/orders', {
      body: createBody,
      headers: { Prefer: 'code=201' },
    });
    expectNoViolations(response);
    expect(response.status).toBe(201);
    expect(error).toBeUndefined();
    expect(data?.status).toBe('NEW');
    expect(data?.addressQr).toMatch(/^data:image\/png;base64,/);
    expect(response.headers.get('RateLimit-Policy')).toBe('"default";q=100;w=60');
  });

  it('replays an order creation (200)', async () => {
    const { data, response } = await client.POST('/partner/v1/platforms/orders', { body: createBody });
    expectNoViolations(response);
    expect(response.status).toBe(200);
    expect(data?.uuid).toBe(ORDER_UUID);
  });

  it('reads a deposit order with its receivedAmount', async () => {
    const { data, response } = await client.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: ORDER_UUID } } });
    expectNoViolations(response);
    expect(response.status).toBe(200);
    expect(data?.receivedAmount).toBe(2500000);
  });

  it('reads a withdrawal, the full and the minimal example', async () => {
    for (const example of ['done', 'minimal']) {
      const { data, response } = await client.GET('/partner/v1/platforms/withdrawals/{uuid}', {
        params: { path: { uuid: WITHDRAWAL_UUID } },
        headers: { Prefer: `example=${example}` },
      });
      expectNoViolations(response);
      expect(response.status).toBe(200);
      expect(data).toMatchObject({ uuid: WITHDRAWAL_UUID, status: 'DONE', externalId: 'wd-2001' });
    }
  });

  it('gets 401 problem+json when the authentication headers are missing', async () => {
    for (const path of [`/partner/v2/platforms/orders/${ORDER_UUID}`, `/partner/v1/platforms/withdrawals/${WITHDRAWAL_UUID}`]) {
      const response = await fetch(baseUrl + path);
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
    const partial = await fetch(`${baseUrl}/partner/v2/platforms/orders/${ORDER_UUID}`, { headers: { 'X-Api-Key': 'pk' } });
    expect(partial.status).toBe(401);
  });

  it('rejects a malformed X-Signature', async () => {
    const headers = { 'X-Api-Key': 'pk', 'X-Timestamp': '1763700000' };
    for (const signature of ['abc', 'A'.repeat(64), 'g'.repeat(64), 'a'.repeat(65)]) {
      const response = await fetch(`${baseUrl}/partner/v2/platforms/orders/${ORDER_UUID}`, {
        headers: { ...headers, 'X-Signature': signature },
      });
      expect(response.status).toBe(422);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
  });

  it('gets a 4xx problem for an invalid body, typed as the error of the call', async () => {
    const invalid = [
      { ...createBody, blockchain: 'Bitcoin' },
      { ...createBody, surplus: true },
      { ...createBody, customerId: '' },
      { externalId: 'ord-1' },
    ];
    for (const body of invalid) {
      const { data, error, response } = await client.POST('/partner/v1/platforms/orders', { body: body as never });
      expect(data).toBeUndefined();
      expect(response.status).toBe(422);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(error?.code).toBe('validation_failed');
    }
  });

  describe('serves the money-out operations with their examples', () => {
    it('a withdrawal created (201: queued, awaiting approval), replayed (200), refused (422: insufficient_balance)', async () => {
      const path = '/partner/v1/platforms/withdrawals';
      const body = exampleRequest(path, 'post', 'tron');
      for (const [Prefer, status, name] of [['code=201, example=queued', 201, 'queued'], ['code=201, example=awaiting_approval', 201, 'awaiting_approval'], ['code=200', 200, 'queued']] as const) {
        const { data, response } = await client.POST(path, { body, headers: { Prefer } });
        expectNoViolations(response);
        expect(response.status).toBe(status);
        expect(data).toEqual(exampleValue(path, 'post', String(status), name));
      }
      const refused = await client.POST(path, { body, headers: { Prefer: 'code=422, example=insufficient_balance' } });
      expect(refused.response.status).toBe(422);
      expect(refused.error).toMatchObject({ code: 'insufficient_balance', available: 10000000 });
    });

    it('the balances, the withdrawal terms, and a page of the feed of every event', async () => {
      const balances = await client.GET('/partner/v1/platforms/balances');
      expectNoViolations(balances.response);
      expect(balances.data).toEqual(exampleValue('/partner/v1/platforms/balances', 'get', '200', 'balances'));
      // The withdrawal terms: each named example, nulls for the limits there are none of.
      for (const name of ['limited', 'unlimited']) {
        const terms = await client.GET('/partner/v1/platforms/withdrawals/terms', { headers: { Prefer: `example=${name}` } });
        expectNoViolations(terms.response);
        expect(terms.data).toEqual(exampleValue('/partner/v1/platforms/withdrawals/terms', 'get', '200', name));
      }
      const feed = await client.GET('/partner/v2/platforms/events', { headers: { Prefer: 'example=page' } });
      expectNoViolations(feed.response);
      expect(feed.data!.data.map((e) => e.type)).toEqual(['order.deposit', 'withdrawal.done']);
    });
  });

  describe('serves the named examples of the reconciliation operations', () => {
    const lists = [
      ['/partner/v1/platforms/orders', (Prefer: string) => client.GET('/partner/v1/platforms/orders', { headers: { Prefer } })],
      ['/partner/v1/platforms/withdrawals', (Prefer: string) => client.GET('/partner/v1/platforms/withdrawals', { headers: { Prefer } })],
      ['/partner/v1/platforms/events', (Prefer: string) => client.GET('/partner/v1/platforms/events', { headers: { Prefer } })],
    ] as const;

    it.each(lists.map(([path]) => path))('%s: first_page, last_page and empty', async (path) => {
      const call = lists.find(([p]) => p === path)![1];
      for (const name of ['first_page', 'last_page', 'empty']) {
        const { data, response } = await call(`example=${name}`);
        expectNoViolations(response);
        expect(response.status).toBe(200);
        expect(data, name).toEqual(exampleValue(path, 'get', '200', name));
      }
      // The feed's pages carry a cursor even when empty; the lists' last page has none.
      const last = exampleValue(path, 'get', '200', 'last_page') as { hasMore: boolean; nextCursor?: string };
      expect(last.hasMore).toBe(false);
      expect(last.nextCursor === undefined).toBe(path !== '/partner/v1/platforms/events');
    });

    it("an event's deliveries: failing and delivered", async () => {
      const path = '/partner/v1/platforms/events/{eventId}/deliveries';
      for (const name of ['failing', 'delivered']) {
        const expected = exampleValue(path, 'get', '200', name) as { eventId: string };
        const { data, response } = await client.GET(path, { params: { path: { eventId: expected.eventId } }, headers: { Prefer: `example=${name}` } });
        expectNoViolations(response);
        expect(response.status).toBe(200);
        expect(data).toEqual(expected);
      }
    });

    it('a redelivery: 202 due', async () => {
      const path = '/partner/v1/platforms/events/{eventId}/redeliver';
      const expected = exampleValue(path, 'post', '202', 'due') as { eventId: string; delivery: { state: string } };
      expect(expected.delivery.state).toBe('pending');
      const { data, response } = await client.POST(path, { params: { path: { eventId: expected.eventId } }, headers: { Prefer: 'code=202, example=due' } });
      expectNoViolations(response);
      expect(response.status).toBe(202);
      expect(data).toEqual(expected);
    });
  });
});
