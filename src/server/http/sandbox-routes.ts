// Sandbox test helpers (contract tag Sandbox): what the operator and the chain would do, for the
// signed-in merchant only. Registered only in sandbox mode, so a live platform answers 404.
import type { FastifyInstance } from 'fastify';
import type { SandboxDepositRequest, WithdrawalStatusChange } from '../../../generated/schema.js';
import { componentSchema, uuidPathParams } from './openapi-document.js';
import { parseJsonNumberUnits } from '../shared/money.js';
import type { Database } from '../db/database.js';
import type { PaymentLinks } from '../payment-page/links.js';
import { sandboxDeposit } from '../orders/sandbox-deposits.js';
import type { Clock } from '../shared/time.js';
import { madeUpTxId } from '../withdrawals/sandbox-settlement.js';
import { writtenNumber } from './authentication.js';
import { ProblemError } from './problems.js';
import { answerWithdrawalRequest, type AskedWithdrawal, type WithdrawalRequestDeps } from './withdrawal-requests.js';
import { MAX_EXACT_INTEGER } from '../shared/exact-integer.js';

const invalid = (pointer: string, detail: string) =>
  new ProblemError(422, 'validation_failed', 'The request body does not match the contract.', { errors: [{ pointer, detail }] });

/** Printable ASCII without spaces, as the contract's IdempotencyKey parameter. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface SandboxRouteDeps extends WithdrawalRequestDeps {
  db: Database;
  now: Clock;
  watchWindowSeconds: number;
  paymentLinks: PaymentLinks;
}

export function sandboxRoutes(app: FastifyInstance, deps: SandboxRouteDeps) {

  app.post<{ Params: { uuid: string }; Body: SandboxDepositRequest }>(
    '/sandbox/v1/orders/:uuid/deposits',
    {
      schema: {
        params: uuidPathParams('OrderUuid'),
        body: componentSchema('SandboxDepositRequest'),
      },
    },
    async (request, reply) => {
      const merchantId = request.merchant!.id;
      const key = request.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))) {
        throw new ProblemError(422, 'validation_failed', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.');
      }
      // The made-up transaction is named by the key, or without one by the signed request itself.
      const seed = key ?? `signed\0${request.headers['x-timestamp']}\0${request.headers['x-signature']}`;
      // As written: 1.0000000000000001 is no whole number of smallest units, though it reads as the double 1.
      const amount = parseJsonNumberUnits(writtenNumber(request, 'amount') ?? '', 0);
      if (amount === undefined) throw invalid('/amount', 'must be a whole number of smallest units (2500000 is 2.5 USDT)');
      const result = await sandboxDeposit(deps.db, { merchantId, orderUuid: request.params.uuid, amount, seed, now: new Date(deps.now()), watchWindowSeconds: deps.watchWindowSeconds });
      switch (result.outcome) {
        case 'credited':
        case 'replayed':
          return reply.code(result.outcome === 'credited' ? 201 : 200).send({ ...result.order, paymentUrl: deps.paymentLinks.url(result.order.uuid) });
        case 'not_found':
          throw new ProblemError(404, 'not_found', 'No order with this uuid exists for this merchant.');
        case 'total_too_large':
          throw invalid('/amount', `would take the order's receivedAmount past ${MAX_EXACT_INTEGER}`);
        case 'not_watched':
          throw new ProblemError(409, 'order_not_watched', 'The order is past its watch window; deposits to it are no longer credited.');
        case 'key_reused':
          throw new ProblemError(409, 'idempotency_key_reused', `The Idempotency-Key was used for a deposit of ${result.previousAmount} to this order, not ${amount}.`);
      }
    },
  );

  // The create's own path, as the operator's source: no policy, and it waits for the status helper below.
  app.post<{ Body: AskedWithdrawal }>(
    '/sandbox/v1/withdrawals',
    { schema: { body: componentSchema('SandboxWithdrawalRequest') } },
    (request, reply) => answerWithdrawalRequest(request, reply, deps, 'sandbox'),
  );

  app.post<{ Params: { uuid: string }; Body: WithdrawalStatusChange }>(
    '/sandbox/v1/withdrawals/:uuid/status',
    {
      schema: {
        params: uuidPathParams('WithdrawalUuid'),
        body: componentSchema('WithdrawalStatusChange'),
      },
    },
    async (request) => {
      const { status, failureReason } = request.body;
      if (status === 'PENDING' || (failureReason !== undefined && status !== 'FAILED')) {
        throw invalid(status === 'PENDING' ? '/status' : '/failureReason', status === 'PENDING' ? 'must be DONE or FAILED: a withdrawal starts PENDING and never goes back' : 'goes with FAILED only');
      }
      const notFound = new ProblemError(404, 'not_found', 'No withdrawal with this uuid exists for this merchant.');
      const current = await deps.withdrawals.read(request.merchant!.id, request.params.uuid);
      if (!current) throw notFound;
      // DONE as the sandbox's own settlement makes it: a made-up transaction id of the withdrawal's network.
      const move = status === 'DONE' ? { to: 'DONE' as const, txId: madeUpTxId(current.blockchain!) } : { to: 'FAILED' as const, reason: failureReason ?? 'Failed by the sandbox helper.' };
      const result = await deps.withdrawals.move(request.params.uuid, move, request.merchant!.id);
      if (result === undefined) throw notFound;
      if ('refused' in result) throw new ProblemError(409, 'invalid_status_transition', `The withdrawal cannot move to ${status}: ${result.refused}.`);
      return result;
    },
  );
}
