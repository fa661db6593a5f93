// npm start builds only what changed (issue 24, item 1): scripts/build-changed.mjs runs a step when its
// inputs' hash differs from the one stamped by its last successful run, or its output is missing,
// and skips it otherwise. The figure (a second npm start listening within 3 s) is bench:start's.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script, without declarations
import { buildChanged, STEPS } from '../../scripts/build-changed.mjs';

type Step = { name: string; inputs: string[]; output: string; command: string[] };
const run = buildChanged as (root: string, steps: Step[]) => string[];

const root = mkdtempSync(join(tmpdir(), 'build-changed-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A step that counts its runs and writes its output, as a real build step would.
const step: Step = {
  name: 'count',
  inputs: ['src', 'config.json'],
  output: 'out/built.txt',
  command: [process.execPath, '-e', "const fs=require('fs');fs.mkdirSync('out',{recursive:true});fs.appendFileSync('out/runs','x');fs.writeFileSync('out/built.txt','ok')"],
};
const runs = () => readFileSync(join(root, 'out/runs'), 'utf8').length;

describe('scripts/build-changed.mjs', () => {
  it('builds the first time, skips when nothing changed, and builds again when an input changes', () => {
    mkdirSync(join(root, 'src/deep'), { recursive: true });
    writeFileSync(join(root, 'src/deep/a.ts'), 'export const a = 1;');
    writeFileSync(join(root, 'config.json'), '{}');
    expect(run(root, [step])).toEqual(['count']);
    expect(run(root, [step])).toEqual([]);
    expect(runs()).toBe(1);
    writeFileSync(join(root, 'src/deep/a.ts'), 'export const a = 2;');
    expect(run(root, [step])).toEqual(['count']);
    writeFileSync(join(root, 'src/deep/b.ts'), ''); // a new file is a change too
    expect(run(root, [step])).toEqual(['count']);
    expect(run(root, [step])).toEqual([]);
    expect(runs()).toBe(3);
  });

  it('builds again when the output is gone, and stamps nothing when the step fails', () => {
    rmSync(join(root, 'out/built.txt'));
    expect(run(root, [step])).toEqual(['count']);
    const failing: Step = { ...step, name: 'failing', command: [process.execPath, '-e', "console.log('tsc said no'); process.exit(2)"] };
    expect(() => run(root, [failing])).toThrow(/the failing build failed[\s\S]*tsc said no/);
    expect(() => run(root, [failing])).toThrow(/failing build failed/); // not stamped: tried again
  });

  it('npm start builds the platform and the docs from their sources', () => {
    expect((STEPS as Step[]).map((s) => [s.name, s.output])).toEqual([
      ['server', 'dist/server/cli.js'],
      ['docs', 'dist/docs/index.html'],
    ]);
    expect(JSON.parse(readFileSync('package.json', 'utf8')).scripts.start).toMatch(/^node scripts\/build-changed\.mjs && node bin\/partner-api\.js serve/);
  });
});
