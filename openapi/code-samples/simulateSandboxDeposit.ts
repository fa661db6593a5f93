// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
const { data, error, response } = await partner.POST('/sandbox/v1/orders/{uuid}/deposits', {
  // A retry with the same key credits nothing again (200).
  params: { path: { uuid: process.env.ORDER_UUID! }, header: { 'Idempotency-Key': `deposit-${process.env.ORDER_UUID}-1` } },
  body: { amount: 30000000 },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(data.status, data.receivedAmount);
