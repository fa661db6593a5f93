// What went wrong with a delivery attempt, as one word of the contract's DeliveryError: a merchant
// reading its deliveries learns "your TLS certificate" or "nothing listens" without parsing messages.
import type { components } from '../../../generated/schema.js';
import { NonPublicDestinationError, SpecialUseNameError } from './destinations.js';

export type DeliveryErrorKind = components['schemas']['DeliveryError'];

/** Thrown by a delivery (delivery.ts) when an attempt's whole time ran out. */
export class DeliveryTimeoutError extends Error {}

/** A delivery's refusal (delivery.ts) of a callback URL the policy does not allow, before any connection. */
export class DestinationRefusedError extends Error {}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|HOSTNAME_MISMATCH$|ERR_OSSL_)/;

export function deliveryErrorKind(error: Error & { code?: string }): DeliveryErrorKind {
  if (error instanceof DeliveryTimeoutError || error.cause instanceof DeliveryTimeoutError) return 'timeout';
  if (error instanceof DestinationRefusedError || error instanceof NonPublicDestinationError || error instanceof SpecialUseNameError) return 'destination_refused';
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') return 'connection_reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') return 'dns';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (TLS_CODE.test(code)) return 'tls';
  return 'other';
}
