// Checks responses against generated/openapi.json: the status is one the operation declares, the
// media type is the declared one, and the body matches the declared schema.
import { createContractAjv } from '../../src/server/http/contract-ajv.js';
import { contract } from '../../src/server/http/openapi-document.js';

const ajv = createContractAjv();

interface Operation {
  template: string;
  pattern: RegExp;
  method: string;
}

const operations: Operation[] = Object.entries(contract.paths).flatMap(([template, item]) =>
  Object.keys(item)
    .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map((method) => ({
      template,
      method,
      pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
    })),
);

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function resolveResponse(template: string, method: string, status: string): { ref: string; content?: Record<string, unknown> } | undefined {
  const responses = (contract.paths[template]![method] as { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }).responses;
  // `default` is the HTTP layer's refusals (ProtocolError); any other status must be declared itself.
  const response = responses[status] ?? (['408', '414', '431'].includes(status) ? responses.default : undefined);
  if (!response) return undefined;
  if (response.$ref) {
    const name = response.$ref.split('/').pop()!;
    const component = (contract.components as unknown as { responses: Record<string, { content?: Record<string, unknown> }> }).responses[name]!;
    return { ref: `contract.json#/components/responses/${pointer(name)}`, ...component };
  }
  return { ref: `contract.json#/paths/${pointer(template)}/${method}/responses/${status}`, ...response };
}

/** The contract violations of one response to a request for `path` (empty when it conforms). */
export function contractViolations(method: string, path: string, status: number, contentType: string | null, body: string): string[] {
  const operation = operations.find((o) => o.method === method.toLowerCase() && o.pattern.test(path.split('?')[0]!));
  if (!operation) return [`${method} ${path} is no operation of the contract`];
  const response = resolveResponse(operation.template, operation.method, String(status));
  if (!response) return [`${method} ${operation.template} does not declare status ${status}`];
  if (!response.content) return body === '' ? [] : [`status ${status} declares no body`];
  const mediaType = (contentType ?? '').split(';')[0]!.trim();
  if (!(mediaType in response.content)) return [`status ${status} declares ${Object.keys(response.content).join(', ')}, got ${mediaType}`];
  const validate = ajv.getSchema(`${response.ref}/content/${pointer(mediaType)}/schema`) ?? ajv.compile({ $ref: `${response.ref}/content/${pointer(mediaType)}/schema` });
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return [`the body is not JSON: ${body.slice(0, 80)}`];
  }
  return validate(json) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** A fetch that fails the test when a response breaks the contract. */
export function contractCheckingFetch(inner: typeof fetch = fetch) {
  return async (input: Request): Promise<Response> => {
    const response = await inner(input);
    const body = await response.clone().text();
    const violations = contractViolations(input.method, new URL(input.url).pathname, response.status, response.headers.get('content-type'), body);
    if (violations.length > 0) throw new Error(`response breaks the contract (${input.method} ${input.url} → ${response.status}):\n${violations.join('\n')}\n${body.slice(0, 300)}`);
    return response;
  };
}
