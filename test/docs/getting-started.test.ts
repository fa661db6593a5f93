// One set of names from `npm start` to the docs (issue 21): the banner of `partner-api serve` prints
// `export` lines, and the guide's Getting started runs verbatim in a shell that pasted them; every
// sample, the guide and the client's README read the credentials by those same names.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, guideSection } from '../support/guide.js';
import { removeAll, ROOT } from '../support/packages.js';
import { startPartnerApi, type RunningPartnerApi } from '../support/partner-api.js';
import { copiedDataDirectory } from '../support/database-templates.js';

const NAMES = ['PARTNER_API_URL', 'PARTNER_API_KEY', 'PARTNER_API_SECRET', 'PARTNER_CALLBACK_SECRET'];
const [environmentBlock, firstCallBlock] = codeBlocks(guideSection('# Getting started')).filter((b) => b.lang === 'sh');

let dataDir: string;
let server: RunningPartnerApi;
let exportLines: string[];

beforeAll(async () => {
  dataDir = copiedDataDirectory('partner-getting-started-');
  server = await startPartnerApi({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  exportLines = server.process.output().split('\n').filter((line) => /^\s*export /.test(line)).map((line) => line.trim());
});

afterAll(async () => {
  await server?.stop();
  removeAll(dataDir);
});

/** The names of `export NAME=` lines. */
const exported = (lines: string[]) => lines.map((line) => /^export (\w+)=/.exec(line)?.[1]);

/** Every environment variable a piece of text reads: $NAME in shell, process.env.NAME, os.environ["NAME"]. */
function variablesRead(text: string): string[] {
  const patterns = [/\$\{?([A-Z][A-Z0-9_]*)/g, /process\.env\.([A-Z][A-Z0-9_]*)/g, /os\.environ\["([A-Z][A-Z0-9_]*)"\]/g];
  return [...new Set(patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1]!)))];
}

describe("npm start's banner and the guide's Getting started", () => {
  it('prints export lines of the four names the guide shows, with the sandbox credentials', () => {
    expect(exported(exportLines)).toEqual(NAMES);
    expect(exported(environmentBlock!.code.trim().split('\n'))).toEqual(NAMES);
    expect(exportLines).toEqual([
      `export PARTNER_API_URL='${server.baseUrl}'`,
      `export PARTNER_API_KEY='${server.sandbox!.apiKey}'`,
      `export PARTNER_API_SECRET='${server.sandbox!.apiSecret}'`,
      `export PARTNER_CALLBACK_SECRET='${server.sandbox!.callbackSecret}'`,
    ]);
  });

  it('runs the first call verbatim in a shell where the banner was pasted: a signed order', async () => {
    const script = [...exportLines, firstCallBlock!.code].join('\n');
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { env: { PATH: process.env.PATH } });
    expect(JSON.parse(stdout)).toMatchObject({ blockchain: 'Tron', customerId: 'cust-42', status: 'NEW' });
  });

  it('reads the credentials by those names everywhere: guide, samples, client README', () => {
    const sources = [
      ...readdirSync(join(ROOT, 'openapi/guide')).map((name) => `openapi/guide/${name}`),
      ...readdirSync(join(ROOT, 'openapi/code-samples')).map((name) => `openapi/code-samples/${name}`),
      'src/client/README.md',
    ];
    const credentialNames = new Set<string>();
    for (const source of sources) {
      for (const name of variablesRead(readFileSync(join(ROOT, source), 'utf8'))) {
        if (/(URL|KEY|SECRET)$/.test(name)) credentialNames.add(`${source}: ${name}`);
      }
    }
    const others = [...credentialNames].filter((entry) => !NAMES.includes(entry.split(': ')[1]!));
    expect(others).toEqual([]);
    // The names are used, not only allowed: every sample reads the three request credentials.
    for (const name of readdirSync(join(ROOT, 'openapi/code-samples'))) {
      const read = variablesRead(readFileSync(join(ROOT, 'openapi/code-samples', name), 'utf8'));
      expect(read, name).toEqual(expect.arrayContaining(NAMES.slice(0, 3)));
    }
  });
});
