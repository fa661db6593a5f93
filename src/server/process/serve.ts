// `partner-api serve`: opens the platform, listens, starts the background jobs (../jobs/) and the
// operator socket, prints the banner (./banner.ts), and stops gracefully on SIGTERM/SIGINT. With
// --workers N it hands over to the cluster's primary (./cluster.ts), and each worker process runs this.
import cluster from 'node:cluster';
import { createServer } from 'node:net';
import { ConfigError, type Config } from '../config.js';
import { openPlatform, type Platform } from '../platform.js';
import { serveOperatorCommands, type CommandOutput } from './operator-socket.js';
import { printBanner, sandboxCredentials } from './banner.js';
import { superviseWorkers } from './cluster.js';
import { checkHotWalletFiles } from '../jobs/jobs.js';

/** The port is taken by another process: exit 69 (service unavailable). */
export class PortInUseError extends Error {}

/** What an operator's command reads and writes when the running platform runs it (the CLI's Io has these). */
export interface CommandIo {
  env: Record<string, string | undefined>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  platform: Platform;
}

/** How serve runs an operator's command line (the CLI's runCli), with the running platform in its io. */
export type CommandRunner = (argv: string[], io: CommandIo) => Promise<number>;

export async function serve(config: Config, workers = 1, runCommand?: CommandRunner): Promise<void> {
  if (workers > 1 && !config.databaseUrl) {
    throw new ConfigError("--workers needs DATABASE_URL: the embedded database (PGlite) is one process's, so it serves with one worker");
  }
  // Before anything is made or opened (a data directory, a database, a pool of addresses): a hot
  // wallet's key file others may read, a taken port or a foreign host is refused at once. A cluster's
  // workers share the primary's checked port.
  await checkHotWalletFiles(config);
  if (cluster.isPrimary) await probeListen(config);
  if (workers > 1 && cluster.isPrimary) return superviseWorkers(config, workers);
  const platform = await openPlatform(config, { longLived: true });
  let address: string;
  let sandbox: Awaited<ReturnType<typeof sandboxCredentials>> | undefined;
  try {
    sandbox = config.mode === 'sandbox' ? await sandboxCredentials(platform) : undefined;
    address = await platform.app.fastify.listen({ host: config.host, port: config.port }).catch((error: unknown) => {
      throw listenRefusal(error, config);
    });
  } catch (error) {
    await platform.close();
    throw error;
  }
  const log = platform.app.fastify.log;
  for (const [network, { chain }] of Object.entries(platform.config.networks)) {
    if (chain) log.info({ network, rpc: new URL(chain.rpcUrl).origin, token: chain.tokenContract }, 'scanning deposits');
    else if (config.mode === 'live') log.warn({ network }, `no ${network.toUpperCase()}_RPC_URL: deposits on ${network} are not scanned`);
  }
  if (config.mode === 'live' && platform.config.callbacks.allowPrivate) log.warn('ALLOW_PRIVATE_CALLBACKS is on: callbacks may reach private and loopback addresses (tests only)');
  try {
    await platform.startJobs();
  } catch (error) {
    await platform.close();
    throw error;
  }

  // On the embedded database no other process may open it: operators' commands come to this one.
  const operatorSocket = !config.databaseUrl && runCommand ? await serveOperatorCommands(config.dataDir, (argv) => runFor(platform, runCommand, argv)) : undefined;
  // "Ready." once everything is: the jobs run and an operator's command finds the socket. A cluster
  // worker is announced by its primary.
  if (cluster.isPrimary) printBanner(config, address.replace('[::1]', 'localhost'), sandbox);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    platform.app.fastify.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await operatorSocket?.close();
    await platform.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** An operator's command line run by this platform, with what it printed. */
async function runFor(platform: Platform, runCommand: CommandRunner, argv: string[]): Promise<CommandOutput> {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = { env: process.env, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, platform };
  const code = await runCommand(argv, io);
  // The command's words only: its flags' values may be keys or names.
  const words = argv.slice(0, Math.max(0, argv.findIndex((a) => a.startsWith('-'))) || argv.length);
  platform.app.fastify.log.info({ command: words.join(' '), code }, 'ran an operator command');
  return { code, stdout, stderr };
}

/** Listens on the configured address and closes again: the operating system's refusal, if any, as listenRefusal. */
async function probeListen(config: Config): Promise<void> {
  if (config.port === 0) return; // any free port: nothing to refuse
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error) => reject(listenRefusal(error, config)));
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The operating system's refusal to listen, as one line naming the setting, its value and the cause. */
function listenRefusal(error: unknown, config: Config): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return new PortInUseError(`PORT ${config.port} is in use on ${config.host} by another process (EADDRINUSE): stop it, or choose another --port`);
  if (code === 'EACCES') return new ConfigError(`PORT ${config.port}: this user may not listen on ${where} (EACCES): ports below 1024 need root or CAP_NET_BIND_SERVICE; choose --port 1024 or above`);
  if (code === 'EADDRNOTAVAIL') return new ConfigError(`HOST ${config.host} is not an address of this machine (EADDRNOTAVAIL): choose one of its addresses, 127.0.0.1 or 0.0.0.0`);
  return error;
}
