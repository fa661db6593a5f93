// The platform's background work: a scanner per network with an RPC URL, the callback dispatcher and
// the expiry job. Started by `partner-api serve`, stopped before the database closes.
import { CallbackDispatcher } from './callbacks/dispatcher.js';
import { ChainScanner } from './chain/scanner.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { expireOrders } from './deposits.js';
import type { SecretKeeper } from './secrets.js';
import type { Clock } from './time.js';

export interface Workers {
  scanners: ChainScanner[];
  dispatcher: CallbackDispatcher;
  stop(): Promise<void>;
}

type Log = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

function repeat(work: () => Promise<unknown>, intervalMs: number, log: Log | undefined, what: string) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const tick = async () => {
    running = work().catch((error: unknown) => log?.warn({ err: error }, `${what} failed`));
    await running;
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, 0);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}

export function startWorkers(deps: { config: Config; db: Database; secrets: SecretKeeper; now: Clock; log?: Log }): Workers {
  const { config, db, now, log } = deps;
  const scanners = (['Tron', 'Ethereum'] as const).flatMap((network) => {
    const { chain, confirmations } = config.networks[network];
    if (!chain) return [];
    return [new ChainScanner({ network, chain, confirmations, watchWindowSeconds: config.watchWindowSeconds, db, now, ...(log ? { log } : {}) })];
  });
  const dispatcher = new CallbackDispatcher({ db, secrets: deps.secrets, config: config.callbacks, mode: config.mode, now, ...(log ? { log } : {}) });
  scanners.forEach((s) => s.start());
  dispatcher.start();
  const stopExpiry = repeat(() => expireOrders(db, new Date(now())), config.expiryIntervalSeconds * 1000, log, 'order expiry');
  return {
    scanners,
    dispatcher,
    async stop() {
      await Promise.all([...scanners.map((s) => s.stop()), dispatcher.stop(), stopExpiry()]);
    },
  };
}
