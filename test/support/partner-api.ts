// The real `partner-api serve` process, for tests and benchmarks: started on a free port, read from
// its banner (address, and in sandbox mode the sandbox merchant's credentials).
import { createPartnerClient, type PartnerClient } from '../../src/client/index.js';
import { startProcess, type Started } from './processes.js';

export interface Credentials {
  apiKey: string;
  apiSecret: string;
  callbackSecret: string;
}

export interface RunningPartnerApi {
  process: Started;
  baseUrl: string;
  /** The sandbox merchant printed by the banner (sandbox mode only). */
  sandbox: Credentials | undefined;
  /** A typed client for these credentials (the sandbox merchant's by default). */
  client(credentials?: Pick<Credentials, 'apiKey' | 'apiSecret'>): PartnerClient;
  stop(): Promise<void>;
}

/** The command run from the sources (the shipped bin runs the build: see test/package). */
export const PARTNER_API_BIN = 'test/support/partner-api-source.js';

export async function startPartnerApi(env: Record<string, string>, args: string[] = []): Promise<RunningPartnerApi> {
  const started = await startProcess('node', [PARTNER_API_BIN, 'serve', '--port', '0', ...args], /^Ready\. /m, env);
  const out = started.output();
  const baseUrl = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  const apiKey = /API key:\s+(\S+)/.exec(out)?.[1];
  const sandbox = apiKey
    ? { apiKey, apiSecret: /API secret:\s+(\S+)/.exec(out)![1]!, callbackSecret: /callback secret:\s+(\S+)/.exec(out)![1]! }
    : undefined;
  return {
    process: started,
    baseUrl,
    sandbox,
    client(credentials = sandbox) {
      if (!credentials) throw new Error('no credentials: live mode prints none');
      return createPartnerClient({ baseUrl, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret });
    },
    stop: () => started.stop(),
  };
}
