// The real `partner-api serve` process, for tests and benchmarks: started on a free port, read from
// its banner (address, and in sandbox mode the sandbox merchant's credentials).
// @ts-expect-error: a plain JavaScript script, without declarations
import { isCurrent, STEPS } from '../../scripts/build-changed.mjs';
import { createPartnerClient, type PartnerClient } from '../../src/client/index.js';
import { ROOT } from './packages.js';
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

/** True when dist/server is the platform's build of its sources as they are now (scripts/build-changed.mjs). */
export function buildIsCurrent(): boolean {
  return isCurrent(ROOT, (STEPS as { name: string }[]).find((step) => step.name === 'server'));
}

/**
 * What node runs for the platform: its flags, then the command. The command is the shipped bin, which
 * runs the build (npm test and the benchmarks build what changed first), when the build is current: it
 * starts on half the CPU time or less that the sources take through tsx; after a change to the sources
 * without a build, the sources themselves. A process a test starts lives seconds, and V8's optimizing
 * compiler (TurboFan) spent about 1.2 of a start's 3 CPU-s on PGlite's WebAssembly, work that pays back
 * only in a long run: under vitest the baseline compiler (Liftoff) alone compiles it. The same code runs,
 * its machine code less optimized (index-gaps.test.ts: 45 -> 33 CPU-s). Benchmarks, which do not run
 * under vitest, run the platform as an operator does.
 */
export function partnerApiCommand(): string[] {
  command ??= [...(process.env.VITEST ? ['--liftoff-only'] : []), buildIsCurrent() ? 'bin/partner-api.js' : 'test/support/partner-api-source.js'];
  return command;
}
let command: string[] | undefined; // asked once a process: the build does not change under a run

export async function startPartnerApi(env: Record<string, string>, args: string[] = []): Promise<RunningPartnerApi> {
  const started = await startProcess(process.execPath, [...partnerApiCommand(), 'serve', '--port', '0', ...args], /^Ready\. /m, env);
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
