// The partner API's typed client: signed requests, typed problems, callback verification.
export { createPartnerClient, PartnerClientConfigError, type PartnerClient, type PartnerClientOptions } from './client.js';
export {
  verifyCallback,
  verifyWithdrawalCallback,
  signTestCallback,
  CallbackVerificationError,
  type CallbackFailure,
  type CallbackHeaders,
  type VerifyCallbackOptions,
} from './callbacks.js';
export { PartnerApiError, WithdrawalRefusedError } from './errors.js';
export type { Paged, ListDepositOrdersQuery, ListWithdrawalsQuery, ListEventsQuery, ListAllEventsQuery } from './pagination.js';
export type { Clock } from './auth.js';
export { signRequest, createRequestSigner, type SignedRequestParts } from '../signing/index.js';
export type * from './types.js';
