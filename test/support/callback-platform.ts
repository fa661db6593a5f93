// A test platform whose clock the test moves, its callbacks sent by the real dispatcher, run by hand
// (drain), to a receiver on loopback: the setup the callback tests share (dispatcher.test.ts, expiry.test.ts).
import type { CreatedDepositOrder } from '../../generated/schema.js';
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
  close(): Promise<void>;
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
    async close() {
      await t.close();
      await receiver.close();
    },
  };
}
