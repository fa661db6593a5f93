// Responses whose JSON the platform already holds as text (an order written from its row, an event's
// frozen body): written around that text and sent, not parsed and serialized again.
import type { FastifyReply } from 'fastify';

/** What Fastify sends an object as. */
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type(JSON_MEDIA_TYPE).send(json);
}

/**
 * A page of a list or of the feed: `writeItem` pushes each item's JSON text, in pieces, onto one array,
 * joined once into one flat string (a template around the joined items made Fastify copy the page to
 * count its bytes), and sent as bytes written into a buffer of PAGE_BUFFERS.
 */
export function sendPage<Item>(
  reply: FastifyReply,
  items: readonly Item[],
  writeItem: (parts: string[], item: Item) => void,
  hasMore: boolean,
  nextCursor: string | undefined,
): FastifyReply {
  const parts = ['{"data":['];
  items.forEach((item, index) => {
    if (index > 0) parts.push(',');
    writeItem(parts, item);
  });
  parts.push(`],"hasMore":${hasMore}`, nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`, '}');
  return sendBytes(reply, parts.join(''));
}

/**
 * The page's text as bytes in a buffer that is used again once the response is sent. As a string,
 * node:http put the response's head before it (head + text) and wrote that out, which made a flat copy
 * of the page in the JavaScript heap: 80-120 KB a page, a quarter of what a page of 100 allocated, and
 * the collector's young generation filled that much sooner (a scavenge pauses the process about 1 ms).
 * A Buffer is written after the head, without a copy. A fresh Buffer a page was tried before and
 * undone: its bytes, outside the heap, are memory V8 counts against its full collections, and side by
 * side with reads the platform made twice as many (34 against 17 in 40 s on PGlite), so the buffers are
 * kept: the pages in flight at once (one a connection, at most), each back once node:http has handed
 * the response's last bytes to the system ('finish'). A response whose connection closed before that
 * leaves its buffer to the collector: the socket may still hold it.
 */
function sendBytes(reply: FastifyReply, text: string): FastifyReply {
  const buffer = PAGE_BUFFERS.take(Buffer.byteLength(text));
  // What was written is what is sent: a buffer used again holds an earlier page (another merchant's) beyond it.
  const written = buffer.write(text, 0, 'utf8');
  reply.raw.once('finish', () => PAGE_BUFFERS.give(buffer));
  return reply.type(JSON_MEDIA_TYPE).send(buffer.subarray(0, written));
}

/**
 * Buffers for pages, reused; each at least MIN_BYTES, and at most MAX_KEPT kept while none is in use.
 * A page takes the smallest that fits; a buffer given back to a full set takes the place of the
 * smallest kept, if larger, so that after a burst of small pages the large ones still find one.
 */
class PageBuffers {
  private static readonly MIN_BYTES = 128 * 1024;
  private static readonly MAX_KEPT = 32;
  private readonly free: Buffer[] = [];

  take(bytes: number): Buffer {
    let best = -1;
    this.free.forEach((buffer, at) => {
      if (buffer.length >= bytes && (best < 0 || buffer.length < this.free[best]!.length)) best = at;
    });
    if (best >= 0) return this.free.splice(best, 1)[0]!;
    // Never from Node's shared pool (allocUnsafe's small buffers): this one is given back whole.
    return Buffer.allocUnsafeSlow(Math.max(bytes, PageBuffers.MIN_BYTES));
  }

  give(buffer: Buffer): void {
    if (this.free.length < PageBuffers.MAX_KEPT) {
      this.free.push(buffer);
      return;
    }
    const smallest = this.free.reduce((least, kept, at) => (kept.length < this.free[least]!.length ? at : least), 0);
    if (this.free[smallest]!.length < buffer.length) this.free[smallest] = buffer;
  }
}

const PAGE_BUFFERS = new PageBuffers();
