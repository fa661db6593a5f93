// `partner-api callbacks list` without --json: one line per callback, its state and its last attempt.
import type { CallbackRecord } from '../callbacks/history.js';

export function formatCallback(record: CallbackRecord): string {
  const last = record.attempts.at(-1);
  const outcome = last ? `${last.statusCode ?? 'no answer'} in ${last.latencyMs} ms${last.error ? ` (${last.error})` : ''}` : 'not attempted';
  const subject = record.orderUuid ? `order ${record.orderUuid}` : `withdrawal ${record.withdrawalUuid}`;
  const destination = record.url ?? '(no callbackUrl: in the feed only)';
  return `${record.webhookId}  ${record.event.padEnd(18)}  ${record.state.padEnd(9)}  ${record.attempts.length} attempt(s), last ${outcome}  ${subject}  → ${destination}`;
}
