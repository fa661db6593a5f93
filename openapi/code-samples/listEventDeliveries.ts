// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
const { data, error, response } = await partner.GET('/partner/v1/platforms/events/{eventId}/deliveries', {
  params: { path: { eventId: process.env.EVENT_ID! } },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(data.eventId, data.delivery.state, data.delivery.attempts); // pending, delivered, gone or failed
for (const attempt of data.data) console.log(attempt.statusCode ?? attempt.error, `${attempt.durationMs}ms`, attempt.attemptedAt); // newest first
