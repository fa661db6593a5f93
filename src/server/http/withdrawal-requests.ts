// A withdrawal asked for over HTTP: the merchant's create (withdrawal-routes.ts) and the sandbox's helper
// (sandbox-routes.ts) are this one path, so that both check the same fields, answer the same statuses and
// refuse with the same codes. They differ only in what the request's source decides in
// withdrawals/requests.ts (the helper's is the operator's path: no policy, no settlement by itself).
// Route files import no route file (test/server/layout.test.ts), hence a file of its own.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CreateWithdrawalRequest } from '../../../generated/schema.js';
import { callbackUrlProblem, PRIVATE_DESTINATION, type CallbackPolicy } from '../callbacks/destinations.js';
import { formatDecimalUnits, parseJsonNumberUnits, toJsonInteger } from '../shared/money.js';
import type { Refusal } from '../withdrawals/requests.js';
import { toWithdrawal, type WithdrawalSource } from '../withdrawals/withdrawal-rows.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';
import type { Metrics } from './metrics.js';
import { writtenNumber } from './authentication.js';
import { ProblemError } from './problems.js';

export interface WithdrawalRequestDeps {
  withdrawals: Withdrawals;
  callbackPolicy: CallbackPolicy;
  metrics: Metrics;
}

/** A create's body: the sandbox helper's lacks `callbackUrl`, and may leave out `currency` (USDT, the only one). */
export type AskedWithdrawal = Omit<CreateWithdrawalRequest, 'currency'> & { currency?: CreateWithdrawalRequest['currency'] };

type FieldErrors = { pointer: string; detail: string }[];

/**
 * A refusal of fields the contract's schema let through: its detail names each rule broken (an address,
 * the minimum, a limit, the allowlist, the platform's own deposit address), not "does not match the
 * contract", which the merchant would read as a malformed request (issue 57).
 */
const invalid = (errors: FieldErrors) =>
  new ProblemError(422, 'validation_failed', `The withdrawal is refused: ${errors.map((e) => `${e.pointer.slice(1)} ${e.detail}`).join('; ')}.`, { errors });

/** A refused withdrawal as its problem: what the merchant can act on, in the smallest unit and in USDT. */
function refusalProblem(refusal: Refusal, network: string): ProblemError {
  switch (refusal.code) {
    case 'validation_failed':
      return invalid(refusal.errors);
    case 'insufficient_balance': {
      const amount = formatDecimalUnits(refusal.needed - refusal.fee);
      const detail = `The withdrawal needs ${formatDecimalUnits(refusal.needed)} USDT (amount ${amount} + fee ${formatDecimalUnits(refusal.fee)}) on ${network}; ${formatDecimalUnits(refusal.available)} USDT is available.`;
      return new ProblemError(422, 'insufficient_balance', detail, { available: toJsonInteger(refusal.available) });
    }
    case 'daily_limit_exceeded':
      return new ProblemError(422, 'daily_limit_exceeded', `Your withdrawals may add up to ${formatDecimalUnits(refusal.limit)} USDT in any 24 hours; ${formatDecimalUnits(refusal.left)} USDT is left.`, { available: toJsonInteger(refusal.left) });
    case 'withdrawals_disabled':
      return new ProblemError(422, 'withdrawals_disabled', "Withdrawals through the API are not enabled for this merchant; the platform's operator turns them on.");
    case 'network_halted':
      // 503, not 422: nothing is wrong with the request; the platform's state refuses it for now, and the same request succeeds once the network is resumed.
      return new ProblemError(503, 'network_halted', `Withdrawals on ${network} are paused while the platform reviews a reorg of the chain (halted since ${refusal.haltedAt.toISOString()}); send the same request again later.`);
  }
}

/** The checks of the edge: the amount as written, and the callback URL against the platform's policy. */
function edgeErrors(request: FastifyRequest<{ Body: AskedWithdrawal }>, amountUnits: bigint | undefined, policy: CallbackPolicy): FieldErrors {
  const errors: FieldErrors = [];
  if (amountUnits === undefined || amountUnits === 0n) errors.push({ pointer: '/amount', detail: 'must be a positive amount of whole USDT with at most 6 decimals' });
  const { callbackUrl } = request.body;
  const urlProblem = callbackUrl === undefined ? undefined : callbackUrlProblem(callbackUrl, policy);
  if (urlProblem) {
    const way = urlProblem === PRIVATE_DESTINATION ? "; for a receiver on the platform's own machine in tests, its operator sets ALLOW_PRIVATE_CALLBACKS=true" : '';
    errors.push({ pointer: '/callbackUrl', detail: urlProblem + way });
  }
  return errors;
}

/**
 * Decides the request (withdrawals/requests.ts) and answers it: 201 with a new withdrawal, 200 with the
 * same one for the same request, 409 for its externalId with other fields, or the refusal's problem.
 */
export async function answerWithdrawalRequest(
  request: FastifyRequest<{ Body: AskedWithdrawal }>,
  reply: FastifyReply,
  deps: WithdrawalRequestDeps,
  source: Exclude<WithdrawalSource, 'operator'>,
) {
  const { body } = request;
  // The amount's digits as written, never the double they were parsed into (1.9999999999999999 reads as 2).
  const amountUnits = parseJsonNumberUnits(writtenNumber(request, 'amount') ?? '');
  const errors = edgeErrors(request, amountUnits, deps.callbackPolicy);
  if (errors.length > 0) throw invalid(errors);
  const result = await deps.withdrawals.request({
    merchantId: request.merchant!.id,
    externalId: body.externalId,
    network: body.blockchain,
    currency: body.currency ?? 'USDT',
    amountUnits: amountUnits!,
    destinationAddress: body.destinationAddress,
    callbackUrl: body.callbackUrl,
    source,
  });
  deps.metrics.withdrawalsRequested.inc({ blockchain: body.blockchain, outcome: result.outcome === 'refused' ? result.refusal.code : result.outcome });
  switch (result.outcome) {
    case 'created':
    case 'replayed':
      return reply.code(result.outcome === 'created' ? 201 : 200).send(toWithdrawal(result.row));
    case 'conflict':
      throw new ProblemError(409, 'external_id_conflict', `A withdrawal with externalId ${body.externalId} exists with different fields.`);
    case 'refused':
      throw refusalProblem(result.refusal, body.blockchain);
  }
}
