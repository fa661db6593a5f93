// Signing shared by the client and the platform: request signatures (DESIGN §3) and Standard Webhooks
// callback signatures (DESIGN §4). Depends only on the runtime's own crypto (node:crypto or WebCrypto).
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
