import type { Problem, WithdrawalProblem } from '../../generated/schema.js';

/**
 * A failure answered by the API (any status outside 2xx), thrown by the list iterators
 * (`listDepositOrders`, `listWithdrawals`, `listEvents`, `listAllEvents`), `getBalances`,
 * `getWithdrawalTerms` and `createWithdrawal` (but for its refusals: WithdrawalRefusedError). The plain typed calls (`GET`,
 * `POST`, …) do not throw: they return it as `error`.
 *
 * `problem` is the typed RFC 9457 problem of the body. It is `undefined` when the body is not one (a
 * proxy's HTML error page, an empty body): the client does not make up a problem the API did not send.
 * `status` and `response` are always there.
 */
export class PartnerApiError extends Error {
  readonly status: number;
  readonly problem: Problem | undefined;
  readonly response: Response;

  /** `body`: the response's parsed body; `message` replaces the one made from it. */
  constructor(response: Response, body: unknown, message?: string) {
    const problem = isProblem(body) ? body : undefined;
    super(
      message ??
        (problem
          ? `${response.status} ${problem.code}: ${problem.detail ?? problem.title}`
          : `${response.status} ${response.statusText || 'error'}: the response is not a problem (RFC 9457)`),
    );
    this.name = 'PartnerApiError';
    this.status = response.status;
    this.problem = problem;
    this.response = response;
  }
}

/** An object that has a problem's required fields: a numeric `status`, and a string `code`, `type` and `title`. */
function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const { status, code, type, title } = body as Record<string, unknown>;
  return typeof status === 'number' && typeof code === 'string' && typeof type === 'string' && typeof title === 'string';
}

/**
 * A withdrawal refused (`422`, or `503` `network_halted`) by `createWithdrawal`; nothing changed.
 * `problem.code` says why: `insufficient_balance` and `daily_limit_exceeded` with `available` (smallest
 * units), `withdrawals_disabled`, `validation_failed` with `errors`, `network_halted` (send the same
 * request again later). Its own class, as its problem is a `WithdrawalProblem`.
 */
export class WithdrawalRefusedError extends Error {
  readonly status: number;
  readonly problem: WithdrawalProblem;
  readonly response: Response;

  constructor(response: Response, problem: WithdrawalProblem) {
    super(`${response.status} ${problem.code}: ${problem.detail ?? problem.title}`);
    this.name = 'WithdrawalRefusedError';
    this.status = response.status;
    this.problem = problem;
    this.response = response;
  }

  /** A refusal's body, told from any other failure's. */
  static is(response: Response, body: unknown): body is WithdrawalProblem {
    return (response.status === 422 || (response.status === 503 && (body as { code?: unknown } | null)?.code === 'network_halted')) && isProblem(body);
  }
}
