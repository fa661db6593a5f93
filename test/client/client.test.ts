import { describe, expect, it } from 'vitest';
import { createPartnerClient, createRequestSigner, PartnerApiError, PartnerClientConfigError, type Problem, type WithdrawalTerms } from '../../src/client/index.js';
import { signatureVectors } from '../fixtures/vectors.js';

const { secret, cases } = signatureVectors;
const BASE_URL = 'https://api.partner-platform.test';

/** A fetch that records each request and answers with the given response. */
function recordingFetch(respond: () => Response = () => Response.json({})) {
  const requests: { request: Request; body: Uint8Array }[] = [];
  const fetch = async (request: Request) => {
    requests.push({ request, body: new Uint8Array(await request.clone().arrayBuffer()) });
    return respond();
  };
  return { fetch, requests };
}

function clientAt(timestamp: number, fetch: (r: Request) => Promise<Response>, baseUrl = BASE_URL) {
  return createPartnerClient({ baseUrl, apiKey: 'pk_test_1', apiSecret: secret, fetch, now: () => timestamp * 1000 });
}

const vector = (name: string) => cases.find((c) => c.name === name)!;

describe('createPartnerClient signs every request (docs/design.md, Request authentication)', () => {
  it.each(['create order', 'non-ascii body'])('reproduces the "%s" vector through a typed call', async (name) => {
    const v = vector(name);
    const { fetch, requests } = recordingFetch();
    await clientAt(v.timestamp, fetch).POST('/partner/v1/platforms/orders', { body: JSON.parse(v.body) });
    const [{ request, body }] = requests as [(typeof requests)[0]];
    expect(new TextDecoder().decode(body)).toBe(v.body);
    expect(request.headers.get('X-Api-Key')).toBe('pk_test_1');
    expect(request.headers.get('X-Timestamp')).toBe(String(v.timestamp));
    expect(request.headers.get('X-Signature')).toBe(v.signature);
    expect(request.headers.get('Content-Type')).toBe('application/json');
  });

  it('reproduces the "read order" and "read withdrawal" vectors', async () => {
    const order = vector('read order');
    const withdrawal = vector('read withdrawal');
    const { fetch, requests } = recordingFetch();
    await clientAt(order.timestamp, fetch).GET('/partner/v2/platforms/orders/{uuid}', {
      params: { path: { uuid: order.target.split('/').pop()! } },
    });
    await clientAt(withdrawal.timestamp, fetch).GET('/partner/v1/platforms/withdrawals/{uuid}', {
      params: { path: { uuid: withdrawal.target.split('/').pop()! } },
    });
    expect(requests.map((r) => r.request.headers.get('X-Signature'))).toEqual([order.signature, withdrawal.signature]);
    expect(requests.map((r) => r.body.length)).toEqual([0, 0]);
  });

  it('signs the request target as sent, base path and escaping included', async () => {
    const { fetch, requests } = recordingFetch();
    const uuid = 'a b/é';
    await clientAt(1763700000, fetch, 'https://gw.example.test/base/').GET('/partner/v2/platforms/orders/{uuid}', {
      params: { path: { uuid } },
    });
    const { request } = requests[0]!;
    const url = new URL(request.url);
    expect(url.pathname).toBe('/base/partner/v2/platforms/orders/a%20b%2F%C3%A9');
    const ok = await createRequestSigner(secret).verify(
      { timestamp: 1763700000, method: 'GET', target: url.pathname + url.search },
      request.headers.get('X-Signature')!,
    );
    expect(ok).toBe(true);
  });

  it("passes a caller's AbortSignal on, and gives a caller's middleware a real Request, signed after it ran", async () => {
    const { fetch, requests } = recordingFetch();
    const aborted = clientAt(1763700000, fetch).GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b' } }, signal: AbortSignal.abort() });
    await aborted;
    expect(requests[0]!.request.signal.aborted).toBe(true);

    const client = clientAt(vector('create order').timestamp, fetch);
    const seen: unknown[] = [];
    client.use({
      onRequest({ request }) {
        seen.push(request);
        request.headers.set('X-Trace', 'abc');
        return request;
      },
    });
    await client.POST('/partner/v1/platforms/orders', { body: JSON.parse(vector('create order').body) });
    expect(seen[0]).toBeInstanceOf(Request);
    const sent = requests[1]!.request;
    expect(sent.headers.get('X-Trace')).toBe('abc');
    expect(sent.headers.get('X-Signature')).toBe(vector('create order').signature);
  });

  it('takes X-Timestamp from the injected clock at each request', async () => {
    let now = 1_763_700_000_999;
    const { fetch, requests } = recordingFetch();
    const client = createPartnerClient({ baseUrl: BASE_URL, apiKey: 'k', apiSecret: 's', fetch, now: () => now });
    await client.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: 'x' } } });
    now += 61_000;
    await client.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid: 'x' } } });
    expect(requests.map((r) => r.request.headers.get('X-Timestamp'))).toEqual(['1763700000', '1763700061']);
  });

  it('returns problems as the typed error of a call', async () => {
    const problem: Problem = { type: 'about:blank', title: 'Not found', status: 404, code: 'not_found' };
    const { fetch } = recordingFetch(
      () => new Response(JSON.stringify(problem), { status: 404, headers: { 'Content-Type': 'application/problem+json' } }),
    );
    const { data, error, response } = await clientAt(1, fetch).GET('/partner/v2/platforms/orders/{uuid}', {
      params: { path: { uuid: '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b' } },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    const code: Problem['code'] | undefined = error?.code;
    expect(code).toBe('not_found');
  });
});

describe('getWithdrawalTerms', () => {
  const tron: WithdrawalTerms = {
    blockchain: 'Tron', currency: 'USDT', enabled: true, fee: 1, minimum: 1, maximum: 500, dailyLimit: 2000, dailyLeft: 1487.5, approvalAbove: null, allowedDestinations: [],
  };

  it('signs a GET of the terms and returns their list', async () => {
    const { fetch, requests } = recordingFetch(() => Response.json({ data: [tron] }));
    expect(await clientAt(1763700000, fetch).getWithdrawalTerms()).toEqual([tron]);
    const [{ request, body }] = requests as [(typeof requests)[0]];
    expect([request.method, new URL(request.url).pathname, body.length]).toEqual(['GET', '/partner/v1/platforms/withdrawals/terms', 0]);
    const signer = createRequestSigner(secret);
    expect(await signer.verify({ timestamp: '1763700000', method: 'GET', target: '/partner/v1/platforms/withdrawals/terms', body: '' }, request.headers.get('X-Signature')!)).toBe(true);
  });

  it('throws PartnerApiError with the problem of a failure', async () => {
    const problem: Problem = { type: 'about:blank', title: 'Validation failed', status: 422, code: 'validation_failed' };
    const { fetch } = recordingFetch(() => new Response(JSON.stringify(problem), { status: 422, headers: { 'Content-Type': 'application/problem+json' } }));
    const failure = await clientAt(1, fetch).getWithdrawalTerms().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PartnerApiError);
    expect((failure as PartnerApiError).problem).toEqual(problem);
  });
});

describe('createPartnerClient refuses options that cannot work', () => {
  const good = { baseUrl: BASE_URL, apiKey: 'pk', apiSecret: 'sk' };
  it.each([
    ['no apiKey', { ...good, apiKey: undefined }, /apiKey is required/],
    ['an empty apiKey', { ...good, apiKey: ' ' }, /apiKey is required/],
    ['no apiSecret', { ...good, apiSecret: undefined }, /apiSecret is required/],
    ['a relative baseUrl', { ...good, baseUrl: '/partner' }, /absolute http\(s\) URL/],
    ['no baseUrl', { ...good, baseUrl: undefined }, /absolute http\(s\) URL/],
    ['a non-http baseUrl', { ...good, baseUrl: 'ftp://api.example.test' }, /http or https/],
    ['a baseUrl with a query', { ...good, baseUrl: 'https://api.example.test/?a=1' }, /query/],
  ])('%s', (_, options, message) => {
    expect(() => createPartnerClient(options as never)).toThrow(PartnerClientConfigError);
    expect(() => createPartnerClient(options as never)).toThrow(message);
  });

  it('no options at all', () => {
    expect(() => createPartnerClient(undefined as never)).toThrow(PartnerClientConfigError);
  });
});
