// One delivery of a claimed outbox row over HTTP (docs/design.md#callbacks): signed per Standard
// Webhooks with the merchant's callback secret (and the previous one during a rotation's grace period), POSTed without following redirects, within the
// timeout, to a destination the policy allows (checked again now, names by what they resolve to).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createCallbackSigner } from '../../signing/index.js';
import type { SecretKeeper } from '../merchants/secrets.js';
import type { Clock } from '../shared/time.js';
import { callbackLookup, callbackUrlProblem, type CallbackPolicy } from './destinations.js';
import { deliveryErrorKind, deliveryErrorMessage, DeliveryTimeoutError, DestinationRefusedError, type DeliveryErrorKind } from './delivery-errors.js';

/** What one delivery sends: a claimed outbox row's fields (outbox.ts OutboxRow has them all). */
export interface CallbackToSend {
  merchant_id: string;
  url: string;
  body: string;
  webhook_id: string;
  secret_version: number;
  /** During a rotation's grace period the secret version before it: the callback carries its signature too. */
  previous_secret_version: number | null;
}

export interface DeliveryResult {
  statusCode: number | undefined;
  latencyMs: number;
  error: string | undefined;
  /** Why there was no answer (a 2xx or not): undefined when the endpoint answered. */
  errorKind?: DeliveryErrorKind | undefined;
}

export interface DeliveryOptions {
  /** Cuts the attempt short (the dispatcher's sockets are all held by receivers that do not answer). */
  signal?: AbortSignal;
  secrets: SecretKeeper;
  policy: CallbackPolicy;
  timeoutSeconds: number;
  /** The clock of the webhook-timestamp header. */
  now: Clock;
}

/**
 * The webhook-signature header: `v1,<sig>` with the merchant's callback secret, and during a rotation's
 * grace period ` v1,<sig>` with the previous one after it (Standard Webhooks: space-separated, any one
 * that matches verifies), so a receiver verifies with either secret while it switches.
 */
export async function callbackSignature(row: Omit<CallbackToSend, 'url'>, secrets: SecretKeeper, timestamp: number): Promise<string> {
  const versions = row.previous_secret_version === null ? [row.secret_version] : [row.secret_version, row.previous_secret_version];
  const parts = { id: row.webhook_id, timestamp, body: row.body };
  const signatures = await Promise.all(versions.map((version) => createCallbackSigner(secrets.callbackSecret(row.merchant_id, version)).sign(parts)));
  return signatures.join(' ');
}

export async function deliver(row: CallbackToSend, options: DeliveryOptions): Promise<DeliveryResult> {
  const timestamp = Math.floor(options.now() / 1000);
  const signature = await callbackSignature(row, options.secrets, timestamp);
  const started = performance.now();
  const url = new URL(row.url);
  // Checked again at every delivery: the policy may have changed since the order was created, and
  // names are judged by what they resolve to now (callbackLookup), IP literals here.
  const refused = callbackUrlProblem(row.url, options.policy);
  if (refused) return { statusCode: undefined, latencyMs: 0, error: `callback URL ${refused}`, errorKind: deliveryErrorKind(new DestinationRefusedError(refused)) };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const finish = (statusCode: number | undefined, error: Error | undefined) =>
      resolve({ statusCode, latencyMs: Math.round(performance.now() - started), error: error && deliveryErrorMessage(error, url).slice(0, 500), errorKind: error && deliveryErrorKind(error) });
    const request = send(
      url,
      {
        method: 'POST',
        lookup: callbackLookup(options.policy),
        ...(options.signal ? { signal: options.signal } : {}),
        timeout: options.timeoutSeconds * 1000,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(row.body),
          'User-Agent': 'partner-api-callbacks/1',
          'webhook-id': row.webhook_id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        },
      },
      (response) => {
        response.resume(); // the body is not read: only the status counts
        response.on('end', () => finish(response.statusCode, undefined));
        response.on('error', (error) => finish(response.statusCode, error));
      },
    );
    // The whole delivery, not only socket idleness, must end within the timeout.
    const timedOut = () => request.destroy(new DeliveryTimeoutError(`no answer within ${options.timeoutSeconds} s`));
    const deadline = setTimeout(timedOut, options.timeoutSeconds * 1000);
    request.on('close', () => clearTimeout(deadline));
    request.on('timeout', timedOut);
    request.on('error', (error) => finish(undefined, error));
    request.end(row.body);
  });
}
