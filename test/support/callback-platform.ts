// A test platform whose clock the test moves, its callbacks sent by the real dispatcher, run by hand
// (drain), to a receiver on loopback: the setup the callback tests share (test/server/callbacks/,
// test/server/orders/deposits.test.ts and expiry.test.ts).
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { CreatedDepositOrder } from '../../generated/schema.js';
import type { DepositOrder } from '../../src/client/index.js';
import { CallbackDispatcher } from '../../src/server/callbacks/dispatcher.js';
import type { Clock } from '../../src/server/shared/time.js';
import { orderRequest } from '../fixtures/orders.js';
import { startTestPlatform, type DatabaseKind, type TestPlatform } from './platform.js';
import { startReceiver, type Receiver } from './receiver.js';

/** Near real time: the standardwebhooks package checks timestamps against the real clock. */
export const T0 = Math.floor(Date.now() / 1000) * 1000;

export interface CallbackPlatform {
  t: TestPlatform;
  receiver: Receiver;
  dispatcher: CallbackDispatcher;
  /** An order through the API whose callbacks go to the receiver's `<path>/<externalId>`. */
  createOrder(externalId: string, path?: string): Promise<CreatedDepositOrder>;
  /** Runs the dispatcher until nothing is due. */
  drain(): Promise<void>;
  /** A sandbox deposit to the order: the API's status and body. */
  deposit(uuid: string, amount: number): Promise<{ status: number; body: DepositOrder & { code?: string } }>;
  /** Time passing for the outbox, whose due times and leases are the database's clock: all of them move back. */
  elapse(ms: number): Promise<void>;
  /** The attempts at the callbacks whose URL ends in `webhookPath`, each with its record's state, oldest first. */
  attempts(webhookPath: string): Promise<AttemptRow[]>;
  close(): Promise<void>;
}

export interface AttemptRow {
  state: string;
  attempts: number;
  due_in_ms: number;
  status_code: number | null;
  error: string | null;
  error_kind: string | null;
}

const JSON_TYPE = { 'Content-Type': 'application/json' };

/** The platform's calls a test makes most, usable before it starts (they run once it has). */
export type CallbackCalls = Pick<CallbackPlatform, 'deposit' | 'elapse' | 'attempts'>;

/**
 * A describe block's callback platform: started before its tests (handed to `started`), closed after
 * them, and its clock put back after each test (`resetClock`), so that each test starts at T0.
 */
export function useCallbackPlatform(kind: DatabaseKind, { now, started, resetClock }: { now: Clock; started: (c: CallbackPlatform) => void; resetClock: () => void }): CallbackCalls {
  let platform: CallbackPlatform | undefined;
  beforeAll(async () => {
    platform = await startCallbackPlatform(kind, now);
    started(platform);
  });
  afterAll(() => platform?.close());
  afterEach(resetClock);
  return {
    deposit: (uuid, amount) => platform!.deposit(uuid, amount),
    elapse: (ms) => platform!.elapse(ms),
    attempts: (webhookPath) => platform!.attempts(webhookPath),
  };
}

/** Retries after 5 s and 60 s, a 1 s timeout, and loopback receivers allowed. */
export async function startCallbackPlatform(kind: DatabaseKind, now: Clock): Promise<CallbackPlatform> {
  const receiver = await startReceiver();
  const t = await startTestPlatform(kind, { now, env: { CALLBACK_RETRY_SCHEDULE: '5,60', CALLBACK_TIMEOUT_SECONDS: '1', ALLOW_PRIVATE_CALLBACKS: 'true' } });
  const dispatcher = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: t.platform.config.callbacks, mode: 'sandbox', now });
  return {
    t,
    receiver,
    dispatcher,
    async createOrder(externalId, path = '/ok') {
      const { data } = await t.client().POST('/partner/v1/platforms/orders', {
        body: orderRequest(externalId, { callbackUrl: `${receiver.url}${path}/${externalId}` }),
      });
      return data!;
    },
    async drain() {
      while ((await dispatcher.runOnce()) > 0);
    },
    async deposit(uuid, amount) {
      const response = await t.signed('POST', `/sandbox/v1/orders/${uuid}/deposits`, { body: JSON.stringify({ amount }), headers: JSON_TYPE });
      return { status: response.status, body: (await response.json()) as DepositOrder & { code?: string } };
    },
    async elapse(ms) {
      await t.db.query('UPDATE callback_outbox SET next_attempt_at = next_attempt_at - make_interval(secs => $1::double precision / 1000)', [ms]);
    },
    attempts(webhookPath) {
      return t.db.query<AttemptRow>(
        `SELECT o.state, o.attempts, extract(epoch FROM o.next_attempt_at - now())::float8 * 1000 AS due_in_ms, a.status_code, a.error, a.error_kind FROM callback_outbox o
           JOIN callback_attempts a ON a.outbox_id = o.id WHERE o.url LIKE $1 ORDER BY a.id`,
        [`%${webhookPath}`],
      );
    },
    async close() {
      await t.close();
      await receiver.close();
    },
  };
}
