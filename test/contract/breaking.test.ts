// npm run check:breaking on copies of the contract changed in each way that breaks merchants (it must
// fail) and in ways that do not (it must pass), and on a bumped version. Two cases run the command as
// CI runs it, in a process of its own (its exit code and streams); the others call the same check()
// in this process, which costs no Node start and no TypeScript load each.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { check as checkInProcess } from '../../scripts/contract-release.js';

const root = resolve(import.meta.dirname, '../..');
const released = JSON.parse(readFileSync(join(root, 'openapi/releases/1.0.0.json'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'partner-breaking-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Contract = typeof released;
let files = 0;

/** The cases run as a process: one that must fail and one that must pass. */
const AS_A_PROCESS = new Set(['a removed operation', 'no change']);

async function check(change: (contract: Contract) => void, changelog = '# Changelog\n', asProcess = false): Promise<{ code: number; output: string }> {
  const head = structuredClone(released);
  change(head);
  const headFile = join(scratch, `head-${++files}.json`);
  const changelogFile = join(scratch, `CHANGELOG-${files}.md`);
  writeFileSync(headFile, JSON.stringify(head));
  writeFileSync(changelogFile, changelog);
  const checkArgs = ['--base', 'openapi/releases/1.0.0.json', '--head', headFile, '--changelog', changelogFile];
  if (!asProcess) {
    let output = '';
    const write = (line: string) => (output += `${line}\n`);
    return { code: checkInProcess(checkArgs, { log: write, error: write }), output };
  }
  const args = ['--import', 'tsx', 'scripts/contract-release.ts', 'check', ...checkArgs];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { cwd: root });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

const schemas = (contract: Contract) => contract.components.schemas;

const BREAKING: Record<string, (contract: Contract) => void> = {
  'a removed operation': (c) => delete c.paths['/partner/v1/platforms/withdrawals/{uuid}'],
  'a removed response field': (c) => {
    const core = schemas(c).DepositOrderCore;
    delete core.properties.address;
    core.required = core.required.filter((name: string) => name !== 'address');
  },
  'a new required request field': (c) => {
    const request = schemas(c).CreateDepositOrderRequest;
    request.properties.memo = { type: 'string', maxLength: 64 };
    request.required.push('memo');
  },
  'a narrowed enum': (c) => {
    schemas(c).Blockchain.enum = ['Tron'];
  },
  'a changed field type': (c) => {
    schemas(c).DepositOrderCore.properties.minAmount = { type: 'string', maxLength: 32 };
  },
  'a field removed from the callback body': (c) => {
    const deposit = schemas(c).DepositOrderCallback.allOf[1];
    delete deposit.properties.txId;
  },
};

const COMPATIBLE: Record<string, (contract: Contract) => void> = {
  'no change': () => {},
  'an added optional response field': (c) => {
    schemas(c).DepositOrder.allOf[1].properties.note = { type: 'string', maxLength: 64 };
  },
  'an added operation': (c) => {
    c.paths['/partner/v1/platforms/withdrawals'] = structuredClone(c.paths['/partner/v1/platforms/withdrawals/{uuid}']);
    c.paths['/partner/v1/platforms/withdrawals'].get.operationId = 'listWithdrawals';
    delete c.paths['/partner/v1/platforms/withdrawals'].get.parameters;
  },
  'a changed code sample and a new example': (c) => {
    const operation = c.paths['/sandbox/v1/orders/{uuid}/deposits'].post;
    operation['x-codeSamples'][0].source = 'echo "a sample rewritten"';
    const examples = c.components.responses.NotFound.content['application/problem+json'].examples;
    examples.another = structuredClone(Object.values(examples)[0]);
  },
  'an added optional request field': (c) => {
    schemas(c).CreateDepositOrderRequest.properties.note = { type: 'string', maxLength: 64 };
  },
};

describe('npm run check:breaking', () => {
  for (const [name, change] of Object.entries(BREAKING)) {
    it(`fails on ${name} under the same version`, async () => {
      const { code, output } = await check(change, undefined, AS_A_PROCESS.has(name));
      expect(code).toBe(1);
      expect(output).toMatch(/breaking change\(s\) against release 1\.0\.0, but info\.version is 1\.0\.0/);
      expect(output).toContain('bump info.version to 2.0.0');
    });
  }

  for (const [name, change] of Object.entries(COMPATIBLE)) {
    it(`passes on ${name}`, async () => {
      const { code, output } = await check(change, undefined, AS_A_PROCESS.has(name));
      expect(output).toMatch(/check:breaking: ok \(\d+ change\(s\), 0 breaking\)/);
      expect(code).toBe(0);
    });
  }

  it('passes on a breaking change when the major version is bumped and the changelog says so', async () => {
    const bumped = (c: Contract) => {
      BREAKING['a removed response field']!(c);
      c.info.version = '2.0.0';
    };
    const { code, output } = await check(bumped, '# Changelog\n\n## [2.0.0] - 2026-12-01\n\n### Removed\n- `address`\n');
    expect(output).toMatch(/check:breaking: ok \(\d+ change\(s\), [1-9]\d* breaking\)/);
    expect(code).toBe(0);
  });

  it('fails on a bumped version without its changelog section', async () => {
    const { code, output } = await check((c) => (c.info.version = '1.1.0'));
    expect(code).toBe(1);
    expect(output).toContain('CHANGELOG.md has no "## [1.1.0]" section');
  });

  it('fails on a minor bump for a breaking change', async () => {
    const { code, output } = await check((c) => {
      BREAKING['a narrowed enum']!(c);
      c.info.version = '1.1.0';
    }, '# Changelog\n\n## [1.1.0] - 2026-12-01\n');
    expect(code).toBe(1);
    expect(output).toContain('bump info.version to 2.0.0');
  });
});
