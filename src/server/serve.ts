// `partner-api serve`: opens the platform, listens, prints the banner (and the sandbox merchant's
// credentials in sandbox mode), starts the background workers, and stops gracefully on SIGTERM/SIGINT.
import cluster from 'node:cluster';
import { ConfigError, type Config } from './config.js';
import { openPlatform, type Platform } from './platform.js';

function banner(config: Config, url: string, credentials: { apiKey: string; apiSecret: string; callbackSecret: string } | undefined, workers = 1) {
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
  if (workers > 1) lines.push(`  workers:   ${workers} processes sharing the port (node:cluster)`);
  lines.push('Ready. SIGTERM or Ctrl+C stops it gracefully.');
  process.stdout.write(lines.join('\n') + '\n');
}

/** The sandbox merchant, created on the first start. */
async function sandboxCredentials(platform: Platform) {
  const merchant = (await platform.merchants.byName('sandbox')) ?? (await platform.merchants.byApiKey((await platform.merchants.create('sandbox')).apiKey));
  return platform.merchants.credentials(merchant!);
}

/**
 * Serves with `workers` processes. More than one needs PostgreSQL: the primary prepares the database
 * (migrations, the sandbox merchant), then node:cluster forks the workers, which share the port and
 * each run the whole platform; its background jobs stay one per job through their advisory locks.
 */
export async function serve(config: Config, workers = 1): Promise<void> {
  if (workers > 1 && !config.databaseUrl) {
    throw new ConfigError("--workers needs DATABASE_URL: the embedded database (PGlite) is one process's, so it serves with one worker");
  }
  if (workers > 1 && cluster.isPrimary) return superviseWorkers(config, workers);
  const platform = await openPlatform(config);
  const sandbox = config.mode === 'sandbox' ? await sandboxCredentials(platform) : undefined;
  const address = await platform.app.fastify.listen({ host: config.host, port: config.port });
  // A cluster worker is announced by its primary.
  if (cluster.isPrimary) banner(config, address.replace('[::1]', 'localhost'), sandbox);
  const log = platform.app.fastify.log;
  for (const [network, { chain }] of Object.entries(config.networks)) {
    if (chain) log.info({ network, rpc: new URL(chain.rpcUrl).origin, token: chain.tokenContract }, 'scanning deposits');
    else if (config.mode === 'live') log.warn({ network }, `no ${network.toUpperCase()}_RPC_URL: deposits on ${network} are not scanned`);
  }
  if (config.mode === 'live' && !config.publicUrl) log.warn('PUBLIC_URL is not set: payment links point at the listen address, which payers may not reach');
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

async function superviseWorkers(config: Config, count: number): Promise<void> {
  const platform = await openPlatform(config, { logger: false });
  let sandbox;
  try {
    sandbox = config.mode === 'sandbox' ? await sandboxCredentials(platform) : undefined;
  } finally {
    await platform.close();
  }
  let stopping = false;
  let ready = false;
  const listening = new Promise<{ address: string; port: number; addressType: number | string }>((resolve, reject) => {
    let started = 0;
    cluster.on('listening', (_worker, address) => {
      if (++started === count) resolve(address);
    });
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return;
      if (!ready) {
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
        return reject(new Error(`worker ${worker.id} exited (${signal ?? `code ${code}`}) before the platform was ready; its error is above`));
      }
      // A worker that dies while serving is replaced; its requests in flight were lost with it.
      process.stderr.write(`partner-api: worker ${worker.id} exited (${signal ?? `code ${code}`}); starting another\n`);
      cluster.fork();
    });
  });
  for (let i = 0; i < count; i++) cluster.fork();
  const address = await listening;
  ready = true;
  const host = address.addressType === 6 ? `[${address.address}]` : address.address;
  banner(config, `http://${host}:${address.port}`.replace('[::1]', 'localhost'), sandbox, count);

  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    let left = workers.length;
    if (left === 0) process.exit(0);
    for (const worker of workers) {
      worker.once('exit', () => --left === 0 && process.exit(0));
      worker.process.kill('SIGTERM');
    }
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
