// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
const { data, error, response } = await partner.POST('/partner/v1/platforms/events/{eventId}/redeliver', {
  params: { path: { eventId: process.env.EVENT_ID! } },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`); // 409 delivery_in_flight: an attempt is under way
console.log(response.status, data.eventId, data.delivery.state); // 202, due again now under the same webhook-id
