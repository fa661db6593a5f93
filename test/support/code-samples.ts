// The docs' code samples (x-codeSamples of every operation, from openapi/code-samples/), read from the
// bundled contract exactly as the docs show them, and the order in which a test runs them: each later
// sample needs an id that an earlier one created (ORDER_UUID, EVENT_ID, WITHDRAWAL_UUID), and the
// withdrawals a balance, which the test credits first (the guide says to simulate a deposit).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './packages.js';

/** The languages of every operation's samples, in the order the docs' menu offers them (redocly.yaml). */
export const SAMPLE_LANGUAGES = [
  { lang: 'Shell', label: 'curl + openssl' },
  { lang: 'TypeScript', label: 'partner-api-client' },
  { lang: 'Python', label: 'Python (urllib)' },
] as const;

export interface CodeSample {
  lang: (typeof SAMPLE_LANGUAGES)[number]['lang'];
  label: string;
  source: string;
}

export interface SampledOperation {
  operationId: string;
  summary: string;
  /** The operation's first tag: the docs page's route is under it. */
  tag: string;
  method: string;
  path: string;
  samples: CodeSample[];
}

/** Every operation of the contract with its code samples. */
export function sampledOperations(): SampledOperation[] {
  const contract = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string; summary: string; tags: string[]; 'x-codeSamples'?: CodeSample[] }>>;
  };
  return Object.entries(contract.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({
        operationId: operation.operationId,
        summary: operation.summary,
        tag: operation.tags[0]!,
        method,
        path,
        samples: operation['x-codeSamples'] ?? [],
      })),
  );
}

/** The order that gives each sample the ids it needs. */
export const SAMPLE_ORDER = [
  'createDepositOrder',
  'getDepositOrder',
  'simulateSandboxDeposit',
  'listDepositOrders',
  'listEvents',
  'listEventDeliveries',
  'redeliverEvent',
  'createSandboxWithdrawal',
  'getWithdrawal',
  'listWithdrawals',
  'setSandboxWithdrawalStatus',
  'getBalances',
  'getWithdrawalTerms',
  'createWithdrawal',
  'listAllEvents',
] as const;

export function sampleOf(operationId: string, lang: CodeSample['lang']): string {
  const sample = sampledOperations().find((o) => o.operationId === operationId)?.samples.find((s) => s.lang === lang);
  if (!sample) throw new Error(`${operationId} has no ${lang} sample`);
  return sample.source;
}
