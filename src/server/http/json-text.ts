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
 * joined once. Sent as its UTF-8 bytes: a string that large was copied twice more on its way out (its
 * length in bytes, then the response head and body as one string), 80 KB each for a page of 100 orders.
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
  return reply.type(JSON_MEDIA_TYPE).send(Buffer.from(parts.join('')));
}
