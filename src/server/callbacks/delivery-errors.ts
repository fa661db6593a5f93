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

type SystemError = Error & { code?: string; syscall?: string; address?: string };

/** Happy Eyeballs (net's autoSelectFamily) fails with the errors of every address tried: the first speaks for them. */
function firstOf(error: SystemError): SystemError {
  return error instanceof AggregateError && error.errors[0] instanceof Error ? (error.errors[0] as SystemError) : error;
}

/**
 * A name that resolves only to non-public addresses is `dns`, as one that does not resolve: the two
 * read alike (deliveryErrorMessage), so that deliveries and their redelivery on demand are no oracle of
 * the platform's resolver. `destination_refused` is what the URL alone shows: an address literal the
 * policy refuses, or a special-use name (never looked up).
 */
export function deliveryErrorKind(thrown: SystemError): DeliveryErrorKind {
  const error = firstOf(thrown);
  if (error instanceof DeliveryTimeoutError || error.cause instanceof DeliveryTimeoutError) return 'timeout';
  if (error instanceof NonPublicDestinationError) return 'dns';
  if (error instanceof DestinationRefusedError || error instanceof SpecialUseNameError) return 'destination_refused';
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') return 'connection_reset';
  if (DNS_CODES.has(code)) return 'dns';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (TLS_CODE.test(code)) return 'tls';
  return 'other';
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'ENODATA', 'EAI_NONAME']);

/**
 * What an attempt's error says to the merchant, who reads it through the API: never an address the
 * platform resolved the URL's host to. Every failure to resolve the host to a public address is one
 * sentence; a socket's error names the URL's host and port where Node names the address connected to
 * (`connect ECONNREFUSED merchant.example:443`, not `… 10.0.0.7:443`); others are as Node says them.
 */
export function deliveryErrorMessage(thrown: SystemError, url: URL): string {
  const error = firstOf(thrown);
  if (deliveryErrorKind(error) === 'dns') return `callback host ${url.hostname} has no public address`;
  if (error.address !== undefined && error.syscall !== undefined) {
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return `${error.syscall} ${error.code ?? 'failed'} ${url.hostname}:${port}`;
  }
  return error.cause instanceof Error ? error.cause.message : error.message;
}
