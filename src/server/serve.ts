// `partner-api serve`: opens the platform, listens, prints the banner (and the sandbox merchant's
// credentials in sandbox mode), starts the background workers, and stops gracefully on SIGTERM/SIGINT.
import type { Config } from './config.js';
import { openPlatform } from './platform.js';

function banner(config: Config, url: string, credentials: { apiKey: string; apiSecret: string; callbackSecret: string } | undefined) {
  const lines = [
    `Partner API (${config.mode} mode) listening on ${url}`,
    `  docs:      ${url}/docs`,
    `  contract:  ${url}/openapi.json`,
    `  database:  ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`,
  ];
  if (credentials) {
    lines.push(
      'Sandbox merchant (test credentials, never for real funds):',
      `  API key:          ${credentials.apiKey}`,
      `  API secret:       ${credentials.apiSecret}`,
      `  callback secret:  ${credentials.callbackSecret}`,
      'Deposit addresses come from the public "abandon … about" test wallet: UNSAFE for real funds.',
    );
  }
  lines.push('Ready. SIGTERM or Ctrl+C stops it gracefully.');
  process.stdout.write(lines.join('\n') + '\n');
}

export async function serve(config: Config): Promise<void> {
  const platform = await openPlatform(config);
  let sandbox;
  if (config.mode === 'sandbox') {
    const merchant = (await platform.merchants.byName('sandbox')) ?? (await platform.merchants.byApiKey((await platform.merchants.create('sandbox')).apiKey));
    sandbox = platform.merchants.credentials(merchant!);
  }
  const address = await platform.app.fastify.listen({ host: config.host, port: config.port });
  banner(config, address.replace('[::1]', 'localhost'), sandbox);
  const log = platform.app.fastify.log;
  for (const [network, { chain }] of Object.entries(config.networks)) {
    if (chain) log.info({ network, rpc: new URL(chain.rpcUrl).origin, token: chain.tokenContract }, 'scanning deposits');
    else if (config.mode === 'live') log.warn({ network }, `no ${network.toUpperCase()}_RPC_URL: deposits on ${network} are not scanned`);
  }
  if (config.mode === 'live' && config.callbacks.allowPrivate) log.warn('ALLOW_PRIVATE_CALLBACKS is on: callbacks may reach private and loopback addresses (tests only)');
  try {
    await platform.startWorkers();
  } catch (error) {
    await platform.close();
    throw error;
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    platform.app.fastify.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await platform.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
