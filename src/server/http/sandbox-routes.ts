// Sandbox test helpers (contract tag Sandbox): what the operator and the chain would do, for the
// signed-in merchant only. Registered only in sandbox mode, so a live platform answers 404.
import type { FastifyInstance } from 'fastify';
import type { SandboxWithdrawalRequest, WithdrawalStatusChange } from '../../../generated/schema.js';
import { isAddress } from '../cli-checks.js';
import { componentSchema, parameterSchema } from '../contract.js';
import { parseDecimalUnits } from '../money.js';
import { sqlState } from '../db/database.js';
import type { Withdrawals } from '../withdrawals.js';
import { merchantGuard, type GuardDeps } from './partner-routes.js';
import { ProblemError } from './problems.js';

const invalid = (pointer: string, detail: string) =>
  new ProblemError(422, 'validation_failed', 'The request body does not match the contract.', { errors: [{ pointer, detail }] });

export function sandboxRoutes(app: FastifyInstance, deps: GuardDeps & { withdrawals: Withdrawals }) {
  const preValidation = merchantGuard(deps);

  app.post<{ Body: SandboxWithdrawalRequest }>(
    '/sandbox/v1/withdrawals',
    { schema: { body: componentSchema('SandboxWithdrawalRequest') }, preValidation },
    async (request, reply) => {
      const { externalId, amount, blockchain, destinationAddress } = request.body;
      // String(number) is the shortest decimal that reads back as the same number: what the caller wrote.
      const amountUnits = parseDecimalUnits(String(amount));
      if (amountUnits === undefined || amountUnits === 0n) throw invalid('/amount', 'must be a positive amount with at most 6 decimals');
      if (!isAddress(blockchain, destinationAddress)) throw invalid('/destinationAddress', `is not a ${blockchain} address`);
      try {
        const withdrawal = await deps.withdrawals.create({ merchantId: request.merchant!.id, externalId, amountUnits, blockchain, destinationAddress });
        return reply.code(201).send(withdrawal);
      } catch (error) {
        if (sqlState(error) === '23505') throw new ProblemError(409, 'external_id_conflict', `A withdrawal with externalId ${externalId} exists.`);
        throw error;
      }
    },
  );

  app.post<{ Params: { uuid: string }; Body: WithdrawalStatusChange }>(
    '/sandbox/v1/withdrawals/:uuid/status',
    {
      schema: {
        params: { type: 'object', required: ['uuid'], properties: { uuid: parameterSchema('WithdrawalUuid') } },
        body: componentSchema('WithdrawalStatusChange'),
      },
      preValidation,
    },
    async (request) => {
      const result = await deps.withdrawals.setStatus(request.params.uuid, request.body.status, request.merchant!.id);
      if (result === undefined) throw new ProblemError(404, 'not_found', 'No withdrawal with this uuid exists for this merchant.');
      if (result === 'refused') throw new ProblemError(409, 'invalid_status_transition', `The withdrawal's status is final; it cannot move to ${request.body.status}.`);
      return result;
    },
  );
}
