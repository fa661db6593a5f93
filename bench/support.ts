// What the benchmarks share: the sandbox configuration, a PostgreSQL to run on, and the writer that
// puts each benchmark's results in bench/results/<name>.json and its tables in bench/README.md, so that
// no figure there is typed by hand.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Sql } from '../src/server/db/database.js';
import { readConfig, SANDBOX_XPUBS, type Config } from '../src/server/config.js';

export { SANDBOX_XPUBS };

/** Builds what changed since the last build (npm start's scripts/build-changed.mjs): the processes a benchmark starts run the current build, never the sources through tsx. */
export function buildWhatChanged(): void {
  execFileSync(process.execPath, ['scripts/build-changed.mjs'], { stdio: 'inherit' });
}

/** The sandbox defaults, for benchmarks that use the services in-process. */
export function testableConfig(): Config {
  return readConfig({ SECRET_KEY: Buffer.alloc(32, 7).toString('base64'), DATA_DIR: '/nonexistent' });
}

export interface Postgres {
  url: string;
  /** Where the cluster came from, for the environment line. */
  origin: string;
  stop: () => void;
}

/**
 * BENCH_DATABASE_URL or TEST_DATABASE_URL (benchmarks make throwaway databases on it and never touch
 * the given one), else a throwaway cluster on `port` (scripts/postgres-cluster.sh), else undefined.
 */
export function startPostgres(port: number): Postgres | undefined {
  const existing = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (existing) return { url: existing, origin: process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'TEST_DATABASE_URL', stop: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'partner-bench-pg.'));
  try {
    const url = execFileSync('bash', ['scripts/postgres-cluster.sh', 'start', dir, String(port)], { encoding: 'utf8' }).trim();
    return { url, origin: 'throwaway cluster, fsync off', stop: () => execFileSync('bash', ['scripts/postgres-cluster.sh', 'stop', dir]) };
  } catch (error) {
    console.warn(`PostgreSQL could not be started (${(error as Error).message.split('\n')[0]}): its rows are left out`);
    return undefined;
  }
}

/** The machine, runtime and date a table was measured on: written above every table. */
export function environmentLine(): string {
  const cpu = cpus();
  const gib = Math.round(totalmem() / 2 ** 30);
  return `${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${gib} GiB, Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}`;
}

const README = new URL('./README.md', import.meta.url);
const RESULTS = new URL('./results/', import.meta.url);

/**
 * Prints a benchmark's markdown, writes bench/results/<name>.json, and replaces bench/README.md's text
 * between `<!-- bench:<name> -->` and `<!-- /bench:<name> -->` with the markdown under an
 * environment line. BENCH_NO_WRITE=1 only prints (a trial run).
 */
export function publishResults(name: string, markdown: string, data: unknown): void {
  const text = `_Measured on ${environmentLine()}._\n\n${markdown.trim()}\n`;
  console.log(`\n${text}`);
  if (process.env.BENCH_NO_WRITE === '1') return;
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(new URL(`${name}.json`, RESULTS), JSON.stringify({ environment: environmentLine(), results: data }, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value), 2) + '\n');
  const readme = readFileSync(README, 'utf8');
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) throw new Error(`bench/README.md has no ${start} … ${end} section for these results`);
  writeFileSync(README, `${readme.slice(0, from + start.length)}\n${text}${readme.slice(to)}`);
  console.log(`written: bench/results/${name}.json and bench/README.md (${start})`);
}

/** Requests a second and latency percentiles (ms) of a loop. */
export interface LoopFigures {
  rps: number;
  p50: number;
  p99: number;
}

/**
 * `connections` concurrent loops of one statement for `seconds`, without HTTP around it: the database's
 * own cost. `bytes`: the columns read as bytes, as the platform reads them (Sql.queryBytes).
 */
export async function statementLoop(db: Sql, connections: number, seconds: number, statement: (i: number) => [string, unknown[]], bytes: readonly string[] = []): Promise<LoopFigures> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  let i = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        const [text, params] = statement(i++);
        (await db.queryBytes(text, params, bytes)).release();
        latencies.push(performance.now() - start);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / seconds, p50: latencies[Math.floor(latencies.length * 0.5)]!, p99: latencies[Math.floor(latencies.length * 0.99)]! };
}
