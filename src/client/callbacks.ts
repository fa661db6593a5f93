// Verifies a callback of the platform (Standard Webhooks, docs/design.md#callbacks) on its raw body,
// before trusting it.
import type { DepositOrderCallback, WithdrawalCallback } from '../../generated/schema.js';
import { createCallbackSigner, type CallbackSigner } from '../signing/index.js';
import type { Clock } from './auth.js';

export type CallbackFailure =
  | 'invalid_secret'
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_signature'
  | 'malformed_body';

/** The one error verifyCallback throws; `reason` names the check that failed. */
export class CallbackVerificationError extends Error {
  constructor(
    readonly reason: CallbackFailure,
    message: string,
  ) {
    super(message);
    this.name = 'CallbackVerificationError';
  }
}

export type CallbackHeaders =
  | Headers
  | Record<string, string | string[] | undefined>;

export interface VerifyCallbackOptions {
  /** How far webhook-timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Clock in milliseconds, like Date.now. */
  now?: Clock;
}

function header(headers: CallbackHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function signerFor(callbackSecret: string): CallbackSigner {
  try {
    return createCallbackSigner(callbackSecret);
  } catch {
    throw new CallbackVerificationError('invalid_secret', 'the callback secret is not "whsec_" + base64');
  }
}

function checkTimestamp(text: string, toleranceSeconds: number, now: Clock): number {
  if (!/^[0-9]{1,12}$/.test(text)) {
    throw new CallbackVerificationError('invalid_timestamp', `webhook-timestamp is not UNIX seconds: ${text.slice(0, 32)}`);
  }
  const timestamp = Number(text);
  const nowSeconds = Math.floor(now() / 1000);
  if (timestamp < nowSeconds - toleranceSeconds) {
    throw new CallbackVerificationError('timestamp_too_old', `webhook-timestamp ${timestamp} is more than ${toleranceSeconds} s old`);
  }
  if (timestamp > nowSeconds + toleranceSeconds) {
    throw new CallbackVerificationError('timestamp_too_new', `webhook-timestamp ${timestamp} is more than ${toleranceSeconds} s ahead`);
  }
  return timestamp;
}

function parseJson(rawBody: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody));
  } catch {
    throw new CallbackVerificationError('malformed_body', 'the callback body is not UTF-8 JSON');
  }
}

function orderEvent(rawBody: string | Uint8Array): DepositOrderCallback {
  const event = parseJson(rawBody) as Partial<DepositOrderCallback> | null;
  if (typeof event !== 'object' || event === null || typeof event.event !== 'string' || typeof event.uuid !== 'string') {
    throw new CallbackVerificationError('malformed_body', 'the callback body is not an order event');
  }
  return event as DepositOrderCallback;
}

function withdrawalEvent(rawBody: string | Uint8Array): WithdrawalCallback {
  const event = parseJson(rawBody) as Partial<WithdrawalCallback> | null;
  if (typeof event !== 'object' || event === null || typeof event.event !== 'string' || typeof event.withdrawal?.uuid !== 'string') {
    throw new CallbackVerificationError('malformed_body', 'the callback body is not a withdrawal event');
  }
  return event as WithdrawalCallback;
}

/** The checks of every callback: its headers, its timestamp within the tolerance, its signature over the raw body. */
async function verifySignature(rawBody: string | Uint8Array, headers: CallbackHeaders, callbackSecret: string, options: VerifyCallbackOptions): Promise<void> {
  const signer = signerFor(callbackSecret);
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signature) {
    throw new CallbackVerificationError('missing_header', 'webhook-id, webhook-timestamp and webhook-signature are required');
  }
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new CallbackVerificationError('malformed_body', 'pass the raw body as a string or bytes, not parsed JSON');
  }
  const timestamp = checkTimestamp(timestampText, options.toleranceSeconds ?? 300, options.now ?? Date.now);
  if (!(await signer.verify({ id, timestamp, body: rawBody }, signature))) {
    throw new CallbackVerificationError('invalid_signature', 'no webhook-signature matches the body and the callback secret');
  }
}

/**
 * Verifies an order's callback and returns its typed payload. Pass the raw body exactly as received, the
 * request's headers and your `whsec_…` callback secret. Throws only CallbackVerificationError.
 */
export async function verifyCallback(
  rawBody: string | Uint8Array,
  headers: CallbackHeaders,
  callbackSecret: string,
  options: VerifyCallbackOptions = {},
): Promise<DepositOrderCallback> {
  await verifySignature(rawBody, headers, callbackSecret, options);
  return orderEvent(rawBody);
}

/** Verifies a withdrawal's callback (sent to the withdrawal's `callbackUrl`) as verifyCallback does an order's. */
export async function verifyWithdrawalCallback(
  rawBody: string | Uint8Array,
  headers: CallbackHeaders,
  callbackSecret: string,
  options: VerifyCallbackOptions = {},
): Promise<WithdrawalCallback> {
  await verifySignature(rawBody, headers, callbackSecret, options);
  return withdrawalEvent(rawBody);
}

/**
 * Headers of a validly signed callback, for a merchant's own tests of its callback handler, so that
 * tests never hand-craft signatures.
 */
export async function signTestCallback(
  rawBody: string,
  callbackSecret: string,
  options: { id?: string; now?: Clock } = {},
): Promise<Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>> {
  const id = options.id ?? `msg_test_${globalThis.crypto.randomUUID()}`;
  const timestamp = Math.floor((options.now ?? Date.now)() / 1000);
  const signature = await createCallbackSigner(callbackSecret).sign({ id, timestamp, body: rawBody });
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}
