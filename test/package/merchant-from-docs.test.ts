// From the published docs to a passing contract test, with nothing but the docs (issues 21 and 36): a
// real platform serves the docs and the client package beside them (dist/docs, as `npm run build` made
// it), and in an empty project the guide's "Testing your integration" section is executed verbatim: its
// install commands (the client from the platform's URL, Prism from npm's own registry: no private registry
// in between), its files, then Prism on the shipped contract and the merchant's node:test file against it,
// every callback the mock fires staying on loopback. CI runs this on Node 20 and 24.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, guideSection, type CodeBlock } from '../support/guide.js';
import { plainEnv, removeAll, ROOT } from '../support/packages.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { freePort } from '../support/processes.js';

const contract = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8'));
const section = guideSection('# Testing your integration');
const blocks = codeBlocks(section);
const shellBlocks = blocks.filter((b) => b.lang === 'sh');
/** The files the guide has the merchant write: each JavaScript block names its path on its first line. */
const files = blocks.filter((b) => b.lang === 'js').map((b: CodeBlock) => ({ path: /^\/\/ (\S+)\n/.exec(b.code)?.[1], code: b.code }));
const INSTALL = 'npm install "$PARTNER_API_URL/partner-api-client.tgz"';

let platform: TestPlatform;
let project: string;

/**
 * The merchant's shell: PARTNER_API_URL is the platform whose docs they read (Getting started), npm has
 * its default registry (no user config), and nothing of this repository is in reach.
 */
function merchantEnv(extra: Record<string, string> = {}) {
  return plainEnv({ PARTNER_API_URL: platform.baseUrl, npm_config_prefer_offline: 'true', npm_config_userconfig: join(project, '.no-user-npmrc'), ...extra });
}

/** The URLs Prism logged a callback to (`Executing "post" callback to <url>...`). */
const callbackTargets = (output: string) => [...output.matchAll(/callback to (\S+?)\.\.\./g)].map((m) => m[1]!);

/** Runs a guide block with bash in the project, in its own process group, killed whole when it ends. */
function runBlock(code: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', code], { cwd: project, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    // Anything the block left running holds its output open: kill the group once bash has exited.
    child.once('exit', () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is already gone: the block stopped everything it started
      }
    });
    child.once('close', (code) => resolve({ code, output }));
  });
}

beforeAll(async () => {
  platform = await startTestPlatform('pglite');
  project = mkdtempSync(join(tmpdir(), 'partner-merchant-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'merchant-service', version: '1.0.0', private: true }, null, 2));
}, 120_000);

afterAll(async () => {
  await platform?.close();
  removeAll(project);
});

describe("the guide, executed verbatim in an empty project, the client installed from the platform's docs", () => {
  it('has install commands, the two files of the merchant and the command that runs the mock and the tests', () => {
    expect(shellBlocks).toHaveLength(2);
    expect(shellBlocks[0]!.code.split('\n')[0]).toBe(INSTALL);
    // The same install command as Getting started, the client's README and every TypeScript sample.
    expect(guideSection('# Getting started')).toContain(`\`\`\`sh\n${INSTALL}\n\`\`\``);
    expect(readFileSync(join(ROOT, 'src/client/README.md'), 'utf8')).toContain(`\`\`\`sh\n${INSTALL}\n\`\`\``);
    expect(files.map((f) => f.path)).toEqual(['callbacks.mjs', 'test/partner-api.test.mjs']);
    expect(shellBlocks[1]!.code).toContain('node_modules/.bin/prism mock node_modules/partner-api-client/openapi.json');
    // The client's README gives the same Prism install and command (on the default port).
    const readme = readFileSync(join(ROOT, 'src/client/README.md'), 'utf8');
    expect(readme).toContain(shellBlocks[0]!.code.split('\n')[1]);
    const prismLine = shellBlocks[1]!.code.split('\n').find((line) => line.includes('prism mock'))!;
    expect(readme).toContain(prismLine.replace('"$MOCK_PORT"', '4010').replace(/ &$/, ''));
  });

  it("creates its orders with a callbackUrl on loopback, the test's own receiver, and says why", () => {
    const testFile = files[1]!.code;
    const newOrder = /const NEW_ORDER = \{[\s\S]*?callbackUrl: `([^`]+)` \};/.exec(testFile);
    expect(newOrder, 'NEW_ORDER with a template callbackUrl').not.toBeNull();
    expect(new URL(newOrder![1]!.replace('${receiver.address().port}', '4011')).hostname).toBe('127.0.0.1');
    expect(testFile).toContain("receiver.listen(0, '127.0.0.1')");
    expect(section).toContain('the mock sends nothing off your machine');
    // No other URL in the merchant's files: nothing names a host off the machine.
    for (const file of files) expect(file.code.match(/https?:\/\/(?!127\.0\.0\.1)[^\s'"`]+/g), file.path).toBeNull();
  });

  it('names an example for each order status and every error the merchant operations declare', () => {
    const testFile = files[1]!.code;
    const orderExamples = contract.paths['/partner/v2/platforms/orders/{uuid}'].get.responses['200'].content['application/json'].examples;
    const statusOf = (name: string) => contract.components.examples[orderExamples[name].$ref.split('/').pop()].value;
    expect(statusOf('new')).toMatchObject({ status: 'NEW', receivedAmount: 0 });
    expect(statusOf('partial')).toMatchObject({ status: 'NEW' });
    expect(statusOf('partial').receivedAmount).toBeGreaterThan(0);
    expect(statusOf('partial').receivedAmount).toBeLessThan(statusOf('partial').minAmount);
    expect(statusOf('done')).toMatchObject({ status: 'DONE' });
    expect(statusOf('expired')).toMatchObject({ status: 'EXPIRED' });
    expect(testFile).toContain("for (const example of ['new', 'partial', 'done', 'expired'])");

    // Every named error example of every operation outside the Sandbox tag, as [status, name].
    const declared = new Set<string>();
    for (const operations of Object.values(contract.paths) as Record<string, { tags: string[]; responses: Record<string, unknown> }>[]) {
      for (const operation of Object.values(operations)) {
        if (operation.tags.includes('Sandbox')) continue;
        for (const [status, response] of Object.entries(operation.responses)) {
          if (status.startsWith('2')) continue;
          const ref = (response as { $ref: string }).$ref.split('/').pop()!;
          const examples = contract.components.responses[ref].content['application/problem+json'].examples as Record<string, { value: { status: number } }>;
          for (const [name, example] of Object.entries(examples)) declared.add(`${example.value.status} ${name}`);
        }
      }
    }
    const tested = new Set([...testFile.matchAll(/\[(?:createOrder|readOrder|listOrders|readEvents|redeliver|createWithdrawal|readTerms), (\d+), '(\w+)'(?:, '\w+')?\]/g)].map((m) => `${m[1]} ${m[2]}`));
    expect([...declared].sort()).toEqual([...tested].sort());
    expect(declared.size).toBe(23);
  });

  it("installs the client with the docs' command from the platform, and Prism from npm's registry as the guide pins it", async () => {
    const installed = await runBlock(shellBlocks[0]!.code, merchantEnv());
    expect(installed.code, installed.output).toBe(0);
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/partner-api-client/package.json'), 'utf8'));
    expect(manifest.version).toBe(contract.info.version);
    const tarballUrl = `${platform.baseUrl}/partner-api-client.tgz`;
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/partner-api-client'].resolved).toBe(tarballUrl);
    // Everything else from npm's own registry: no private registry in between.
    expect(lock.packages['node_modules/openapi-fetch'].resolved).toMatch(/^https:\/\/registry\.npmjs\.org\/openapi-fetch\//);
    const merchantManifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(merchantManifest.dependencies).toEqual({ 'partner-api-client': tarballUrl });
    expect(merchantManifest.devDependencies).toEqual({ '@stoplight/prism-cli': '5.14.2' });
    expect(readFileSync(join(project, 'node_modules/partner-api-client/openapi.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8'));
  }, 300_000);

  it("runs the mock on the shipped contract and the merchant's node:test file passes against it", async () => {
    for (const file of files) {
      mkdirSync(dirname(join(project, file.path!)), { recursive: true });
      writeFileSync(join(project, file.path!), file.code);
    }
    const ran = await runBlock(shellBlocks[1]!.code, merchantEnv({ MOCK_PORT: String(await freePort()) }));
    expect(ran.code, ran.output).toBe(0);
    // node:test's summary (TAP on Node 20 when piped, "ℹ" lines of the spec reporter on Node 24): every
    // test ran and passed (statuses, the 422, the callbacks, and 23 errors).
    expect(ran.output).toMatch(/^(#|ℹ) tests 26$/m);
    expect(ran.output).toMatch(/^(#|ℹ) pass 26$/m);
    expect(ran.output).toMatch(/^(#|ℹ) fail 0$/m);
    // Prism fired the contract's callbacks on each of the 13 creates, every one to the test's receiver.
    const targets = callbackTargets(ran.output);
    expect(targets.length, ran.output).toBeGreaterThanOrEqual(13);
    for (const target of targets) expect(new URL(target).hostname).toBe('127.0.0.1');
  }, 180_000);

  it('fails when the contract and the merchant disagree (the run is real)', async () => {
    const broken = files[1]!.code.replace("expired: ['EXPIRED', false, false]", "expired: ['DONE', false, false]");
    writeFileSync(join(project, files[1]!.path!), broken);
    const ran = await runBlock(shellBlocks[1]!.code, merchantEnv({ MOCK_PORT: String(await freePort()) }));
    writeFileSync(join(project, files[1]!.path!), files[1]!.code);
    expect(ran.code).not.toBe(0);
    expect(ran.output).toMatch(/^(#|ℹ) fail 1$/m);
  }, 180_000);
});
