// One Ajv instance over the bundled contract, which understands OpenAPI 3.1's JSON Schema 2020-12: the
// source of the platform's request validation.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { contract, CONTRACT_ID } from './openapi-document.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * `forQuery`: a query string's values arrive as text, so `limit=20` is taken as the integer the contract
 * says (and `abc` refused), and an absent parameter takes the contract's default.
 */
export function createContractAjv({ forQuery = false } = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, ...(forQuery ? { coerceTypes: true, useDefaults: true } : {}) });
  addFormats(ajv);
  ajv.addSchema(contract, CONTRACT_ID);
  return ajv;
}
