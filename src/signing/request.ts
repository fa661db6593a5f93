// Request signatures (DESIGN §3): X-Signature = hex(HMAC-SHA256(API secret, timestamp + METHOD +
// requestTarget + rawBody)). The one implementation the client signs with and the platform verifies with.
import { concatBytes, fromHex, toBytes, toHex } from './encoding.js';
import { createHmacSha256, type HmacBackend } from './hmac.js';

export interface SignedRequestParts {
  /** X-Timestamp exactly as sent: UNIX seconds in decimal. */
  timestamp: number | string;
  /** HTTP method; signed in upper case. */
  method: string;
  /** Path and query exactly as sent on the wire, e.g. `/partner/v2/platforms/orders/…?x=1`. */
  target: string;
  /** The exact body bytes (or their UTF-8 text); empty or absent for a request without a body. */
  body?: string | Uint8Array | undefined;
}

/** The exact bytes that are signed. */
export function requestSigningMessage(parts: SignedRequestParts): Uint8Array<ArrayBuffer> {
  const head = `${parts.timestamp}${parts.method.toUpperCase()}${parts.target}`;
  return concatBytes(toBytes(head), toBytes(parts.body ?? ''));
}

/** A signer and verifier bound to one API secret. */
export interface RequestSigner {
  sign(parts: SignedRequestParts): Promise<string>;
  /** True when `signature` (64 lowercase hex characters) is right for the parts; compared in constant time. */
  verify(parts: SignedRequestParts, signature: string): Promise<boolean>;
}

export function createRequestSigner(apiSecret: string, backend?: HmacBackend): RequestSigner {
  const hmac = createHmacSha256(toBytes(apiSecret), backend);
  return {
    async sign(parts) {
      return toHex(await hmac.sign(requestSigningMessage(parts)));
    },
    async verify(parts, signature) {
      const mac = /^[0-9a-f]{64}$/.test(signature) ? fromHex(signature) : undefined;
      return mac !== undefined && hmac.verify(mac, requestSigningMessage(parts));
    },
  };
}

/** Signs one request: the value of its X-Signature header. */
export function signRequest(parts: SignedRequestParts & { secret: string }): Promise<string> {
  return createRequestSigner(parts.secret).sign(parts);
}
