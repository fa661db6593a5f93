// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
// One page: the 20 newest orders that are DONE, and the cursor to the next page while hasMore.
const { data, error, response } = await partner.GET('/partner/v1/platforms/orders', {
  params: { query: { status: 'DONE', limit: 20 } },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(data.data.length, data.hasMore, data.nextCursor ?? '-');

// Every page: the client passes each nextCursor back as cursor, with the same filters (a failure throws PartnerApiError).
for await (const order of partner.listDepositOrders({ status: 'DONE', updatedSince: '2026-11-21 00:00:00' })) {
  console.log(order.uuid, order.status, order.receivedAmount); // amounts are integers: 1500000 = 1.5 USDT
}
