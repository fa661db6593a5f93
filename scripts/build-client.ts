// Builds dist/client/: the complete `partner-api-client` package that merchants' services install.
// ESM and CommonJS builds of src/client with bundled type declarations (the generated types inside),
// its own package.json (version = the contract's info.version), the bundled contract (export
// `partner-api-client/openapi.json`, for a merchant's mock: Prism runs on it), the merchant README and the licence.
// `npm pack ./dist/client` makes the tarball.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'tsup';

const OUT = 'dist/client';
const root = JSON.parse(readFileSync('package.json', 'utf8'));
const contract = JSON.parse(readFileSync('generated/openapi.json', 'utf8'));

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });

await build({
  entry: { index: 'src/client/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  outDir: OUT,
  target: 'es2022',
  platform: 'neutral',
  external: ['openapi-fetch'],
  splitting: false,
  sourcemap: false,
  clean: false,
  silent: true,
});

const openapiFetch: string = root.devDependencies['openapi-fetch'] ?? root.dependencies?.['openapi-fetch'];
const manifest = {
  name: 'partner-api-client',
  version: contract.info.version,
  description: 'Typed client of the Partner API: signed requests, typed problems, Standard Webhooks callback verification.',
  license: root.license,
  type: 'module',
  sideEffects: false,
  engines: root.engines,
  keywords: ['partner-api', 'usdt', 'tron', 'ethereum', 'payments', 'openapi', 'standard-webhooks'],
  exports: {
    '.': {
      import: { types: './index.d.ts', default: './index.js' },
      require: { types: './index.d.cts', default: './index.cjs' },
    },
    './openapi.json': './openapi.json',
    './package.json': './package.json',
  },
  main: './index.cjs',
  types: './index.d.cts',
  files: ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts', 'openapi.json'],
  dependencies: { 'openapi-fetch': openapiFetch },
};
writeFileSync(`${OUT}/package.json`, JSON.stringify(manifest, null, 2) + '\n');
copyFileSync('generated/openapi.json', `${OUT}/openapi.json`);
copyFileSync('src/client/README.md', `${OUT}/README.md`);
copyFileSync('LICENSE', `${OUT}/LICENSE`);
console.log(`${OUT}: partner-api-client ${manifest.version}`);
