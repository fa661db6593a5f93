// The bundled contract (generated/openapi.json): its text as served, and its schemas and parameters as the
// routes' validation refers to them (./contract-ajv.ts compiles them; kept apart so that reading the
// contract, as `partner-api --version` does, loads no validator).
import { readFileSync } from 'node:fs';

export const CONTRACT_PATH = new URL('../../../generated/openapi.json', import.meta.url);
export const CONTRACT_ID = 'contract.json';

export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown>; parameters: Record<string, { schema: unknown }> };
}

export const contractText = readFileSync(CONTRACT_PATH, 'utf8');
export const contract = JSON.parse(contractText) as OpenApiDocument;

/** A JSON Schema that refers to one of the contract's component schemas. */
export function componentSchema(name: string): { $ref: string } {
  if (!(name in contract.components.schemas)) throw new Error(`the contract has no schema ${name}`);
  return { $ref: `${CONTRACT_ID}#/components/schemas/${name}` };
}

/** The params schema of a route whose one path parameter `uuid` is the contract's parameter `name`. */
export function uuidPathParams(name: 'OrderUuid' | 'WithdrawalUuid'): object {
  const parameter = contract.components.parameters[name];
  if (!parameter) throw new Error(`the contract has no parameter ${name}`);
  return { type: 'object', required: ['uuid'], properties: { uuid: parameter.schema } };
}
