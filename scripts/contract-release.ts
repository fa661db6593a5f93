// The contract as a release. Two commands:
//   check    (npm run check:breaking)   compare generated/openapi.json with the newest release in
//            openapi/releases/ and fail on a breaking change the version does not announce;
//   release  (npm run release:contract) keep generated/openapi.json as openapi/releases/<info.version>.json.
// The classification is api-smart-diff's (breaking / non-breaking / annotation, per OpenAPI rules that
// treat requests and responses differently); see docs/packages.md#releasing-the-contract.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { apiDiff, type Diff } from 'api-smart-diff';

const RELEASES = 'openapi/releases';

type Document = {
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { callbacks?: Record<string, Callback> };
};
type Operation = { operationId?: string; callbacks?: Record<string, Callback | { $ref: string }>; requestBody?: { content: unknown } };
type Callback = Record<string, Record<string, Operation>>;

interface Version {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

function parseVersion(text: string): Version {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!match) throw new Error(`info.version ${JSON.stringify(text)} is not MAJOR.MINOR.PATCH`);
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), text };
}

function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

function readDocument(file: string): Document {
  return JSON.parse(readFileSync(file, 'utf8')) as Document;
}

/** The newest release file in openapi/releases (highest MAJOR.MINOR.PATCH). */
function newestRelease(directory = RELEASES): string {
  const releases = readdirSync(directory)
    .filter((name) => /^\d+\.\d+\.\d+\.json$/.test(name))
    .map((name) => ({ name, version: parseVersion(name.replace(/\.json$/, '')) }))
    .sort((a, b) => compareVersions(b.version, a.version));
  if (!releases[0]) throw new Error(`no release in ${directory}: run npm run release:contract`);
  return join(directory, releases[0].name);
}

/**
 * A callback's body is a request that the platform sends, so for merchants it behaves like a response:
 * a field removed from it breaks their handlers. Each callback operation becomes a synthetic operation
 * whose 200 response is the callback body, so the diff applies the rules of responses to it.
 */
function withCallbacksAsResponses(document: Document): Document {
  const copy = structuredClone(document);
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [name, callbackOrRef] of Object.entries(operation.callbacks ?? {})) {
        const callback = '$ref' in callbackOrRef ? copy.components?.callbacks?.[String(callbackOrRef.$ref).split('/').pop()!] : callbackOrRef;
        for (const [expression, callbackOperations] of Object.entries(callback ?? {})) {
          for (const [callbackMethod, callbackOperation] of Object.entries(callbackOperations)) {
            const syntheticPath = `/x-callbacks/${operation.operationId ?? `${method} ${path}`}/${name}/${expression}/${callbackMethod}`;
            copy.paths[syntheticPath] = { post: { responses: { '200': { description: 'callback body', content: callbackOperation.requestBody?.content } } } as unknown as Operation };
          }
        }
      }
    }
  }
  return copy;
}

/**
 * Where api-smart-diff is lenient, the stricter reading for a payment API (examples and code samples
 * aside, which are documentation): a change it cannot classify
 * (an `allOf` replaced by a plain schema, say) needs a person to call it compatible; a `type` keyword
 * that changes is a changed field type even where its other rules see a widening; and a response (or
 * callback) field removed is breaking even when it was optional, since merchants read optional fields.
 */
function stricterType(diff: Diff): Diff['type'] {
  const key = diff.path.at(-1);
  // Documentation that no client or server reads: examples and code samples (api-smart-diff leaves them unclassified).
  if (diff.path.some((part) => part === 'examples' || part === 'example' || part === 'x-codeSamples')) return 'annotation';
  if (diff.type === 'unclassified') return 'breaking';
  if (key === 'type' && diff.action !== 'rename') return 'breaking';
  if (diff.action === 'remove' && diff.path.includes('responses') && diff.path.at(-2) === 'properties') return 'breaking';
  return diff.type;
}

interface Comparison {
  base: Version;
  head: Version;
  changes: Diff[];
  breaking: Diff[];
  problems: string[];
}

/**
 * Compares two contracts; `problems` is empty when the head may follow the base: no breaking change, or
 * a major version above the release's. Compatible changes under the same version are unreleased work.
 */
function compareContracts(base: Document, head: Document, changelog: string): Comparison {
  const baseVersion = parseVersion(base.info.version);
  const headVersion = parseVersion(head.info.version);
  // Only changes seen from an operation count: a component's own diff has no request/response context.
  const changes = apiDiff(withCallbacksAsResponses(base), withCallbacksAsResponses(head))
    .filter((d) => d.path[0] === 'paths')
    .map((d) => ({ ...d, type: stricterType(d) }));
  const breaking = changes.filter((d) => d.type === 'breaking');
  const problems: string[] = [];
  const order = compareVersions(headVersion, baseVersion);
  if (order < 0) problems.push(`info.version ${headVersion.text} is older than the release ${baseVersion.text}`);
  if (breaking.length > 0 && headVersion.major <= baseVersion.major) {
    problems.push(
      `${breaking.length} breaking change(s) against release ${baseVersion.text}, but info.version is ${headVersion.text}: ` +
        `make the change compatible, or bump info.version to ${baseVersion.major + 1}.0.0 in openapi/openapi.yaml`,
    );
  }
  if (order > 0 && !new RegExp(`^## \\[${headVersion.text.replace(/\./g, '\\.')}\\]`, 'm').test(changelog)) {
    problems.push(`info.version is ${headVersion.text} but CHANGELOG.md has no "## [${headVersion.text}]" section`);
  }
  return { base: baseVersion, head: headVersion, changes, breaking, problems };
}

function describe(change: Diff): string {
  return `${change.type.padEnd(12)} ${change.action.padEnd(8)} ${change.path.join(' › ')}`;
}

/** Where a command writes: the console, or a test's capture. */
interface Output {
  log(line: string): void;
  error(line: string): void;
}

export function check(argv: string[], out: Output = console): number {
  const { values } = parseArgs({ args: argv, options: { base: { type: 'string' }, head: { type: 'string' }, changelog: { type: 'string' } } });
  const baseFile = values.base ?? newestRelease();
  const headFile = values.head ?? 'generated/openapi.json';
  const changelogFile = values.changelog ?? 'CHANGELOG.md';
  const changelog = existsSync(changelogFile) ? readFileSync(changelogFile, 'utf8') : '';
  const result = compareContracts(readDocument(baseFile), readDocument(headFile), changelog);
  out.log(`contract ${result.head.text} (${headFile}) against release ${result.base.text} (${baseFile}):`);
  for (const change of result.changes) out.log(`  ${describe(change)}`);
  const counts = `${result.changes.length} change(s), ${result.breaking.length} breaking`;
  if (result.problems.length > 0) {
    for (const problem of result.problems) out.error(`check:breaking: ${problem}`);
    out.error(`check:breaking: FAILED (${counts}); after bumping, add the CHANGELOG section and run npm run release:contract`);
    return 1;
  }
  out.log(`check:breaking: ok (${counts})`);
  return 0;
}

function release(argv: string[]): number {
  const { values } = parseArgs({ args: argv, options: { force: { type: 'boolean' } } });
  const contract = readFileSync('generated/openapi.json', 'utf8');
  const version = parseVersion(readDocument('generated/openapi.json').info.version);
  const target = join(RELEASES, `${version.text}.json`);
  if (existsSync(target) && readFileSync(target, 'utf8') !== contract && !values.force) {
    console.error(`release:contract: ${target} exists and differs; a release is immutable: bump info.version (or pass --force to replace an unpublished one)`);
    return 1;
  }
  writeFileSync(target, contract);
  console.log(`release:contract: ${target}`);
  return 0;
}

// Run as a command (not when a test imports check()).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'check') process.exitCode = check(rest);
  else if (command === 'release') process.exitCode = release(rest);
  else {
    console.error('usage: tsx scripts/contract-release.ts check [--base FILE] [--head FILE] [--changelog FILE] | release [--force]');
    process.exitCode = 64;
  }
}
