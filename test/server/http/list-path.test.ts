// A list request's path (docs/design.md#a-list-requests-path): the files of src/server whose code runs
// while the platform answers one GET /partner/v1/platforms/orders, measured with V8's precise coverage
// (the functions called between two snapshots of their counts), are the files that section lists, and
// the list's own, from the route to the SQL and back, are at most 8.
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../../fixtures/orders.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SERVER = `file://${ROOT}/src/server/`;

/** The section's bullets, each with the src/server files it names. */
function documented(): { text: string; files: string[] }[] {
  const design = readFileSync(resolve(ROOT, 'docs/design.md'), 'utf8');
  const section = design.split(/^## /m).find((part) => part.startsWith("A list request's path\n"));
  if (!section) throw new Error("docs/design.md has no section \"A list request's path\"");
  return section
    .split(/^- /m)
    .slice(1)
    .map((text) => ({ text, files: [...text.matchAll(/`(src\/server\/[\w/-]+\.ts)`/g)].map((m) => m[1]!) }));
}

/** The files of src/server with a function called during `work`, from one snapshot of the counts to the next. */
async function filesRun(work: () => Promise<void>): Promise<string[]> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage'); // the counts start from here
    await work();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    return result
      .filter((script) => script.url.startsWith(SERVER))
      .filter((script) =>
        script.functions.some((f) => {
          const range = f.ranges[0]!;
          // Vitest's module transform reads an imported binding through a getter of its module (an anonymous
          // function of a few characters): a constant read, not code of the file run.
          return range.count > 0 && (f.functionName !== '' || range.endOffset - range.startOffset > 60);
        }),
      )
      .map((script) => `src/server/${script.url.slice(SERVER.length)}`)
      .filter((file) => !file.startsWith('src/server/addresses/')) // the pool's refill after the create may end meanwhile
      .sort();
  } finally {
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
  }
}

describe("a list request's path", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('pglite');
  });
  afterAll(() => t?.close());

  it('runs the code of the files docs/design.md lists, the list\'s own at most 8', async () => {
    await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('list-path-1') });
    const path = '/partner/v1/platforms/orders?limit=5';
    expect((await t.signed('GET', path)).status).toBe(200); // once before, so that what runs once per process has run
    const files = await filesRun(async () => {
      expect((await t.signed('GET', path)).status).toBe(200);
    });
    const bullets = documented();
    expect(files).toEqual(bullets.flatMap((bullet) => bullet.files).sort());
    const own = bullets.find((bullet) => bullet.text.startsWith("the list's own"));
    expect(own?.files.length).toBeLessThanOrEqual(8);
    expect(own?.text).toContain(`${own?.files.length} files`);
  });
});
