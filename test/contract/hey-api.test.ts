// An independent generator must be able to make a working client from our bundled contract: if
// @hey-api/openapi-ts cannot, or its output does not compile under strict TypeScript, partners using
// other toolchains would hit it first.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CONTRACT = join(ROOT, 'generated/openapi.json');
const TSC = join(ROOT, 'node_modules/.bin/tsc');
const OPERATIONS = ['createDepositOrder', 'getDepositOrder', 'getWithdrawal'] as const;

/** The project's own strictness (tsconfig.json), on ESM with Node's module resolution. */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    noEmit: true,
  },
  include: ['client/**/*.ts'],
};

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

function run(command: string, args: string[], cwd: string) {
  return new Promise<{ code: number; output: string }>((done) => {
    execFile(command, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, output: `${stdout}${stderr}${error && !stdout && !stderr ? String(error) : ''}` });
    });
  });
}

describe('@hey-api/openapi-ts makes a strict-TypeScript client from generated/openapi.json', () => {
  let dir: string;
  let clientDir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'partner-api-hey-api-'));
    clientDir = join(dir, 'client');
    // "type": "module" so that tsc checks the generated files as ES modules, not CommonJS.
    await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('generates the three operations and the result type-checks with tsc --strict', { timeout: 90_000 }, async () => {
    await createClient({
      input: CONTRACT,
      output: { path: clientDir, tsConfigPath: join(dir, 'tsconfig.json') },
      logs: { level: 'silent', file: false, path: dir },
    });

    const files = await filesUnder(clientDir);
    const sources = await Promise.all(files.filter((f) => f.endsWith('.ts')).map((f) => readFile(f, 'utf8')));
    const generated = sources.join('\n');
    for (const operation of OPERATIONS) {
      expect(generated, `no generated file names ${operation}`).toMatch(new RegExp(`\\bexport const ${operation}\\b`));
    }

    const { code, output } = await run(TSC, ['-p', join(dir, 'tsconfig.json'), '--noEmit', '--strict', '--pretty', 'false'], dir);
    if (code !== 0) {
      const listing = files.map((f) => relative(dir, f)).join('\n  ');
      console.error(`tsc exited ${code} on the generated client:\n${output}\nfiles:\n  ${listing}`);
    }
    expect(output.trim(), 'tsc output').toBe('');
    expect(code, 'tsc exit code').toBe(0);
  });
});
