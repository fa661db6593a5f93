import { toBytes, type Bytes } from './encoding.js';

const subtle = globalThis.crypto.subtle;

export function importHmacKey(secret: string | Uint8Array): Promise<CryptoKey> {
  return subtle.importKey('raw', toBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}

export async function hmacSha256(key: CryptoKey, message: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle.sign('HMAC', key, message));
}

/**
 * Checks an HMAC in constant time: WebCrypto's verify compares without an early exit, so the time
 * taken does not tell an attacker how many leading bytes of a forged signature were right.
 */
export function hmacSha256Verify(key: CryptoKey, mac: Bytes, message: Bytes): Promise<boolean> {
  return subtle.verify('HMAC', key, mac, message);
}
