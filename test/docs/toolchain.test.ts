// docs/toolchain.md's table of versions names why a package is held at a version: each row must be the
// version package.json pins, so that the reason is read beside the version installed.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

it("names each package of docs/toolchain.md's table at the version package.json pins", () => {
  const manifest = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const pinned = { ...manifest.dependencies, ...manifest.devDependencies };
  const text = readFileSync(resolve(ROOT, 'docs/toolchain.md'), 'utf8');
  const rows = [...text.matchAll(/^\| `([^`]+)` \| ([^ |]+) \|/gm)].map(([, name, version]) => ({ name, version }));
  expect(rows.length).toBeGreaterThanOrEqual(10);
  expect(rows).toEqual(rows.map(({ name }) => ({ name, version: pinned[name!] })));
});
