// Request signatures (DESIGN §3): X-Signature = hex(HMAC-SHA256(API secret, timestamp + METHOD +
// requestTarget + rawBody)). The one implementation the client signs with and the platform verifies with.
import { concatBytes, fromHex, toBytes, toHex } from './encoding.js';
import { hmacSha256, hmacSha256Verify, importHmacKey } from './hmac.js';

export interface SignedRequestParts {
  /** X-Timestamp exactly as sent: UNIX seconds in decimal. */
  timestamp: number | string;
  /** HTTP method; signed in upper case. */
  method: string;
  /** Path and query exactly as sent on the wire, e.g. `/partner/v2/platforms/orders/…?x=1`. */
  target: string;
  /** The exact body bytes (or their UTF-8 text); empty or absent for a request without a body. */
  body?: string | Uint8Array;
}

/** The exact bytes that are signed. */
export function requestSigningMessage(parts: SignedRequestParts): Uint8Array<ArrayBuffer> {
  const head = `${parts.timestamp}${parts.method.toUpperCase()}${parts.target}`;
  return concatBytes(toBytes(head), toBytes(parts.body ?? ''));
}

/** A signer and verifier bound to one API secret, whose key is imported once. */
export interface RequestSigner {
  sign(parts: SignedRequestParts): Promise<string>;
  /** True when `signature` (64 hex characters) is right for the parts; compared in constant time. */
  verify(parts: SignedRequestParts, signature: string): Promise<boolean>;
}

/** The part of `node:crypto` that signing uses. */
interface NativeCrypto {
  createHmac(algorithm: 'sha256', key: Uint8Array): { update(data: Uint8Array): { digest(encoding: 'hex'): string } };
}

/**
 * The runtime's own synchronous HMAC-SHA256: node:crypto, reached through `process.getBuiltinModule`
 * (Node ≥ 20.16 and runtimes that mimic it) so that nothing is imported; elsewhere signing falls back
 * to WebCrypto. Signing runs on every request the client sends, and a WebCrypto `sign` is an
 * asynchronous job costing about 20 µs a call in Node 20, against about 3 µs here (`npm run bench`).
 */
function nativeHmacSha256Hex(secret: Uint8Array): ((message: Uint8Array) => string) | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof runtime?.getBuiltinModule !== 'function') return undefined;
  const crypto = runtime.getBuiltinModule('node:crypto') as Partial<NativeCrypto> | undefined;
  if (typeof crypto?.createHmac !== 'function') return undefined;
  const { createHmac } = crypto as NativeCrypto;
  return (message) => createHmac('sha256', secret).update(message).digest('hex');
}

export function createRequestSigner(apiSecret: string): RequestSigner {
  const secret = toBytes(apiSecret);
  const native = nativeHmacSha256Hex(secret);
  // The WebCrypto key, imported once and only when needed: to verify, or to sign without node:crypto.
  let key: Promise<CryptoKey> | undefined;
  const webCryptoKey = () => (key ??= importHmacKey(secret));
  return {
    async sign(parts) {
      const message = requestSigningMessage(parts);
      return native ? native(message) : toHex(await hmacSha256(await webCryptoKey(), message));
    },
    async verify(parts, signature) {
      const mac = /^[0-9a-f]{64}$/.test(signature) ? fromHex(signature) : undefined;
      if (!mac) return false;
      return hmacSha256Verify(await webCryptoKey(), mac, requestSigningMessage(parts));
    },
  };
}

/** Signs one request: the value of its X-Signature header. */
export function signRequest(parts: SignedRequestParts & { secret: string }): Promise<string> {
  return createRequestSigner(parts.secret).sign(parts);
}
