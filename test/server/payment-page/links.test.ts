// The payment page's capability link: the token is the HMAC the platform alone can make, checked against
// node:crypto's createHmac, written as a string or as bytes alike, and it never reaches a log.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PaymentLinks, withoutToken } from '../../../src/server/payment-page/links.js';

describe('payment links', () => {
  const links = new PaymentLinks(Buffer.alloc(32, 7), () => 'https://pay.example');
  const uuid = '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b';
  const other = '7c2e4b9a-1d3f-4a5b-8c6d-9e0f1a2b3c4d';

  it('is the public URL, the uuid and a 128-bit HMAC token that only the key makes', () => {
    const url = links.url(uuid);
    const token = url.split('/').at(-1)!;
    expect(url).toBe(`https://pay.example/pay/${uuid}/${token}`);
    expect(Buffer.from(token, 'base64url')).toHaveLength(16);
    expect(token).toBe(createHmac('sha256', Buffer.alloc(32, 7)).update(uuid).digest().subarray(0, 16).toString('base64url'));
    expect(links.verify(uuid, token)).toBe(true);
    expect(links.verify(uuid.toUpperCase(), token)).toBe(true);
  });

  it('is written as bytes as url() makes it, for the lowercase uuid a database row holds, behind any base URL', () => {
    let base = 'https://pay.example';
    const changing = new PaymentLinks(Buffer.alloc(32, 7), () => base);
    for (const next of ['https://pay.example', 'http://127.0.0.1:41234', 'https://shop.example/pay-here/sub']) {
      base = next;
      for (let i = 0; i < 50; i++) {
        const id = randomUUID();
        const buffer = Buffer.alloc(changing.urlBytes() + 2, '#');
        expect(changing.writeUrl(id, buffer, 1)).toBe(1 + changing.urlBytes());
        expect(buffer.toString('latin1')).toBe(`#${changing.url(id)}#`);
      }
    }
    expect(() => changing.writeUrl(uuid.toUpperCase(), Buffer.alloc(200), 0)).toThrow(RangeError);
    base = 'https://pay.example/"quoted"';
    expect(() => changing.urlBytes()).toThrow(/JSON-safe/);
    base = 'https://päy.example';
    expect(() => changing.urlBytes()).toThrow(/JSON-safe/);
  });

  it("refuses another order's token, another key's token, a changed character and malformed input", () => {
    const token = links.url(uuid).split('/').at(-1)!;
    expect(links.verify(other, token)).toBe(false);
    const otherKey = new PaymentLinks(Buffer.alloc(32, 8), () => '');
    expect(otherKey.verify(uuid, token)).toBe(false);
    const changed = token.slice(0, 21) + (token[21] === 'A' ? 'B' : 'A');
    expect(links.verify(uuid, changed)).toBe(false);
    for (const bad of ['', uuid, token + 'A', token.slice(1), '../../x', '%00'.repeat(8)]) expect(links.verify(uuid, bad)).toBe(false);
    expect(links.verify('not-a-uuid', token)).toBe(false);
  });

  it('is HMAC-SHA256 of the lowercase uuid, as createHmac makes it, for keys shorter and longer than a block', () => {
    for (const length of [1, 16, 32, 63, 64, 65, 100]) {
      const key = randomBytes(length);
      const keyed = new PaymentLinks(key, () => '');
      for (let i = 0; i < 200; i++) {
        const id = randomUUID();
        const expected = createHmac('sha256', key).update(id).digest().subarray(0, 16).toString('base64url');
        expect(keyed.path(i % 2 ? id.toUpperCase() : id)).toBe(`/pay/${id}/${expected}`);
        expect(keyed.verify(id, expected)).toBe(true);
      }
    }
  });

  it('is made for a uuid only', () => {
    expect(() => links.path('order-1')).toThrow(RangeError);
    expect(() => links.path(`${uuid}0`)).toThrow(RangeError);
  });

  it('is left out of request logs', () => {
    const path = new URL(links.url(uuid)).pathname;
    expect(withoutToken(path)).toBe(`/pay/${uuid}/…`);
    expect(withoutToken(`${path}/state?lang=ru`)).toBe(`/pay/${uuid}/…/state?lang=ru`);
    expect(withoutToken('/partner/v2/platforms/orders/x')).toBe('/partner/v2/platforms/orders/x');
    // Dot segments and backslashes, resolved as a browser or a proxy would (issue 57).
    expect(withoutToken(path.replace('/pay/', '/pay/./'))).toBe(`/pay/${uuid}/…`);
    expect(withoutToken(path.replace('/pay/', '/a/b/../../pay/'))).toBe(`/pay/${uuid}/…`);
    expect(withoutToken(path.replace('/pay/', '/../pay/'))).toBe(`/pay/${uuid}/…`);
    expect(withoutToken(path.replace('/pay/', '\\pay\\'))).toBe(`/pay/${uuid}/…`);
  });
});
