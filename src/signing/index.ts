// Signing shared by the client and the platform: request signatures
// (docs/design.md#request-authentication) and Standard Webhooks callback signatures
// (docs/design.md#callbacks). Depends only on the runtime's own crypto (node:crypto or WebCrypto).
export {
  createRequestSigner,
  requestSigningMessage,
  signRequest,
  type RequestSigner,
  type SignedRequestParts,
} from './request.js';
export {
  createCallbackSigner,
  generateCallbackSecret,
  InvalidCallbackSecretError,
  type CallbackParts,
  type CallbackSigner,
} from './callback.js';
export { DEFAULT_HMAC_BACKEND, type HmacBackend } from './hmac.js';
export type { Clock } from './clock.js';
