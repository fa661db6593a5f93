// Callback signatures per Standard Webhooks v1 (docs/design.md#callbacks): webhook-signature = "v1," +
// base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)), the key being the base64 part of the
// merchant's `whsec_…` callback secret.
import { fromBase64, toBase64 } from './encoding.js';
import { createHmacSha256, type HmacBackend, type MessageParts } from './hmac.js';

export interface CallbackParts {
  /** The webhook-id header: one per event, the same on every retry. */
  id: string;
  /** The webhook-timestamp header: UNIX seconds. */
  timestamp: number | string;
  /** The exact body bytes (or their UTF-8 text). */
  body: string | Uint8Array;
}

export class InvalidCallbackSecretError extends TypeError {
  constructor() {
    super('a callback secret is "whsec_" followed by base64 of at least 16 bytes');
    this.name = 'InvalidCallbackSecretError';
  }
}

const SECRET_PREFIX = 'whsec_';

function callbackKeyBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  const bytes = fromBase64(encoded);
  if (!bytes || bytes.length < 16) throw new InvalidCallbackSecretError();
  return bytes;
}

function callbackSigningMessage(parts: CallbackParts): MessageParts {
  return [`${parts.id}.${parts.timestamp}.`, parts.body];
}

export interface CallbackSigner {
  /** The webhook-signature header value for one delivery: `v1,<base64>`. */
  sign(parts: CallbackParts): Promise<string>;
  /** True when any `v1,` signature of a webhook-signature header matches; each compared in constant time. */
  verify(parts: CallbackParts, signatureHeader: string): Promise<boolean>;
}

/** Throws InvalidCallbackSecretError when the secret is not `whsec_` + base64. */
export function createCallbackSigner(callbackSecret: string, backend?: HmacBackend): CallbackSigner {
  const hmac = createHmacSha256(callbackKeyBytes(callbackSecret), backend);
  return {
    async sign(parts) {
      return `v1,${await hmac.sign(callbackSigningMessage(parts), 'base64')}`;
    },
    async verify(parts, signatureHeader) {
      const message = callbackSigningMessage(parts);
      for (const entry of signatureHeader.split(' ')) {
        const [version, encoded] = entry.split(',', 2);
        const mac = version === 'v1' && encoded ? fromBase64(encoded) : undefined;
        if (mac && mac.length === 32 && (await hmac.verify(mac, message))) return true;
      }
      return false;
    },
  };
}

/** A new callback secret: `whsec_` + base64 of 24 random bytes. */
export function generateCallbackSecret(): string {
  return SECRET_PREFIX + toBase64(globalThis.crypto.getRandomValues(new Uint8Array(24)));
}
