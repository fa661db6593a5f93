// What holds an answer's shape to the contract (docs/design.md, The platform's architecture, HTTP): no
// route declares a response schema, so nothing serializes from the contract, and the suite's own check
// of every answer (test/support/contract.ts) is what fails when a handler sends another shape.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contractViolations } from '../../support/contract.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const HTTP = join(ROOT, 'src/server/http');

describe("what holds the answers' shape", () => {
  it('declares no response schema and no serializer in any route: the handlers send JSON.stringify or the database\'s JSON', () => {
    const declared = readdirSync(HTTP)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => readFileSync(join(HTTP, name), 'utf8').split('\n').map((line) => `${name}: ${line.trim()}`))
      .filter((line) => /\bresponse\s*:\s*\{|setSerializerCompiler|serializerCompiler/.test(line));
    expect(declared).toEqual([]);
  });

  it("fails an answer of another shape: the suite's check is the guarantee", () => {
    const read = '/partner/v2/platforms/orders/0b9a1c52-8c5e-4f8e-9d7a-3b1e2f4a5c6d';
    expect(contractViolations('GET', read, 200, 'application/json', '{"uuid":1}').length).toBeGreaterThan(0);
    expect(contractViolations('GET', read, 201, 'application/json', '{}')).toEqual(['GET /partner/v2/platforms/orders/{uuid} does not declare status 201']);
    expect(contractViolations('GET', '/partner/v1/platforms/orders', 200, 'application/json', '{"data":[],"hasMore":false}')).toEqual([]);
  });

  it('is what docs/design.md says', () => {
    const design = readFileSync(join(ROOT, 'docs/design.md'), 'utf8').replace(/\s+/g, ' ');
    expect(design).toContain('No route declares a response schema, so nothing is serialized from the contract');
    expect(design).not.toMatch(/response serialization driven by/);
  });
});
