// A file the platform serves as it is (the docs page, the contract): read and compressed once, then
// answered from memory with an ETag (304 on If-None-Match) and the best encoding the client accepts.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

interface Encoded {
  etag: string;
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

async function encode(body: Buffer): Promise<Encoded> {
  const [gzipped, brotli] = await Promise.all([
    promisify(gzip)(body, { level: 9 }),
    // Quality 9 compresses the 2.6 MB docs page within about a second, once.
    promisify(brotliCompress)(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  ]);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { etag, identity: body, gzip: gzipped, br: brotli };
}

function preferredEncoding(acceptEncoding: string): 'br' | 'gzip' | 'identity' {
  const accepted = new Set(
    acceptEncoding
      .split(',')
      .map((part) => part.trim().split(';'))
      .filter(([, q]) => !q || !/^\s*q=0(\.0*)?\s*$/.test(q))
      .map(([coding]) => coding!.toLowerCase()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return 'identity';
}

/** A file already compressed (a .tgz) is sent as it is: no content coding over it. */
async function asIs(body: Buffer): Promise<Encoded> {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { etag, identity: body, gzip: body, br: body };
}

/**
 * A handler for one file: `load` runs on the first request (and again while it throws, e.g. not built).
 * Every answer says nosniff; `headers` adds the file's own (a page's Content-Security-Policy).
 * `compressed`: the file is compressed already, and sent without a content coding.
 */
export function staticAsset(contentType: string, load: () => Buffer, headers: Record<string, string> = {}, options: { compressed?: boolean } = {}) {
  let encoded: Promise<Encoded> | undefined;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    encoded ??= (options.compressed ? asIs : encode)(load());
    const asset = await encoded;
    reply.headers({ 'X-Content-Type-Options': 'nosniff', ...headers });
    reply.header('ETag', asset.etag).header('Vary', 'Accept-Encoding').header('Cache-Control', 'no-cache');
    if (request.headers['if-none-match']?.split(',').some((tag) => tag.trim() === asset.etag)) return reply.code(304).send();
    const encoding = options.compressed ? 'identity' : preferredEncoding(String(request.headers['accept-encoding'] ?? ''));
    if (encoding !== 'identity') reply.header('Content-Encoding', encoding);
    return reply.type(contentType).send(asset[encoding]);
  };
}
