// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
// One page of the feed, oldest first. nextCursor is always there, also on an empty page: store it.
const filters = { type: 'order.deposit', limit: 20 } as const;
const { data, error, response } = await partner.GET('/partner/v1/platforms/events', {
  params: { query: filters },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(data.data.length, data.hasMore, data.nextCursor);

// Read on from a stored cursor, with the same filters, page by page up to the latest event (a failure
// throws PartnerApiError; 410 cursor_expired: list your orders to reconcile, then read the feed again without a cursor).
let cursor = data.nextCursor;
for await (const page of partner.listEvents({ ...filters, cursor }).pages()) {
  for (const event of page.data) console.log(event.id, event.type, event.data.uuid, event.data.sequence, event.delivery.state);
  cursor = page.nextCursor; // store it once the page is applied; next time, read on from it
}
console.log(cursor);
