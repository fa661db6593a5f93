import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallbackVerificationError, signTestCallback, verifyCallback, type DepositOrderCallback } from '../../src/client/index.js';
import { generateCallbackSecret } from '../../src/signing/index.js';
import { DONE_ORDER } from '../fixtures/orders.js';
import { callbackVector } from '../fixtures/vectors.js';

const vectorHeaders = {
  'webhook-id': callbackVector['webhook-id'],
  'webhook-timestamp': String(callbackVector['webhook-timestamp']),
  'webhook-signature': callbackVector['webhook-signature'],
};
const atVectorTime = { now: () => callbackVector['webhook-timestamp'] * 1000 };

// The order as a callback carries it: as read, less the paymentUrl the read endpoint adds.
const { paymentUrl: _addedAtRead, ...order } = DONE_ORDER;
const event: DepositOrderCallback = {
  event: 'order.deposit',
  amount: 2500000,
  txId: '5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060',
  ...order,
  occurredAt: '2026-11-21 11:02:15',
  sequence: 1,
};

async function rejection(promise: Promise<unknown>): Promise<CallbackVerificationError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(CallbackVerificationError);
  return error as CallbackVerificationError;
}

describe('verifyCallback', () => {
  it('passes the signature of the Standard Webhooks vector, then refuses its body as no order event', async () => {
    const error = await rejection(verifyCallback(callbackVector.body, vectorHeaders, callbackVector.secret, atVectorTime));
    expect(error.reason).toBe('malformed_body');
    const forged = { ...vectorHeaders, 'webhook-signature': 'v1,' + 'A'.repeat(43) + '=' };
    expect((await rejection(verifyCallback(callbackVector.body, forged, callbackVector.secret, atVectorTime))).reason).toBe(
      'invalid_signature',
    );
  });

  it('returns the typed event of a signed callback, from text or bytes, with any header casing', async () => {
    const secret = generateCallbackSecret();
    const body = JSON.stringify(event);
    const headers = await signTestCallback(body, secret);
    expect(await verifyCallback(body, headers, secret)).toEqual(event);
    expect(await verifyCallback(new TextEncoder().encode(body), new Headers(headers), secret)).toEqual(event);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect((await verifyCallback(body, upper, secret)).uuid).toBe(event.uuid);
  });

  it('accepts a header carrying several signatures (secret rotation)', async () => {
    const [oldSecret, newSecret] = [generateCallbackSecret(), generateCallbackSecret()];
    const body = JSON.stringify(event);
    const signedOld = await signTestCallback(body, oldSecret, { id: 'msg_1' });
    const signedNew = await signTestCallback(body, newSecret, { id: 'msg_1' });
    const both = { ...signedNew, 'webhook-signature': `${signedOld['webhook-signature']} ${signedNew['webhook-signature']}` };
    expect((await verifyCallback(body, both, oldSecret)).uuid).toBe(event.uuid);
    expect((await verifyCallback(body, both, newSecret)).uuid).toBe(event.uuid);
  });

  it('names each failed check', async () => {
    const secret = generateCallbackSecret();
    const body = JSON.stringify(event);
    const now = 1_763_700_000_000;
    const headers = await signTestCallback(body, secret, { now: () => now });
    const at = (ms: number) => ({ now: () => ms });
    const cases: [string, () => Promise<unknown>][] = [
      ['missing_header', () => verifyCallback(body, { ...headers, 'webhook-id': undefined }, secret, at(now))],
      ['missing_header', () => verifyCallback(body, { ...headers, 'webhook-signature': '' }, secret, at(now))],
      ['invalid_timestamp', () => verifyCallback(body, { ...headers, 'webhook-timestamp': '17637e5' }, secret, at(now))],
      ['timestamp_too_old', () => verifyCallback(body, headers, secret, at(now + 301_000))],
      ['timestamp_too_new', () => verifyCallback(body, headers, secret, at(now - 301_000))],
      ['invalid_signature', () => verifyCallback(body + ' ', headers, secret, at(now))],
      ['invalid_signature', () => verifyCallback(body, headers, generateCallbackSecret(), at(now))],
      ['invalid_secret', () => verifyCallback(body, headers, 'not-a-secret', at(now))],
      ['malformed_body', () => verifyCallback(JSON.parse(body), headers, secret, at(now))],
    ];
    for (const [reason, attempt] of cases) expect((await rejection(attempt())).reason).toBe(reason);
    expect(await verifyCallback(body, headers, secret, { ...at(now + 600_000), toleranceSeconds: 601 })).toEqual(event);
  });

  it('refuses a signed body that is not JSON', async () => {
    const secret = generateCallbackSecret();
    const headers = await signTestCallback('not json', secret);
    expect((await rejection(verifyCallback('not json', headers, secret))).reason).toBe('malformed_body');
  });

  it('never accepts junk and never throws anything but CallbackVerificationError', async () => {
    const secret = generateCallbackSecret();
    const signed = JSON.stringify(event);
    const good = await signTestCallback(signed, secret);
    const headerValue = fc.oneof(fc.string(), fc.constant(undefined), fc.constantFrom(...Object.values(good)));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string(), fc.uint8Array(), fc.constant(signed)),
        fc.record({ 'webhook-id': headerValue, 'webhook-timestamp': headerValue, 'webhook-signature': headerValue }),
        async (body, headers) => {
          const untouched = body === signed && Object.entries(good).every(([k, v]) => headers[k as keyof typeof headers] === v);
          const result = await verifyCallback(body, headers, secret).then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          );
          if (untouched) expect(result).toEqual({ value: event });
          else expect((result as { error: unknown }).error).toBeInstanceOf(CallbackVerificationError);
        },
      ),
      { numRuns: 300 },
    );
  });
});
