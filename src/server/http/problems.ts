// Every failure leaves as an RFC 9457 problem (application/problem+json) with a code of the contract.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FieldError, Problem, ProblemCode, WithdrawalProblem } from '../../../generated/schema.js';
import { CursorExpired, CursorRefused } from '../shared/cursors.js';

/** Every code a problem may carry: the contract's ProblemCode, and the refusals of withdrawals (WithdrawalProblemCode). */
type AnyProblemCode = ProblemCode | WithdrawalProblem['code'];

const TITLES: Record<AnyProblemCode, string> = {
  bad_request: 'Bad request',
  malformed_json: 'Malformed JSON',
  missing_credentials: 'Missing credentials',
  unknown_api_key: 'Unknown API key',
  invalid_signature: 'Invalid signature',
  timestamp_out_of_window: 'Timestamp out of window',
  not_found: 'Not found',
  request_timeout: 'Request timeout',
  external_id_conflict: 'externalId conflict',
  invalid_status_transition: 'Invalid status transition',
  order_not_watched: 'Order not watched',
  idempotency_key_reused: 'Idempotency key reused',
  delivery_in_flight: 'Delivery in flight',
  cursor_expired: 'Cursor expired',
  method_not_allowed: 'Method not allowed',
  payload_too_large: 'Payload too large',
  uri_too_long: 'URI too long',
  unsupported_media_type: 'Unsupported media type',
  validation_failed: 'Validation failed',
  rate_limited: 'Too many requests',
  too_many_open_orders: 'Too many open orders',
  headers_too_large: 'Header fields too large',
  internal_error: 'Internal error',
  insufficient_balance: 'Insufficient balance',
  daily_limit_exceeded: 'Daily limit exceeded',
  withdrawals_disabled: 'Withdrawals disabled',
  network_halted: 'Network halted',
};

/**
 * A problem's type: its code's section of the docs (openapi/guide/overview.md, a `## <code>` heading under
 * Errors), as a reference relative to the platform that answered, whose /docs serves them (RFC 9457: it
 * resolves against the request's URL).
 */
export const TYPE_BASE = '/docs#/section/errors/';

/** A failure that a handler or hook throws; the error handler writes it as a problem. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: AnyProblemCode,
    readonly detail: string,
    readonly extra: Pick<Problem, 'errors' | 'serverTime'> & Pick<WithdrawalProblem, 'available'> = {},
    /** Header fields that come with the problem (`Allow` with a 405). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  toProblem(): Problem | WithdrawalProblem {
    // A withdrawal's codes come only with the withdrawal create's refusals, whose response is a WithdrawalProblem.
    return { type: TYPE_BASE + this.code, title: TITLES[this.code], status: this.status, detail: this.detail, code: this.code, ...this.extra } as Problem | WithdrawalProblem;
  }
}

export function sendProblem(reply: FastifyReply, problem: ProblemError): FastifyReply {
  return reply.code(problem.status).headers(problem.headers).type('application/problem+json').send(problem.toProblem());
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Ajv's errors as the contract's FieldErrors: JSON Pointers to the offending fields. */
export function fieldErrors(errors: readonly AjvError[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors) {
    const child = (error.params.missingProperty ?? error.params.additionalProperty ?? error.params.unevaluatedProperty) as string | undefined;
    let pointer = child === undefined ? error.instancePath : `${error.instancePath}/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const tooLong = pointer.length > 512; // the contract bounds pointers; an unknown field's name is the caller's
    if (tooLong) pointer = error.instancePath;
    const detail =
      tooLong ? 'has a field whose name is too long to repeat'
      : error.keyword === 'additionalProperties' ? 'is not a field of this request'
      : error.keyword === 'enum' ? `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`
      : (error.message ?? error.keyword);
    const key = `${pointer} ${detail}`;
    if (!seen.has(key) && out.length < 100) out.push({ pointer, detail: detail.slice(0, 1024) }), seen.add(key);
  }
  return out;
}

/** A 422 that names each query parameter at fault: the value's problem, or a parameter the operation does not have. */
export function invalidParameters(errors: readonly FieldError[]): ProblemError {
  const first = errors[0]!;
  return new ProblemError(422, 'validation_failed', `The query parameter ${first.parameter} is invalid: ${first.detail}.`, { errors: [...errors] });
}

function queryProblem(errors: readonly AjvError[]): ProblemError {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors) {
    const unknown = error.params.additionalProperty as string | undefined;
    const parameter = (unknown ?? error.instancePath.slice(1).split('/')[0] ?? '').slice(0, 64) || 'query';
    const detail =
      unknown !== undefined ? 'is not a parameter of this operation'
      : error.keyword === 'enum' ? `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`
      : (error.message ?? error.keyword);
    if (!seen.has(parameter) && out.length < 100) out.push({ pointer: '', parameter, detail: detail.slice(0, 1024) }), seen.add(parameter);
  }
  return invalidParameters(out);
}

/** Maps whatever was thrown to the problem the caller gets; only the unexpected become 500s. */
export function toProblemError(error: FastifyError & { validation?: AjvError[]; validationContext?: string }): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof CursorRefused) return invalidParameters([{ pointer: '', parameter: 'cursor', detail: error.message }]);
  if (error instanceof CursorExpired) return new ProblemError(410, 'cursor_expired', error.message);
  if (error.validation) {
    if (error.validationContext === 'body') {
      return new ProblemError(422, 'validation_failed', 'The request body does not match the contract.', { errors: fieldErrors(error.validation) });
    }
    if (error.validationContext === 'querystring') return queryProblem(error.validation);
    const first = error.validation[0];
    const name = first?.instancePath.slice(1) || error.validationContext || 'parameter';
    // A uuid (an order's, a withdrawal's) is said so; another parameter (an event's id) by its schema's rule.
    const detail = first?.keyword === 'format' && first.params.format === 'uuid' ? 'must be a UUID' : (first?.message ?? 'is not of the form the contract gives');
    return new ProblemError(422, 'validation_failed', `The path parameter ${name} is malformed: it ${detail}.`, {
      errors: [{ pointer: '', parameter: name, detail }],
    });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProblemError(413, 'payload_too_large', 'The request body is over 16384 bytes.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ProblemError(415, 'unsupported_media_type', 'Send the body as application/json.');
  }
  if (error.statusCode === 400) return new ProblemError(400, 'malformed_json', 'The request could not be read.');
  return new ProblemError(500, 'internal_error', 'The platform failed to handle the request; it may be retried.');
}

export function errorHandler(this: unknown, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const problem = toProblemError(error);
  // A 5xx thrown on purpose (503 network_halted) is a refusal the platform's state explains, logged where that state is (the halt): not a failure.
  if (problem.status >= 500 && !(error instanceof ProblemError)) request.log.error({ err: error }, 'request failed');
  return sendProblem(reply, problem);
}

/** The router's own refusals (Fastify's frameworkErrors), before any route runs. */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return sendProblem(reply, new ProblemError(400, 'bad_request', 'The request path is not a valid URL (a malformed percent-escape).'));
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return sendProblem(reply, new ProblemError(414, 'uri_too_long', 'A path segment is over 2048 characters.'));
  }
  return sendProblem(reply, toProblemError(error));
}

/**
 * What Node's HTTP parser refuses before Fastify sees a request (its clientError event): a request
 * not in full within the timeout (408), a request line and headers over 16 KiB (431), anything that
 * is not HTTP (400). Written straight to the socket, which is then closed.
 */
export function clientErrorHandler(requestTimeoutSeconds: number) {
  return (error: Error & { code?: string }, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const problem =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? new ProblemError(408, 'request_timeout', `The request did not arrive in full within ${requestTimeoutSeconds} s.`)
      : error.code === 'HPE_HEADER_OVERFLOW' ? new ProblemError(431, 'headers_too_large', 'The request line and headers are over 16 KiB.')
      : new ProblemError(400, 'bad_request', 'The request is not valid HTTP/1.1.');
    if (socket.writable) {
      const body = JSON.stringify(problem.toProblem());
      socket.write(
        `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
