// Request signatures (docs/design.md#request-authentication): X-Signature = hex(HMAC-SHA256(API secret,
// timestamp + METHOD + requestTarget + rawBody)). The one implementation the client signs with and the
// platform verifies with.
import { fromHex, toBytes } from './encoding.js';
import { createHmacSha256, messageBytes, type HmacBackend, type MessageParts } from './hmac.js';

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

function messageParts(parts: SignedRequestParts): MessageParts {
  return [`${parts.timestamp}${parts.method.toUpperCase()}${parts.target}`, parts.body ?? ''];
}

/** The exact bytes that are signed. */
export function requestSigningMessage(parts: SignedRequestParts): Uint8Array<ArrayBuffer> {
  return messageBytes(messageParts(parts));
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
      return hmac.sign(messageParts(parts), 'hex');
    },
    async verify(parts, signature) {
      const mac = /^[0-9a-f]{64}$/.test(signature) ? fromHex(signature) : undefined;
      return mac !== undefined && hmac.verify(mac, messageParts(parts));
    },
  };
}

/** Signs one request: the value of its X-Signature header. */
export function signRequest(parts: SignedRequestParts & { secret: string }): Promise<string> {
  return createRequestSigner(parts.secret).sign(parts);
}
