// The worked signature example of the Authentication guide (openapi/guide/overview.md, docs/design.md#the-docs-site) must
// reproduce the "create order" vector: its shell block is run with bash and openssl, the signature it
// shows is compared, and its TypeScript block is run through the real signRequest.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as clientExports from '../../src/client/index.js';
import { signRequest } from '../../src/signing/index.js';
import { signatureVectors } from '../fixtures/vectors.js';
import { codeBlocks, guideSection } from '../support/guide.js';

const vector = signatureVectors.cases.find((c) => c.name === 'create order')!;
const section = guideSection('## Worked example');
const blocks = codeBlocks(section);
const shellIndex = blocks.findIndex((b) => b.lang === 'sh' || b.lang === 'bash' || b.lang === 'shell');

describe('the worked example of the Authentication guide', () => {
  it('names the secret and timestamp of the "create order" vector', () => {
    expect(section).toContain(`API secret \`${signatureVectors.secret}\``);
    expect(section).toContain(`\`X-Timestamp: ${vector.timestamp}\``);
  });

  it('has a shell block that prints the vector signature with bash and openssl', async () => {
    expect(shellIndex, 'no shell block in the worked example').toBeGreaterThanOrEqual(0);
    const { code } = blocks[shellIndex]!;
    expect(code).toContain('openssl dgst -sha256 -hmac');
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', code], {
      env: { PATH: '/usr/bin:/bin', LC_ALL: 'C.UTF-8' },
    });
    expect(stdout).toBe(`${vector.signature}\n`);
  });

  it('shows the vector signature right after the shell block', () => {
    const shown = blocks[shellIndex + 1];
    expect(shown?.lang).toBe('');
    expect(shown?.code.trim()).toBe(vector.signature);
  });

  it('has a TypeScript block that signs the vector through the real signRequest', async () => {
    const block = blocks.find((b) => b.lang === 'ts' && b.code.includes('signRequest('));
    expect(block, 'no TypeScript block calling signRequest in the worked example').toBeDefined();
    const code = block!.code;

    // It imports signRequest from the client package, which really exports it.
    const importLine = /^import \{ signRequest \} from '([^']+)';\n/m.exec(code);
    expect(importLine?.[1]).toBe('partner-api-client');
    expect(clientExports.signRequest).toBe(signRequest);

    // Run the rest of the block (types stripped) with the real signRequest, recording its arguments.
    const body = ts.transpileModule(code.replace(importLine![0], ''), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText;
    const calls: Parameters<typeof signRequest>[0][] = [];
    const recording: typeof signRequest = (parts) => {
      calls.push(parts);
      return signRequest(parts);
    };
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
      ...args: string[]
    ) => (sign: typeof signRequest) => Promise<unknown>;
    const signature = await new AsyncFunction('signRequest', `${body}\nreturn signature;`)(recording);

    expect(calls).toEqual([
      { secret: signatureVectors.secret, timestamp: vector.timestamp, method: vector.method, target: vector.target, body: vector.body },
    ]);
    expect(signature).toBe(vector.signature);
    // The result it announces in its closing comment.
    expect(code).toContain(`// signature === '${vector.signature}'`);
  });
});
