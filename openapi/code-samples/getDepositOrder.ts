// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
const { data, error, response } = await partner.GET('/partner/v2/platforms/orders/{uuid}', {
  params: { path: { uuid: process.env.ORDER_UUID! } },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(data.status, data.receivedAmount); // receivedAmount in the smallest unit: 1500000 = 1.5 USDT
