import { describe, expect, it } from 'vitest';
import { createRequestSigner, DEFAULT_HMAC_BACKEND, requestSigningMessage, signRequest, type HmacBackend } from '../../src/signing/index.js';
import { signatureVectors } from '../fixtures/vectors.js';

const { secret, cases } = signatureVectors;

it('signs with node:crypto on Node', () => expect(DEFAULT_HMAC_BACKEND).toBe('native'));

describe.each<HmacBackend>(['native', 'webcrypto'])('request signatures (vectors/signature.json) on %s', (backend) => {
  it.each(cases)('reproduces "$name" byte for byte', async (vector) => {
    expect(await createRequestSigner(secret, backend).sign(vector)).toBe(vector.signature);
    expect(await signRequest({ secret, ...vector })).toBe(vector.signature);
  });

  it.each(cases)('signs "$name" the same from the body bytes as from its text', async (vector) => {
    const body = new TextEncoder().encode(vector.body);
    expect(await signRequest({ secret, ...vector, body })).toBe(vector.signature);
  });

  it('signs the upper-cased method', async () => {
    const [vector] = cases;
    expect(await signRequest({ secret, ...vector!, method: vector!.method.toLowerCase() })).toBe(vector!.signature);
  });

  it('signs exactly timestamp + METHOD + target + body', () => {
    const message = requestSigningMessage({ timestamp: 1, method: 'get', target: '/a?b=1', body: 'é' });
    expect(Array.from(message)).toEqual([...Buffer.from('1GET/a?b=1é', 'utf8')]);
  });

  it.each(cases)('verifies "$name" and refuses every change to it', async (vector) => {
    const signer = createRequestSigner(secret, backend);
    expect(await signer.verify(vector, vector.signature)).toBe(true);
    expect(await signer.verify({ ...vector, timestamp: vector.timestamp + 1 }, vector.signature)).toBe(false);
    expect(await signer.verify({ ...vector, target: vector.target + '?' }, vector.signature)).toBe(false);
    expect(await signer.verify({ ...vector, body: vector.body + ' ' }, vector.signature)).toBe(false);
    expect(await createRequestSigner(secret + 'x', backend).verify(vector, vector.signature)).toBe(false);
  });

  it('refuses signatures that are not 64 lowercase hex characters', async () => {
    const [vector] = cases;
    const signer = createRequestSigner(secret, backend);
    for (const bad of [vector!.signature.toUpperCase(), vector!.signature.slice(2), '', 'zz'.repeat(32), vector!.signature + '00']) {
      expect(await signer.verify(vector!, bad)).toBe(false);
    }
  });
});
