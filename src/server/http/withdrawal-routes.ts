// A merchant's withdrawals and the balance they draw on: create a withdrawal, read one, read the
// balances. Each request reads as a straight line: authenticate → validate (contract) → the amount and
// callback URL at the edge → withdrawals/requests.ts → respond. A refusal is a WithdrawalProblem that
// changed nothing.
import type { FastifyInstance } from 'fastify';
import type { CreateWithdrawalRequest } from '../../../generated/schema.js';
import { callbackUrlProblem, PRIVATE_DESTINATION, type CallbackPolicy } from '../callbacks/destinations.js';
import type { Database } from '../db/database.js';
import { readBalances } from '../ledger/ledger.js';
import { formatDecimalUnits, parseJsonNumberUnits, toJsonInteger } from '../shared/money.js';
import type { Refusal } from '../withdrawals/requests.js';
import { toWithdrawal } from '../withdrawals/withdrawal-rows.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';
import type { Metrics } from './metrics.js';
import { writtenNumber } from './authentication.js';
import { componentSchema, uuidPathParams } from './openapi-document.js';
import { ProblemError } from './problems.js';

export interface WithdrawalRouteDeps {
  db: Database;
  withdrawals: Withdrawals;
  callbackPolicy: CallbackPolicy;
  metrics: Metrics;
}

const invalid = (errors: { pointer: string; detail: string }[]) => new ProblemError(422, 'validation_failed', 'The request does not match the contract.', { errors });

/** A refused withdrawal as its problem: what the merchant can act on, in the smallest unit and in USDT. */
export function refusalProblem(refusal: Refusal, network: string): ProblemError {
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

export function withdrawalRoutes(app: FastifyInstance, deps: WithdrawalRouteDeps) {

  app.post<{ Body: CreateWithdrawalRequest }>(
    '/partner/v1/platforms/withdrawals',
    { schema: { body: componentSchema('CreateWithdrawalRequest') } },
    async (request, reply) => {
      const { body } = request;
      const errors: { pointer: string; detail: string }[] = [];
      // The amount's digits as written, never the double they were parsed into (1.9999999999999999 reads as 2).
      const amountUnits = parseJsonNumberUnits(writtenNumber(request, 'amount') ?? '');
      if (amountUnits === undefined || amountUnits === 0n) errors.push({ pointer: '/amount', detail: 'must be a positive amount of whole USDT with at most 6 decimals' });
      const urlProblem = body.callbackUrl === undefined ? undefined : callbackUrlProblem(body.callbackUrl, deps.callbackPolicy);
      if (urlProblem) {
        const way = urlProblem === PRIVATE_DESTINATION ? "; for a receiver on the platform's own machine in tests, its operator sets ALLOW_PRIVATE_CALLBACKS=true" : '';
        errors.push({ pointer: '/callbackUrl', detail: urlProblem + way });
      }
      if (errors.length > 0) throw invalid(errors);
      const result = await deps.withdrawals.request({
        merchantId: request.merchant!.id,
        externalId: body.externalId,
        network: body.blockchain,
        currency: body.currency,
        amountUnits: amountUnits!,
        destinationAddress: body.destinationAddress,
        callbackUrl: body.callbackUrl,
        source: 'api',
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
    },
  );

  app.get<{ Params: { uuid: string } }>(
    '/partner/v1/platforms/withdrawals/:uuid',
    { schema: { params: uuidPathParams('WithdrawalUuid') } },
    async (request) => {
      const withdrawal = await deps.withdrawals.read(request.merchant!.id, request.params.uuid);
      if (!withdrawal) throw new ProblemError(404, 'not_found', 'No withdrawal with this uuid exists for this merchant.');
      return withdrawal;
    },
  );

  app.get('/partner/v1/platforms/balances', async (request) => ({ data: await readBalances(deps.db, request.merchant!.id) }));
}
