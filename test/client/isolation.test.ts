// The client must be publishable on its own: it imports nothing of the server and, at run time,
// nothing but openapi-fetch and the runtime's own crypto.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
}

/** Every file reachable from src/client/index.ts, following relative imports. */
function closure(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  for (const spec of importsOf(entry)) {
    if (spec.startsWith('.')) closure(resolve(dirname(entry), spec.replace(/\.js$/, '.ts').replace(/schema\.ts$/, 'schema.d.ts')), seen);
  }
  return seen;
}

describe('the client stands alone', () => {
  const files = [...closure(join(root, 'src/client/index.ts'))].map((f) => relative(root, f));

  it('reaches only src/client, src/signing and generated types', () => {
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) expect(file).toMatch(/^(src\/client|src\/signing|generated)\//);
  });

  it('imports no package but openapi-fetch', () => {
    const packages = files.flatMap((f) => importsOf(join(root, f))).filter((s) => !s.startsWith('.'));
    expect(new Set(packages)).toEqual(new Set(['openapi-fetch']));
  });

  it('has no file under src/client that imports the server', () => {
    for (const file of readdirSync(join(root, 'src/client'))) {
      expect(importsOf(join(root, 'src/client', file)).some((s) => s.includes('server'))).toBe(false);
    }
  });
});
