// Sandbox test helpers (contract tag Sandbox): what the operator and the chain would do, for the
// signed-in merchant only. Registered only in sandbox mode, so a live platform answers 404.
import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { SandboxDepositRequest, SandboxWithdrawalRequest, WithdrawalStatusChange } from '../../../generated/schema.js';
import { isAddress } from '../addresses.js';
import { componentSchema, uuidPathParams } from '../contract.js';
import { parseDecimalUnits } from '../money.js';
import type { Database } from '../db/database.js';
import { creditTransfers } from '../deposits.js';
import { READ_ORDER_SQL, toDepositOrder, type OrderRow } from '../orders.js';
import type { Clock } from '../time.js';
import { DuplicateWithdrawalError, type Withdrawals } from '../withdrawals.js';
import { merchantGuard, type GuardDeps } from './partner-routes.js';
import { ProblemError } from './problems.js';

const invalid = (pointer: string, detail: string) =>
  new ProblemError(422, 'validation_failed', 'The request body does not match the contract.', { errors: [{ pointer, detail }] });

export interface SandboxRouteDeps extends GuardDeps {
  db: Database;
  withdrawals: Withdrawals;
  now: Clock;
  watchWindowSeconds: number;
}

export function sandboxRoutes(app: FastifyInstance, deps: SandboxRouteDeps) {
  const preValidation = merchantGuard(deps);

  app.post<{ Params: { uuid: string }; Body: SandboxDepositRequest }>(
    '/sandbox/v1/orders/:uuid/deposits',
    {
      schema: {
        params: uuidPathParams('OrderUuid'),
        body: componentSchema('SandboxDepositRequest'),
      },
      preValidation,
    },
    async (request, reply) => {
      const merchantId = request.merchant!.id;
      const [order] = await deps.db.query<OrderRow>(READ_ORDER_SQL, [request.params.uuid, merchantId]);
      if (!order) throw new ProblemError(404, 'not_found', 'No order with this uuid exists for this merchant.');
      if (order.received_amount + BigInt(request.body.amount) > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw invalid('/amount', `would take the order's receivedAmount past ${Number.MAX_SAFE_INTEGER}`);
      }
      const hash = randomBytes(32).toString('hex');
      // The same crediting path as a transfer read from the chain, with a made-up transaction.
      const now = new Date(deps.now());
      const { credits } = await deps.db.transaction((tx) =>
        creditTransfers(
          tx,
          [{ network: order.blockchain, txHash: order.blockchain === 'Tron' ? hash : `0x${hash}`, logIndex: 0, blockNumber: 0n, to: order.address, amount: BigInt(request.body.amount), source: 'sandbox' }],
          { now, at: now, watchWindowSeconds: deps.watchWindowSeconds },
        ),
      );
      if (credits.length === 0) throw new ProblemError(409, 'order_not_watched', 'The order is past its watch window; deposits to it are no longer credited.');
      const [credited] = await deps.db.query<OrderRow>(READ_ORDER_SQL, [request.params.uuid, merchantId]);
      return reply.code(201).send(toDepositOrder(credited!));
    },
  );

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
        if (error instanceof DuplicateWithdrawalError) throw new ProblemError(409, 'external_id_conflict', `A withdrawal with externalId ${externalId} exists.`);
        throw error;
      }
    },
  );

  app.post<{ Params: { uuid: string }; Body: WithdrawalStatusChange }>(
    '/sandbox/v1/withdrawals/:uuid/status',
    {
      schema: {
        params: uuidPathParams('WithdrawalUuid'),
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
