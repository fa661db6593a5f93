// Responses whose JSON the platform already holds as text (an order written from its row, an event's
// frozen body): written around that text and sent, not parsed and serialized again.
import type { FastifyReply } from 'fastify';

/** What Fastify sends an object as. */
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type(JSON_MEDIA_TYPE).send(json);
}

/** A page of a list or of the feed whose items are JSON text. */
export function sendPage(reply: FastifyReply, items: readonly string[], hasMore: boolean, nextCursor: string | undefined): FastifyReply {
  const cursor = nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`;
  return sendJsonText(reply, `{"data":[${items.join(',')}],"hasMore":${hasMore}${cursor}}`);
}
