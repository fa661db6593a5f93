// A real npm registry on loopback (verdaccio), standing in for the public one: the client package is
// published to it, and everything else a merchant installs comes through it from the machine's registry.
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runServer } from 'verdaccio';
import { npm, removeAll, ROOT } from './packages.js';

export interface LocalRegistry {
  /** The registry's URL, with its trailing slash, as npm writes it. */
  url: string;
  /** Publishes a tarball as the registry's one user. */
  publish: (tarball: string) => Promise<void>;
  close: () => Promise<void>;
}

export async function startLocalRegistry(): Promise<LocalRegistry> {
  const directory = mkdtempSync(join(tmpdir(), 'partner-registry-'));
  const upstream = (await npm(['config', 'get', 'registry'], ROOT)).stdout.trim();
  // partner-api-client is served only from here (never looked up upstream); every other package is proxied.
  writeFileSync(
    join(directory, 'config.yaml'),
    [
      'storage: ./storage',
      'auth:',
      '  htpasswd:',
      '    file: ./htpasswd',
      'uplinks:',
      '  upstream:',
      `    url: ${upstream}`,
      'packages:',
      '  partner-api-client:',
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    proxy: upstream',
      'log: { type: stdout, format: json, level: error }',
      '',
    ].join('\n'),
  );
  const app = (await runServer(join(directory, 'config.yaml'))) as Server;
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(app.address() as { port: number }).port}/`;

  const publish = async (tarball: string) => {
    // npm adduser without a prompt: the registry's CouchDB-style user endpoint answers with a token.
    const user = await fetch(`${url}-/user/org.couchdb.user:merchant`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'merchant', password: 'publish-test-only' }),
    });
    const { token } = (await user.json()) as { token?: string };
    if (!token) throw new Error(`the local registry gave no token (${user.status})`);
    const userconfig = join(directory, 'publisher.npmrc');
    writeFileSync(userconfig, `registry=${url}\n//${url.slice('http://'.length)}:_authToken=${token}\n`);
    await npm(['publish', tarball, '--userconfig', userconfig, '--registry', url, '--ignore-scripts'], directory);
  };
  const close = async () => {
    await new Promise<void>((resolve) => app.close(() => resolve()));
    removeAll(directory);
  };
  return { url, publish, close };
}
