// npm start and npm test build only what changed (issue 24, item 1; issue 22, item 4):
// scripts/build-changed.mjs runs a step when its inputs' hash differs from the one stamped by its last
// successful run, or its output is missing, and skips it otherwise. The figure (a second npm start
// listening within 3 s) is bench:start's.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script, without declarations
import { buildChanged, CLIENT_STEP, STEPS, stepLines } from '../../scripts/build-changed.mjs';

type Step = { name: string; inputs: string[]; output: string; command: string[]; after?: string[] };
type Report = { started(step: Step): void; finished(step: Step, seconds: number): void };
const run = buildChanged as (root: string, steps: Step[], stampDir?: string, report?: Report) => Promise<string[]>;
const lines = stepLines as (write: (line: string) => void) => Report;

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
  it('builds the first time, skips when nothing changed, and builds again when an input changes', async () => {
    mkdirSync(join(root, 'src/deep'), { recursive: true });
    writeFileSync(join(root, 'src/deep/a.ts'), 'export const a = 1;');
    writeFileSync(join(root, 'config.json'), '{}');
    expect(await run(root, [step])).toEqual(['count']);
    expect(await run(root, [step])).toEqual([]);
    expect(runs()).toBe(1);
    writeFileSync(join(root, 'src/deep/a.ts'), 'export const a = 2;');
    expect(await run(root, [step])).toEqual(['count']);
    writeFileSync(join(root, 'src/deep/b.ts'), ''); // a new file is a change too
    expect(await run(root, [step])).toEqual(['count']);
    expect(await run(root, [step])).toEqual([]);
    expect(runs()).toBe(3);
  });

  it('builds again when the output is gone or another build rewrote it, and stamps nothing when the step fails', async () => {
    rmSync(join(root, 'out/built.txt'));
    expect(await run(root, [step])).toEqual(['count']);
    const later = new Date(Date.now() + 5000);
    utimesSync(join(root, 'out/built.txt'), later, later); // as npm run build would leave it, from other sources
    expect(await run(root, [step])).toEqual(['count']);
    expect(await run(root, [step])).toEqual([]);
    const failing: Step = { ...step, name: 'failing', command: [process.execPath, '-e', "console.log('tsc said no'); process.exit(2)"] };
    await expect(run(root, [failing])).rejects.toThrow(/the failing build failed[\s\S]*tsc said no/);
    await expect(run(root, [failing])).rejects.toThrow(/failing build failed/); // not stamped: tried again
  });

  it('runs the stale steps side by side, builds those that work and names every one that failed', async () => {
    // Each step waits (up to 20 s) for the other to have started: one after the other, the first fails.
    const meeting = (name: string, other: string) =>
      `const fs=require('fs');fs.mkdirSync('out',{recursive:true});fs.writeFileSync('out/${name}.started','');` +
      `const until=Date.now()+20000;(function wait(){if(fs.existsSync('out/${other}.started'))return fs.writeFileSync('out/${name}','ok');` +
      `if(Date.now()>until){console.log('${other} never started');process.exit(1)}setTimeout(wait,20)})()`;
    const slow = (name: string, other = name): Step => ({ name, inputs: ['config.json'], output: `out/${name}`, command: [process.execPath, '-e', meeting(name, other)] });
    writeFileSync(join(root, 'config.json'), '{"side":"by side"}');
    expect((await run(root, [slow('one', 'two'), slow('two', 'one')])).sort()).toEqual(['one', 'two']);
    const failing = (name: string): Step => ({ ...slow(name), command: [process.execPath, '-e', `console.log('${name} said no'); process.exit(1)`] });
    writeFileSync(join(root, 'config.json'), '{"side":"again"}');
    const failed = run(root, [failing('three'), slow('one'), failing('four')]);
    await expect(failed).rejects.toThrow(/three said no[\s\S]*four said no/);
    expect(await run(root, [slow('one')])).toEqual([]); // the one that worked was stamped
  });

  it('runs a step with `after` once those steps are built, and not at all when one of them failed', async () => {
    // The first step writes its output after a pause; the second copies it, so it must start after.
    const first: Step = { name: 'first', inputs: ['config.json'], output: 'out/first', command: [process.execPath, '-e', "setTimeout(()=>{require('fs').mkdirSync('out',{recursive:true});require('fs').writeFileSync('out/first','1')},300)"] };
    const second: Step = { name: 'second', inputs: ['config.json'], output: 'out/second', command: [process.execPath, '-e', "require('fs').copyFileSync('out/first','out/second')"], after: ['first'] };
    writeFileSync(join(root, 'config.json'), '{"after":1}');
    expect(await run(root, [second, first])).toEqual(['second', 'first']);
    expect(readFileSync(join(root, 'out/second'), 'utf8')).toBe('1');
    writeFileSync(join(root, 'config.json'), '{"after":2}');
    const broken: Step = { ...first, command: [process.execPath, '-e', 'process.exit(1)'] };
    await expect(run(root, [broken, second])).rejects.toThrow(/the second build did not run: first failed/);
  });

  it('says which step it builds as the step starts, and its time as it ends (issue 49: no silent first start)', async () => {
    const said: string[] = [];
    const report = lines((line) => said.push(line));
    // A step of about 300 ms.
    const checking: Step = {
      name: 'told',
      inputs: ['config.json'],
      output: 'out/told',
      command: [process.execPath, '-e', "setTimeout(()=>{require('fs').mkdirSync('out',{recursive:true});require('fs').writeFileSync('out/told','1')},300)"],
    };
    const described = { ...checking, what: 'the told thing (out/told)' };
    writeFileSync(join(root, 'config.json'), '{"told":1}');
    const running = run(root, [described], undefined, report);
    await expect.poll(() => said, { interval: 20 }).toEqual(['building the told thing (out/told)...\n']);
    expect(existsSync(join(root, 'out/told'))).toBe(false); // said as it started, before it ended
    await running;
    expect(said[1]).toMatch(/^built the told thing \(out\/told\) in (0\.[3-9]|[1-9]\d*\.\d) s\n$/);
    expect(await run(root, [described], undefined, report)).toEqual([]);
    expect(said).toHaveLength(2); // nothing to build, nothing said
    // Every step of npm start says what it builds.
    expect((STEPS as (Step & { what?: string })[]).map((s) => s.what)).toEqual(['the platform (dist/server)', 'the client package (dist/client)', 'the docs site (dist/docs)']);
  });

  it('npm start builds the platform, the client package and the docs (which carry the client) from their sources, as npm test does', () => {
    expect((STEPS as Step[]).map((s) => [s.name, s.output, s.after])).toEqual([
      ['server', 'dist/server/cli.js', undefined],
      ['client', 'dist/client/package.json', undefined],
      ['docs', 'dist/docs/index.html', ['client']],
    ]);
    expect((STEPS as Step[])[1]).toBe(CLIENT_STEP);
    for (const input of (CLIENT_STEP as Step).inputs) expect((STEPS as Step[])[2]!.inputs).toContain(input);
    expect(readFileSync('test/support/global-setup.ts', 'utf8')).toContain('build(ROOT, STEPS)');
    expect(JSON.parse(readFileSync('package.json', 'utf8')).scripts.start).toMatch(/^node scripts\/build-changed\.mjs && node bin\/partner-api\.js serve/);
    expect(JSON.parse(readFileSync('package.json', 'utf8')).scripts.docs).toMatch(/&& node scripts\/pack-client\.mjs$/);
  });
});
