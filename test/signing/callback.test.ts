import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { createCallbackSigner, generateCallbackSecret, InvalidCallbackSecretError, type HmacBackend } from '../../src/signing/index.js';
import { callbackVector } from '../fixtures/vectors.js';

const parts = {
  id: callbackVector['webhook-id'],
  timestamp: callbackVector['webhook-timestamp'],
  body: callbackVector.body,
};

describe.each<HmacBackend>(['native', 'webcrypto'])('callback signatures (vectors/callback-signature.json) on %s', (backend) => {
  it('reproduces the Standard Webhooks vector byte for byte', async () => {
    expect(await createCallbackSigner(callbackVector.secret, backend).sign(parts)).toBe(callbackVector['webhook-signature']);
  });

  it('accepts a header with several signatures when any one matches', async () => {
    const signer = createCallbackSigner(callbackVector.secret, backend);
    const other = await createCallbackSigner(generateCallbackSecret()).sign(parts);
    expect(await signer.verify(parts, `${other} ${callbackVector['webhook-signature']}`)).toBe(true);
    expect(await signer.verify(parts, `v2,abc ${callbackVector['webhook-signature']}`)).toBe(true);
    expect(await signer.verify(parts, other)).toBe(false);
  });

  it('refuses a changed id, timestamp or body', async () => {
    const signer = createCallbackSigner(callbackVector.secret, backend);
    const signature = callbackVector['webhook-signature'];
    expect(await signer.verify({ ...parts, id: parts.id + 'x' }, signature)).toBe(false);
    expect(await signer.verify({ ...parts, timestamp: parts.timestamp + 1 }, signature)).toBe(false);
    expect(await signer.verify({ ...parts, body: parts.body + ' ' }, signature)).toBe(false);
  });

  it('produces signatures that the standardwebhooks package verifies', async () => {
    const secret = generateCallbackSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"event":"order.deposit","uuid":"0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b"}';
    const signature = await createCallbackSigner(secret, backend).sign({ id: 'msg_1', timestamp, body });
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('refuses a secret that is not whsec_ + base64', () => {
    for (const bad of ['', 'whsec_', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_not base64!', 'whsec_AAAA']) {
      expect(() => createCallbackSigner(bad)).toThrow(InvalidCallbackSecretError);
    }
  });
});
