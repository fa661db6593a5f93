// What `serve` tells the operator at start: where it listens and, in sandbox mode, the sandbox
// merchant's credentials, also as `export` lines to paste into a shell. It is written to stderr, the
// terminal's stream: the JSON logs go to stdout, so a log collector never receives the secrets.
import type { Config } from '../config.js';
import type { Platform } from '../platform.js';

export interface SandboxCredentials {
  apiKey: string;
  apiSecret: string;
  callbackSecret: string;
  /** What payers see of it on the payment page (SANDBOX_DISPLAY_NAME unless the operator changed it), or null. */
  displayName: string | null;
}

/** The name payers see on the sandbox merchant's payment pages, as a live merchant's display name (`merchants set-display-name` changes it). */
export const SANDBOX_DISPLAY_NAME = 'Sandbox shop';

/** The sandbox merchant, created on the first start. */
export async function sandboxCredentials(platform: Platform): Promise<SandboxCredentials> {
  const merchant =
    (await platform.merchants.byName('sandbox')) ?? (await platform.merchants.byApiKey((await platform.merchants.create('sandbox', SANDBOX_DISPLAY_NAME)).apiKey));
  const { apiKey, apiSecret, callbackSecret } = platform.merchants.credentials(merchant!);
  return { apiKey, apiSecret, callbackSecret, displayName: merchant!.displayName };
}

/** Where callbacks may go, as the policy (config.ts, callbacks/destinations.ts) decides it. */
function callbackReach({ mode, callbacks }: Pick<Config, 'mode' | 'callbacks'>): string {
  if (callbacks.allowPrivate) return 'any address, private and loopback included (ALLOW_PRIVATE_CALLBACKS=true: tests on one machine only)';
  if (mode === 'sandbox' && callbacks.allowLoopback) {
    return 'public addresses and this machine (http://127.0.0.1:PORT/…, http://localhost:PORT/…): the sandbox listens on loopback only; other private addresses refused';
  }
  return 'public addresses only; ALLOW_PRIVATE_CALLBACKS=true lets them reach this machine and private networks (tests only)';
}

export function printBanner(config: Config, url: string, credentials: SandboxCredentials | undefined, workers = 1): void {
  const lines = [
    `Partner API (${config.mode} mode) listening on ${url}`,
    `  docs:      ${url}/docs`,
    `  contract:  ${url}/openapi.json`,
    `  database:  ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`,
  ];
  if (workers > 1) lines.push(`  workers:   ${workers} processes sharing the port (node:cluster)`);
  lines.push(`  callbacks: ${callbackReach(config)}`);
  // A merchant's test loop meets the limit first (issue 57: said nowhere): where it stands, and what changes it.
  lines.push(`  rate limit: ${config.rateLimit.limit} requests per ${config.rateLimit.windowSeconds} s per API key (then 429 rate_limited; RATE_LIMIT=requests/seconds changes it)`);
  if (credentials) {
    lines.push(
      'Sandbox merchant (test credentials, never for real funds):',
      `  API key:          ${credentials.apiKey}`,
      `  API secret:       ${credentials.apiSecret}`,
      `  callback secret:  ${credentials.callbackSecret}`,
      `  shown to payers:  ${credentials.displayName === null ? '(no name)' : JSON.stringify(credentials.displayName)} on its payment pages (merchants set-display-name --api-key … changes it)`,
      'For a shell (the guide\'s examples read these):',
      `  export PARTNER_API_URL='${url}'`,
      `  export PARTNER_API_KEY='${credentials.apiKey}'`,
      `  export PARTNER_API_SECRET='${credentials.apiSecret}'`,
      `  export PARTNER_CALLBACK_SECRET='${credentials.callbackSecret}'`,
      'Deposit addresses come from the public "abandon … about" test wallet: UNSAFE for real funds.',
    );
  }
  lines.push(
    config.logLevel === 'warn'
      ? 'Logs: warnings and errors only (JSON on stdout); LOG_LEVEL=info adds a line per request.'
      : `Logs: level ${config.logLevel} (JSON on stdout).`,
    'Ready. SIGTERM or Ctrl+C stops it gracefully.',
  );
  process.stderr.write(lines.join('\n') + '\n');
}
