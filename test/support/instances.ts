// Several `partner-api serve` processes on one PostgreSQL, as an operator runs them past one process:
// one SECRET_KEY, a data directory each, and each reaching the chain through its own counting JSON-RPC
// proxy, so a test or bench sees which instances talk to the node (the job lease test, bench:instances).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPartnerApi, type RunningPartnerApi } from './partner-api.js';
import { startFaultProxy, type FaultProxy } from './rpc-fault-proxy.js';

export interface Instances {
  instances: RunningPartnerApi[];
  /** proxies[i] carries instance i's JSON-RPC calls. */
  proxies: FaultProxy[];
  /** Stops every instance (a killed one too), closes the proxies and removes the data directories. */
  stop(): Promise<void>;
}

/**
 * Starts `count` instances one after another (the first creates the sandbox merchant the others then
 * find), with `env` on top of what they share: the database, the secret key, a generous rate limit and
 * the Ethereum RPC URL of their proxy.
 */
export async function startInstances(count: number, databaseUrl: string, rpcUrl: string, env: Record<string, string>): Promise<Instances> {
  const instances: RunningPartnerApi[] = [];
  const proxies: FaultProxy[] = [];
  const dataDirs: string[] = [];
  const stop = async () => {
    await Promise.all(instances.map((p) => p.stop()));
    await Promise.all(proxies.map((p) => p.close()));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  };
  const secretKey = randomBytes(32).toString('base64');
  try {
    for (let i = 0; i < count; i++) {
      const proxy = await startFaultProxy(rpcUrl);
      proxies.push(proxy);
      dataDirs.push(mkdtempSync(join(tmpdir(), 'partner-instance-')));
      instances.push(
        await startPartnerApi({
          DATA_DIR: dataDirs[i]!,
          DATABASE_URL: databaseUrl,
          SECRET_KEY: secretKey,
          RATE_LIMIT: '100000/60',
          ETHEREUM_RPC_URL: proxy.url,
          ...env,
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { instances, proxies, stop };
}
