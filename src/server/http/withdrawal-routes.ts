// A merchant's withdrawals and the balance they draw on: create a withdrawal, read one, read the
// balances and the terms a withdrawal must meet. Each request reads as a straight line: authenticate →
// validate (contract) → the amount and callback URL at the edge → withdrawals/requests.ts → respond
// (./withdrawal-requests.ts, which the sandbox's helper shares). A refusal is a WithdrawalProblem that
// changed nothing.
import type { FastifyInstance } from 'fastify';
import type { WithdrawalTerms as WireTerms } from '../../../generated/schema.js';
import type { CallbackPolicy } from '../callbacks/destinations.js';
import type { Database } from '../db/database.js';
import { readBalances } from '../ledger/ledger.js';
import { unitsToWireNumber } from '../shared/money.js';
import { MAX_WITHDRAWAL_UNITS, type WithdrawalTerms } from '../withdrawals/requests.js';
import type { Withdrawals } from '../withdrawals/withdrawals.js';
import type { Metrics } from './metrics.js';
import { componentSchema, queryParams, uuidPathParams } from './openapi-document.js';
import { ProblemError } from './problems.js';
import { answerWithdrawalRequest, type AskedWithdrawal } from './withdrawal-requests.js';

export interface WithdrawalRouteDeps {
  db: Database;
  withdrawals: Withdrawals;
  callbackPolicy: CallbackPolicy;
  metrics: Metrics;
}

const TERMS_PATH = '/partner/v1/platforms/withdrawals/terms';

/**
 * A limit as the contract writes withdrawal amounts, converted only here; null where there is none. One
 * above the contract's largest amount is written as that amount: no withdrawal can be larger, and a JSON
 * number of more digits would not carry its units exactly (WithdrawalLimit).
 */
function wireLimit(units: bigint | undefined): number | null {
  if (units === undefined) return null;
  return unitsToWireNumber(units > MAX_WITHDRAWAL_UNITS ? MAX_WITHDRAWAL_UNITS : units);
}

function toWireTerms(terms: WithdrawalTerms): WireTerms {
  return {
    blockchain: terms.network,
    currency: terms.currency,
    enabled: terms.enabled,
    fee: unitsToWireNumber(terms.fee),
    minimum: unitsToWireNumber(terms.minimum),
    maximum: wireLimit(terms.maximum),
    dailyLimit: wireLimit(terms.dailyLimit),
    dailyLeft: wireLimit(terms.dailyLeft),
    approvalAbove: wireLimit(terms.approveAbove),
    allowedDestinations: terms.allowedAddresses,
  };
}

export function withdrawalRoutes(app: FastifyInstance, deps: WithdrawalRouteDeps) {

  app.post<{ Body: AskedWithdrawal }>(
    '/partner/v1/platforms/withdrawals',
    { schema: { body: componentSchema('CreateWithdrawalRequest') } },
    (request, reply) => answerWithdrawalRequest(request, reply, deps, 'api'),
  );

  // A path of its own beside /withdrawals/{uuid}: the router takes the static segment first.
  app.get(TERMS_PATH, { schema: { querystring: queryParams(TERMS_PATH, 'get') } }, async (request) => ({
    data: (await deps.withdrawals.terms(request.merchant!.id)).map(toWireTerms),
  }));

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
