// The JSON-RPC client against a node that hangs up: a call that got no answer at all is sent once more,
// and a second hang-up is an RpcError that names the cause, not fetch's bare TypeError (which the CLI
// printed as "unexpected error (TypeError)", exit 70, under load; issue 57).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonRpcClient, RpcError } from '../../../src/server/chain/rpc.js';
import { runCli } from '../../../src/server/cli.js';
import { orderRequest } from '../../fixtures/orders.js';
import { startTestPlatform } from '../../support/platform.js';

let server: Server | undefined;
afterEach(() => server?.close());

/** A node on loopback that hangs up on the first `hangUps` requests, then answers eth_blockNumber 0x2a. */
async function node(hangUps: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((request, response) => {
    requests++;
    if (requests <= hangUps) return void request.socket.destroy();
    request.resume().on('end', () => response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x2a' })));
  });
  await once(server.listen(0, '127.0.0.1'), 'listening');
  const { port } = server.address() as { port: number };
  return { url: `http://user:secret-key@127.0.0.1:${port}/`, requests: () => requests };
}

describe('the JSON-RPC client, when the node hangs up', () => {
  it('sends the call once more and takes its answer', async () => {
    const n = await node(1);
    expect(await new JsonRpcClient(n.url).blockNumber()).toBe(42n);
    expect(n.requests()).toBe(2);
  });

  it('gives up after the second hang-up with an RpcError naming the cause, not the URL', async () => {
    const n = await node(2);
    const error = await new JsonRpcClient(n.url).blockNumber().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).message).toMatch(/^eth_blockNumber: no answer from the node \(\w+/);
    expect((error as RpcError).message).not.toContain('secret-key');
    expect(n.requests()).toBe(2);
  });
});

describe('deposits rescan, when the chain node hangs up', () => {
  it('says so in one line and exits 69 (unavailable), not 70', async () => {
    const n = await node(1_000);
    const t = await startTestPlatform('pglite', { env: { ETHEREUM_RPC_URL: n.url } });
    try {
      const { data } = await t.client().POST('/partner/v1/platforms/orders', { body: orderRequest('rescanned', { blockchain: 'Ethereum' }) });
      const out: string[] = [];
      const io = { env: {}, stdout: { write: (text: string) => out.push(text) }, stderr: { write: (text: string) => out.push(text) }, platform: t.platform };
      const code = await runCli(['deposits', 'rescan', '--order', data!.uuid], io);
      expect(code).toBe(69);
      expect(out.join('')).toMatch(/^partner-api: the chain's node failed: eth_blockNumber: no answer from the node \(\w+\); run the command again once it answers\n$/);
      expect(out.join('')).not.toContain('secret-key');
    } finally {
      await t.close();
    }
  });
});
