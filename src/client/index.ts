// The partner API's typed client: signed requests, typed problems, callback verification.
export { createPartnerClient, PartnerClientConfigError, type PartnerClient, type PartnerClientOptions } from './client.js';
export {
  verifyCallback,
  signTestCallback,
  CallbackVerificationError,
  type CallbackFailure,
  type CallbackHeaders,
  type VerifyCallbackOptions,
} from './callbacks.js';
export { PartnerApiError } from './errors.js';
export type { Paged, ListDepositOrdersQuery, ListWithdrawalsQuery, ListEventsQuery } from './pagination.js';
export type { Clock } from './auth.js';
export { signRequest, createRequestSigner, type SignedRequestParts } from '../signing/index.js';
export type * from './types.js';
