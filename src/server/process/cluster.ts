// `serve --workers N` on PostgreSQL: the primary prepares the database (migrations, the sandbox
// merchant), then node:cluster forks the workers, which share the port and each run the whole
// platform (./serve.ts); its background jobs stay one per job through their leases (../jobs/lease.ts). A worker
// that dies while serving is replaced.
import cluster from 'node:cluster';
import type { Config } from '../config.js';
import { openPlatform } from '../platform.js';
import { printBanner, sandboxCredentials } from './banner.js';

export async function superviseWorkers(config: Config, count: number): Promise<void> {
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
        return reject(new WorkerStartError(`worker ${worker.id} exited (${signal ?? `code ${code}`}) before the platform was ready; its error is above`, code));
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
  printBanner(config, `http://${host}:${address.port}`.replace('[::1]', 'localhost'), sandbox, count);

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

/** A worker failed at start and said why on stderr; the primary exits with the worker's code. */
export class WorkerStartError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
  ) {
    super(message);
  }
}
