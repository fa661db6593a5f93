// The bundled contract (generated/openapi.json): its text as served, and its schemas and parameters as the
// routes' validation refers to them (./contract-ajv.ts compiles them; kept apart so that reading the
// contract, as `partner-api --version` does, loads no validator).
import { readFileSync } from 'node:fs';

export const CONTRACT_PATH = new URL('../../../generated/openapi.json', import.meta.url);
export const CONTRACT_ID = 'contract.json';

interface Parameter {
  name: string;
  in: string;
  schema: unknown;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: ({ $ref: string } | Parameter)[] }>>;
  components: { schemas: Record<string, unknown>; parameters: Record<string, Parameter> };
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

/** A contract schema with its local references (`#/…`) made to point into the contract as Ajv holds it. */
function inContract(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value) => (key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? CONTRACT_ID + value : value));
}

/**
 * The querystring schema of an operation: each of its query parameters, and no other (a misspelt
 * filter is refused, not ignored: a reconciliation that silently lists everything is worse than none).
 */
export function queryParams(path: string, method: 'get' | 'post'): object {
  const operation = contract.paths[path]?.[method];
  if (!operation) throw new Error(`the contract has no operation ${method} ${path}`);
  const parameters = (operation.parameters ?? [])
    .map((p) => ('$ref' in p ? contract.components.parameters[p.$ref.replace('#/components/parameters/', '')]! : p))
    .filter((p) => p.in === 'query');
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(parameters.map((p) => [p.name, inContract(p.schema)])),
  };
}
