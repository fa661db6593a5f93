// The real `partner-api serve` process, for tests and benchmarks: started on a free port, read from
// its banner (address, and in sandbox mode the sandbox merchant's credentials).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
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

/** The newest modification time of a file, or of anything in a directory tree (0 if absent). */
function newestChange(path: string): number {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (!stats) return 0;
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(stats.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))));
}

/** True when `npm run build:server` ran after the last change to what it compiles. */
export function buildIsCurrent(): boolean {
  const built = statSync('dist/server/cli.js', { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return ['src/server', 'src/signing', 'tsconfig.json', 'tsconfig.build.json'].every((source) => newestChange(source) <= built);
}

/**
 * The command the tests run: the shipped bin, which runs the build (npm test builds first), when the build
 * is current: it starts on half the CPU time or less that the sources take through tsx, and the suite starts it
 * about a hundred times. After a change to the sources without a build: the sources themselves.
 */
export const PARTNER_API_BIN = buildIsCurrent() ? 'bin/partner-api.js' : 'test/support/partner-api-source.js';

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
