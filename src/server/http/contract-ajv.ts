// One Ajv instance over the bundled contract, which understands OpenAPI 3.1's JSON Schema 2020-12: the
// source of the platform's request validation.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { contract, CONTRACT_ID } from './openapi-document.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export function createContractAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(contract, CONTRACT_ID);
  return ajv;
}
