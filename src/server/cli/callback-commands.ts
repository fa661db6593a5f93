// The operator's callback commands: list events with their attempts, send one again.
import { DELIVERY_STATES, listCallbacks, type CallbackRecord, type DeliveryState } from '../callbacks/history.js';
import { CallbackInFlightError, NoCallbackError, redeliverCallback } from '../callbacks/redelivery.js';
import { isUuid } from '../shared/uuid.js';
import { required } from './flags.js';
import { RefusedError, UsageError } from './errors.js';
import { JSON_FLAG, print, withPlatform, type Command } from './command.js';

/** One line per callback without --json: its state and its last attempt. */
export function formatCallback(record: CallbackRecord): string {
  const last = record.attempts.at(-1);
  const outcome = last ? `${last.statusCode ?? 'no answer'} in ${last.latencyMs} ms${last.error ? ` (${last.error})` : ''}` : 'not attempted';
  const subject = record.orderUuid ? `order ${record.orderUuid}` : `withdrawal ${record.withdrawalUuid}`;
  const destination = record.url ?? '(no callbackUrl: in the feed only)';
  return `${record.webhookId}  ${record.event.padEnd(18)}  ${record.state.padEnd(9)}  ${record.attempts.length} attempt(s), last ${outcome}  ${subject}  → ${destination}`;
}

export const CALLBACK_COMMANDS: Command[] = [
  {
    words: ['callbacks', 'list'],
    summary: 'lists callback events, newest first, with their delivery attempts',
    flags: {
      order: { value: 'UUID', description: "only this order's events" },
      withdrawal: { value: 'UUID', description: "only this withdrawal's events" },
      state: { value: DELIVERY_STATES.join('|'), description: 'only events in this state' },
      limit: { value: 'N', description: 'at most N events, 1 to 10000 (default 50)' },
      json: JSON_FLAG,
    },
    example: 'partner-api callbacks list --state failed --limit 20',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const state = flags.state as string | undefined;
      if (state !== undefined && !DELIVERY_STATES.includes(state as DeliveryState)) throw new UsageError(`--state must be one of ${DELIVERY_STATES.join(', ')}`);
      const order = flags.order as string | undefined;
      if (order !== undefined && !isUuid(order)) throw new UsageError('--order must be an order uuid');
      const withdrawal = flags.withdrawal as string | undefined;
      if (withdrawal !== undefined && !isUuid(withdrawal)) throw new UsageError('--withdrawal must be a withdrawal uuid');
      if (order !== undefined && withdrawal !== undefined) throw new UsageError('give --order or --withdrawal, not both');
      const limit = Number(flags.limit ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
      const events = await withPlatform(io, config, (p) => listCallbacks(p.db, { state: state as DeliveryState | undefined, subject: order ?? withdrawal, limit }));
      print(io, flags, events, events.map(formatCallback).join('\n') || 'no callbacks');
    },
  },
  {
    words: ['callbacks', 'redeliver'],
    summary: 'sends a callback event again, under the same webhook-id',
    flags: { 'webhook-id': { value: 'ID', description: "the event's webhook-id (see callbacks list)", required: true }, json: JSON_FLAG },
    example: 'partner-api callbacks redeliver --webhook-id msg_…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const webhookId = required(flags, 'webhook-id');
      const event = await withPlatform(io, config, (p) => redeliverCallback(p.db, webhookId)).catch((error: unknown) => {
        throw error instanceof CallbackInFlightError || error instanceof NoCallbackError ? new RefusedError(error.message) : error;
      });
      if (!event) throw new RefusedError(`no callback ${webhookId}`);
      print(io, flags, event, `callback ${webhookId} will be delivered again (same webhook-id)`);
    },
  },
];
