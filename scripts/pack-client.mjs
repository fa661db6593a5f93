#!/usr/bin/env node
// The client package beside the docs (part of `npm run docs`): `npm pack ./dist/client` into dist/docs as
// partner-api-client.tgz, the file the page's "Download the client" link and the platform's
// /partner-api-client.tgz give, so that a merchant holding only the docs can `npm install` it. The name is
// fixed (redocly.yaml's link is static); the version is inside. npm pack's tarballs are reproducible.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

const CLIENT_TARBALL = 'dist/docs/partner-api-client.tgz';

const contract = JSON.parse(readFileSync('generated/openapi.json', 'utf8'));
const manifestPath = 'dist/client/package.json';
if (!existsSync(manifestPath)) throw new Error(`${manifestPath} is missing: run npm run build:client first`);
const { version } = JSON.parse(readFileSync(manifestPath, 'utf8'));
if (version !== contract.info.version) {
  throw new Error(`dist/client is partner-api-client ${version}, the contract is ${contract.info.version}: run npm run build:client`);
}
mkdirSync('dist/docs', { recursive: true });
const [packed] = JSON.parse(
  execFileSync('npm', ['pack', './dist/client', '--ignore-scripts', '--json', '--pack-destination', 'dist/docs', '--loglevel=error'], { encoding: 'utf8' }),
);
renameSync(join('dist/docs', packed.filename), CLIENT_TARBALL);
