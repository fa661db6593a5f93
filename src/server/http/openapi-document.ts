// The bundled contract (generated/openapi.json) as the source of the platform's request validation,
// through one Ajv instance that understands OpenAPI 3.1's JSON Schema 2020-12.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export const CONTRACT_PATH = new URL('../../../generated/openapi.json', import.meta.url);
export const CONTRACT_ID = 'contract.json';

export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown>; parameters: Record<string, { schema: unknown }> };
}

export const contractText = readFileSync(CONTRACT_PATH, 'utf8');
export const contract = JSON.parse(contractText) as OpenApiDocument;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export function createContractAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(contract, CONTRACT_ID);
  return ajv;
}

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
