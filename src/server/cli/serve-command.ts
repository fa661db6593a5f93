// `partner-api serve`: the platform itself (process/serve.ts); never run by a running platform.
import { UsageError } from './errors.js';
import type { Flags } from './flags.js';
import type { Command } from './command.js';

function workerCount(flags: Flags): number {
  if (flags.workers === undefined) return 1;
  const count = Number(flags.workers);
  if (typeof flags.workers !== 'string' || !/^\d+$/.test(flags.workers) || count < 1 || count > 64) throw new UsageError('--workers must be a whole number from 1 to 64');
  return count;
}


export const SERVE_COMMANDS: Command[] = [
  {
    words: ['serve'],
    summary: 'runs the platform: the HTTP API, the docs, and the deposit scanners, callback dispatcher and expiry job',
    flags: { workers: { value: 'N', description: 'processes serving the port, 1 to 64 (default 1); more than 1 needs DATABASE_URL' } },
    example: 'partner-api serve --mode sandbox --port 8080',
    runByRunningPlatform: false,
    async run(flags, config, io) {
      const workers = workerCount(flags);
      const { serve } = await import('../process/serve.js');
      await serve(config, workers, io.runCommand);
    },
  },
];
