// The docs' TypeScript samples as a merchant pastes them (issue 49, item 3): in a fresh folder, the
// guide's "Running the TypeScript samples" block runs verbatim (its install commands: the client from
// the platform's URL, tsx from npm's registry), each sample is saved as a file and run with the guide's
// command, against a real sandbox platform that verifies every signature. Beside it, the trap the guide
// warns about: the same sample in the package.json that npm install writes in an empty folder fails.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderRequest } from '../fixtures/orders.js';
import { SAMPLE_ORDER, sampleOf } from '../support/code-samples.js';
import { codeBlocks, guideSection, payingOutBlock } from '../support/guide.js';
import { settleDueSandboxWithdrawals } from '../../src/server/withdrawals/sandbox-settlement.js';
import { plainEnv, removeAll, ROOT } from '../support/packages.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

const section = guideSection('# Getting started');
const installBlock = codeBlocks(section).find((block) => block.lang === 'sh' && block.code.includes('npm pkg set type=module'));
/** The guide's command, `npx tsx <file>.ts`, and the file name it gives. */
const runCommand = /run `(npx tsx ([\w-]+\.ts))`/.exec(section.replace(/\s+/g, ' '));

let platform: TestPlatform;
let project: string;
let plainProject: string;

/** The merchant's shell: the platform whose docs they read, npm with its default registry and no user config. */
function merchantEnv(extra: Record<string, string> = {}) {
  return plainEnv({
    PARTNER_API_URL: platform.baseUrl,
    PARTNER_API_KEY: platform.merchant.apiKey,
    PARTNER_API_SECRET: platform.merchant.apiSecret,
    npm_config_prefer_offline: 'true',
    npm_config_userconfig: join(project, '.no-user-npmrc'),
    npm_config_update_notifier: 'false', // npx would ask the registry for npm's latest version at each sample
    ...extra,
  });
}

async function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd, env, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A sample saved under the guide's file name and run with the guide's command, in `cwd`. */
async function runSample(operationId: string, cwd: string, ids: Record<string, string> = {}) {
  writeFileSync(join(cwd, runCommand![2]!), sampleOf(operationId, 'TypeScript'));
  return bash(runCommand![1]!, cwd, merchantEnv(ids));
}

beforeAll(async () => {
  platform = await startTestPlatform('pglite', { env: { SANDBOX_WITHDRAWAL_SECONDS: '1' } });
  project = mkdtempSync(join(tmpdir(), 'partner-ts-samples-'));
  plainProject = mkdtempSync(join(tmpdir(), 'partner-ts-plain-'));
}, 120_000);

afterAll(async () => {
  await platform?.close();
  removeAll(project, plainProject);
});

describe("the docs' TypeScript samples, run as the guide says in a fresh folder", () => {
  it('has the guide say how: a module project, the client from the platform, tsx pinned as the repository pins it, and the command', () => {
    expect(installBlock?.code).toBe(
      'npm init -y > /dev/null\nnpm pkg set type=module\nnpm install "$PARTNER_API_URL/partner-api-client.tgz"\nnpm install --save-dev --save-exact tsx@4.23.15\n',
    );
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies.tsx).toBe('4.23.15');
    expect(runCommand?.[1]).toBe('npx tsx create-order.ts');
  });

  it('installs with the guide\'s block, and every sample runs with the guide\'s command against the sandbox', async () => {
    const installed = await bash(installBlock!.code, project, merchantEnv());
    expect(installed.code, installed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'))).toMatchObject({ type: 'module', dependencies: { 'partner-api-client': `${platform.baseUrl}/partner-api-client.tgz` } });

    const ids: Record<string, string> = {};
    const ran: Record<string, string[]> = {};
    for (const operationId of SAMPLE_ORDER) {
      if (operationId === 'listEventDeliveries') {
        // The event of the sample's deposit, as the feed names it (EVENT_ID in the samples' environment).
        const events = await platform.client().GET('/partner/v1/platforms/events', { params: { query: { orderUuid: ids.ORDER_UUID! } } });
        ids.EVENT_ID = events.data!.data[0]!.id;
      }
      if (operationId === 'createSandboxWithdrawal') {
        // The withdrawals draw on the balance: a Tron deposit of 100 USDT first, as the guide says.
        const funding = await platform.client().POST('/partner/v1/platforms/orders', { body: orderRequest('ts-docs-funding') });
        await platform.client().POST('/sandbox/v1/orders/{uuid}/deposits', { params: { path: { uuid: funding.data!.uuid } }, body: { amount: 100_000_000 } });
      }
      if (operationId === 'listDepositOrders') {
        const done = await platform.client().POST('/partner/v1/platforms/orders', { body: orderRequest('ts-docs-done') });
        await platform.client().POST('/sandbox/v1/orders/{uuid}/deposits', { params: { path: { uuid: done.data!.uuid } }, body: { amount: 2_500_000 } });
      }
      const result = await runSample(operationId, project, ids);
      expect(result.stderr, operationId).toBe('');
      expect(result.code, operationId).toBe(0);
      ran[operationId] = result.stdout.trim().split('\n');
      if (operationId === 'createDepositOrder') ids.ORDER_UUID = ran[operationId]![0]!.split(' ')[1]!;
      if (operationId === 'createSandboxWithdrawal') ids.WITHDRAWAL_UUID = ran[operationId]![0]!.split(' ')[0]!;
    }
    expect(ran.createDepositOrder![0]).toMatch(/^201 [0-9a-f-]{36} 0x[0-9a-fA-F]{40}$/);
    expect(ran.getDepositOrder).toEqual(['NEW 0']);
    expect(ran.simulateSandboxDeposit).toEqual(['DONE 30000000']); // the sample's order is on Ethereum: 30 USDT meets its 10 USDT minimum
    expect(ran.redeliverEvent).toEqual([`202 ${ids.EVENT_ID} pending`]);
    expect(ran.setSandboxWithdrawalStatus).toEqual([`${ids.WITHDRAWAL_UUID} DONE`]);
    // 2.5 + 100 USDT received on Tron; the sandbox withdrawal took 12.5 and its fee of 1 (Ethereum: the sample's 30).
    expect(ran.getBalances).toEqual(['Tron USDT 89000000 0 102500000 13500000', 'Ethereum USDT 30000000 0 30000000 0']);
    expect(ran.getWithdrawalTerms).toEqual(['Tron USDT true 1 1 null null', 'Ethereum USDT true 5 10 null null']);
    expect(ran.createWithdrawal![0]).toMatch(/^[0-9a-f-]{36} PENDING queued 1$/);
    expect(ran.listAllEvents).toContainEqual(expect.stringMatching(/^withdrawal\.done DONE [0-9a-f]{64}$/));
    expect(ran.listAllEvents!.at(-1)).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

    // The guide's Paying out, in TypeScript, with the same command: the balance, the terms, a withdrawal, and its
    // settlement by the sandbox (its job's work, run here: no job runs on this platform, so no callback is attempted).
    writeFileSync(join(project, runCommand![2]!), payingOutBlock('ts').code);
    const settling = setInterval(() => void settleDueSandboxWithdrawals(platform.db), 500);
    const payout = await bash(runCommand![1]!, project, merchantEnv()).finally(() => clearInterval(settling));
    expect(payout.stderr).toBe('');
    expect(payout.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^available \d+$/), 'terms 1 1 null null', expect.stringMatching(/^DONE [0-9a-f]{64}$/)]);
  }, 600_000); // npm, then 15 runs of npx and tsx (about 1.6 CPU-s each): minutes on a loaded 2-core machine

  it('fails, as the guide says, in the package.json that npm install writes in an empty folder', async () => {
    // The client from the project above (its tarball), nothing else: a plain npm install in an empty folder.
    const installed = await bash('npm install "$PARTNER_API_URL/partner-api-client.tgz"', plainProject, merchantEnv());
    expect(installed.code, installed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(plainProject, 'package.json'), 'utf8')).type).toBeUndefined();
    writeFileSync(join(plainProject, 'create-order.ts'), sampleOf('createDepositOrder', 'TypeScript'));
    // tsx as the folder above installed it (npx here would fetch it again from the registry).
    const failed = await bash(`${join(project, 'node_modules/.bin/tsx')} create-order.ts`, plainProject, merchantEnv());
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/[Tt]op-level await/);
  }, 120_000);
});
