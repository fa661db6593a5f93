// Responses whose JSON the platform already holds as text: an order or an event as the database wrote it
// (orders/order-rows.ts, callbacks/feed.ts), with what only the platform can add (an order's payment link).
// Written around that text as bytes into a buffer used again and sent, not parsed and serialized again.
import type { FastifyReply } from 'fastify';
import type { Utf8Text } from '../db/database.js';
import type { ListPage } from '../db/pages.js';
import type { OrderJsonRow } from '../orders/order-rows.js';
import type { PaymentLinks } from '../payment-page/links.js';

/** What Fastify sends an object as. */
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

/** How an item is written: its size in bytes, exactly, then its bytes. */
export interface ItemWriter<Item> {
  bytes(item: Item): number;
  /** Writes the item into `buffer` at `at`; returns where it ends. */
  write(buffer: Buffer, at: number, item: Item): number;
}

/**
 * One item as the whole response (an order's read): a buffer of its own, from Node's shared pool when
 * small (a read is about 1 KB, and a kept page buffer is 128 KB at least).
 */
export function sendItem<Item>(reply: FastifyReply, item: Item, writer: ItemWriter<Item>): FastifyReply {
  const bytes = writer.bytes(item);
  const buffer = Buffer.allocUnsafe(bytes);
  checkWritten(writer.write(buffer, 0, item), bytes);
  return reply.type(JSON_MEDIA_TYPE).send(buffer);
}

/**
 * A page of a list or of the feed: `{"data":[items],"hasMore":…,"nextCursor":…}`. The page's rows are
 * released here once their bytes are copied into the response, whatever happens: no route holds them.
 */
export function sendPage<Item>(reply: FastifyReply, page: ListPage<Item>, writer: ItemWriter<Item>): FastifyReply {
  try {
    return sendBuffer(reply, ...pageBytes(page, writer));
  } finally {
    page.release();
  }
}

/** A page of items the platform made as objects (the withdrawals), as Fastify sends an object. */
export function pageObject<Item>(page: ListPage<Item>): { data: Item[]; hasMore: boolean; nextCursor?: string } {
  page.release();
  return { data: page.items, hasMore: page.hasMore, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) };
}

/** The page's JSON in a buffer of PAGE_BUFFERS, and its length. */
function pageBytes<Item>({ items, hasMore, nextCursor }: ListPage<Item>, writer: ItemWriter<Item>): [Buffer, number] {
  const end = `],"hasMore":${hasMore}${nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`}}`;
  let bytes = PAGE_START.length + Math.max(0, items.length - 1) + Buffer.byteLength(end);
  for (const item of items) bytes += writer.bytes(item);
  const buffer = PAGE_BUFFERS.take(bytes);
  try {
    let at = buffer.write(PAGE_START, 0, 'latin1');
    for (let index = 0; index < items.length; index++) {
      if (index > 0) buffer[at++] = COMMA;
      at = writer.write(buffer, at, items[index]!);
    }
    at += buffer.write(end, at, 'utf8');
    checkWritten(at, bytes);
  } catch (error) {
    PAGE_BUFFERS.give(buffer);
    throw error;
  }
  return [buffer, bytes];
}

/** A size counted wrong would send a response cut short, or the end of an earlier one: never sent. */
function checkWritten(written: number, bytes: number): void {
  if (written !== bytes) throw new Error(`a response of ${bytes} bytes was written as ${written}`);
}

const PAGE_START = '{"data":[';
const COMMA = 0x2c;
const QUOTE = 0x22;
const CLOSING_BRACE = 0x7d;

/** The bytes of a text, as writeText writes them. */
function textBytes(text: Utf8Text): number {
  return typeof text === 'string' ? Buffer.byteLength(text) : text.length;
}

/** A text into `buffer` at `at`, as it is: its bytes copied, or a string encoded; returns where it ends. */
function writeText(buffer: Buffer, at: number, text: Utf8Text): number {
  if (typeof text === 'string') return at + buffer.write(text, at, 'utf8');
  buffer.set(text, at);
  return at + text.length;
}

/** Items that are each one JSON text, written as they are (the feed's events). */
export const JSON_TEXT_ITEMS: ItemWriter<Utf8Text> = { bytes: textBytes, write: writeText };

/**
 * Orders as their read shows them: the database's JSON of each up to its paymentUrl (ORDER_JSON_SQL),
 * then the link, which only the platform can make (its key never reaches the database), and the brace.
 */
export function orderWriter(links: PaymentLinks): ItemWriter<OrderJsonRow> {
  return {
    bytes: (order) => textBytes(order.order_json) + 1 + links.urlBytes() + 2,
    write(buffer, at, order) {
      at = writeText(buffer, at, order.order_json);
      buffer[at++] = QUOTE;
      at = links.writeUrl(order.uuid, buffer, at);
      buffer[at++] = QUOTE;
      buffer[at++] = CLOSING_BRACE;
      return at;
    },
  };
}

/**
 * A page's bytes, in a buffer that is used again once the response is sent. On PGlite the text of a
 * page is never made a string (Sql.queryBytes): its pieces, each order's 12 columns as strings, their
 * join and node:http's copy of the whole (head + text) were 530 KB of the JavaScript heap a page of
 * 100, and the collector's young generation filled that much sooner (a scavenge pauses the process
 * about 1 ms; on PGlite, where the database runs in the process, every 28th page took one). Written as
 * bytes around the database's bytes, a page allocates about 90 KB (bench/README.md). A fresh Buffer a
 * page was tried before and
 * undone: its bytes, outside the heap, are memory V8 counts against its full collections, and side by
 * side with reads the platform made twice as many (34 against 17 in 40 s on PGlite), so the buffers are
 * kept: the pages in flight at once (one a connection, at most), each back once node:http has handed
 * the response's last bytes to the system ('finish'). A response whose connection closed before that
 * leaves its buffer to the collector: the socket may still hold it.
 */
function sendBuffer(reply: FastifyReply, buffer: Buffer, written: number): FastifyReply {
  // What was written is what is sent: a buffer used again holds an earlier page (another merchant's) beyond it.
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
