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

export function createRequestSigner(apiSecret: string): RequestSigner {
  const key = importHmacKey(apiSecret);
  return {
    async sign(parts) {
      return toHex(await hmacSha256(await key, requestSigningMessage(parts)));
    },
    async verify(parts, signature) {
      const mac = /^[0-9a-f]{64}$/.test(signature) ? fromHex(signature) : undefined;
      if (!mac) return false;
      return hmacSha256Verify(await key, mac, requestSigningMessage(parts));
    },
  };
}

/** Signs one request: the value of its X-Signature header. */
export function signRequest(parts: SignedRequestParts & { secret: string }): Promise<string> {
  return createRequestSigner(parts.secret).sign(parts);
}
